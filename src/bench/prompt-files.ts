// File side of the prompt sets: the shipped passages and users' JSONL / ShareGPT files.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ToolError } from '../errors.js';
import type { BenchPrompt } from './api.js';
import { parsePromptFile } from './prompts.js';

// prompts/ sits at the package root, two levels above both src/bench and dist/bench.
const SHIPPED_CORPUS = new URL('../../prompts/passages.txt', import.meta.url);

// Read the shipped passages the default prompts are cut from.
export async function loadShippedCorpus(): Promise<string> {
  try {
    return await readFile(fileURLToPath(SHIPPED_CORPUS), 'utf8');
  } catch (e) {
    throw new ToolError('E_FILE_NOT_FOUND', `shipped prompt set missing: ${fileURLToPath(SHIPPED_CORPUS)}`, {
      hint: 'reinstall spectune, or pass --prompts FILE',
      cause: e,
    });
  }
}

// Read and parse a user's prompt file.
export async function loadPromptFile(path: string): Promise<BenchPrompt[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ToolError(
      'E_FILE_NOT_FOUND',
      `cannot read prompt file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      { hint: 'check --prompts', cause: e },
    );
  }
  return parsePromptFile(text, path);
}
