// Pure prompt sets: the shipped set cut to a controlled input length, and users' JSONL / ShareGPT files.
import { ToolError } from '../errors.js';
import type { BenchPrompt } from './api.js';
import { createRandom } from '../random.js';

// English prose averages about 1.3 tokens per word with Llama/Qwen-style BPE tokenizers; the server's usage
// reports the exact count, so this only needs to land near the requested length.
const TOKENS_PER_WORD = 1.3;
// The instruction after the context: open-ended, so a fixed output length reads as natural text.
const TASK = 'Summarize the notes above, then continue writing about the same subjects in detail.';
// Tokens the wrapper text (unique tag and task) takes, subtracted from the requested input length.
const WRAPPER_TOKENS = 24;

// Re-exported from the shared PRNG so existing callers keep their name.
export { createRandom } from '../random.js';

// An endless source of prompts of about `inputTokens` tokens cut from the shipped passages. Each starts with a
// unique tag and at a random word, so the engine's prefix cache cannot turn the benchmark into a cache benchmark.
export function createShippedPromptSource(corpus: string, inputTokens: number, seed = 1): () => BenchPrompt {
  const words = corpus.split(/\s+/).filter(Boolean);
  if (words.length === 0)
    throw new ToolError('E_INPUT_UNUSABLE', 'the shipped prompt set is empty', { hint: 'reinstall spectune' });
  const want = Math.max(1, Math.round(Math.max(0, inputTokens - WRAPPER_TOKENS) / TOKENS_PER_WORD));
  // The corpus repeated until any start word has `want` words after it; each prompt is then one substring.
  const copies = Math.ceil(want / words.length) + 1;
  const text = Array.from({ length: copies }, () => words.join(' ')).join(' ');
  const starts: number[] = [];
  for (let i = 0, at = 0; i <= words.length * copies; i++) {
    starts.push(at);
    at += (words[i % words.length]?.length ?? 0) + 1;
  }
  const rand = createRandom(seed);
  let i = 0;
  return () => {
    const w = Math.floor(rand() * words.length);
    const body = text.slice(starts[w], starts[w + want] - 1);
    const tag = Math.floor(rand() * 1e9).toString(36);
    return { text: `Notes ${tag} (${i++}):\n${body}\n\n${TASK}` };
  };
}

// Cycle through a user's prompts in file order.
export function createListPromptSource(prompts: BenchPrompt[]): () => BenchPrompt {
  let i = 0;
  return () => prompts[i++ % prompts.length];
}

// Read a user's prompt file: JSONL ({"prompt"|"text"|"messages"|"conversations"} per line) or a ShareGPT JSON array.
export function parsePromptFile(text: string, name: string): BenchPrompt[] {
  const trimmed = text.trim();
  const records: unknown[] = trimmed.startsWith('[') ? parseJsonArray(trimmed, name) : parseJsonLines(trimmed, name);
  const prompts = records.map(toPrompt).filter((p): p is BenchPrompt => p !== null);
  if (prompts.length === 0) {
    throw new ToolError('E_INPUT_UNUSABLE', `${name}: no prompts found`, {
      hint: 'one JSON object per line with "prompt", "text" or "messages", or a ShareGPT array with "conversations"',
    });
  }
  return prompts;
}

function parseJsonArray(text: string, name: string): unknown[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v : [];
  } catch (e) {
    throw new ToolError('E_INPUT_UNUSABLE', `${name}: not valid JSON: ${(e as Error).message}`, {
      hint: 'a JSON array or JSON lines',
    });
  }
}

function parseJsonLines(text: string, name: string): unknown[] {
  const out: unknown[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line));
    } catch {
      throw new ToolError('E_INPUT_UNUSABLE', `${name}:${i + 1}: not a JSON object`, {
        hint: 'one JSON object per line',
      });
    }
  });
  return out;
}

type Msg = { role: string; content: string };

function toPrompt(rec: unknown): BenchPrompt | null {
  if (typeof rec === 'string') return rec ? { text: rec } : null;
  if (!rec || typeof rec !== 'object') return null;
  const r = rec as Record<string, unknown>;
  if (typeof r.prompt === 'string') return { text: r.prompt };
  if (typeof r.text === 'string') return { text: r.text };
  if (Array.isArray(r.messages)) return fromMessages(r.messages as unknown[]);
  if (Array.isArray(r.conversations)) return fromShareGpt(r.conversations as unknown[]);
  return null;
}

function fromMessages(list: unknown[]): BenchPrompt | null {
  const msgs = list.filter(
    (m): m is Msg => !!m && typeof (m as Msg).role === 'string' && typeof (m as Msg).content === 'string',
  );
  // Keep the conversation up to the last user turn: that is what the model answers.
  let last = -1;
  msgs.forEach((m, i) => {
    if (m.role === 'user') last = i;
  });
  if (last < 0) return null;
  const kept = msgs.slice(0, last + 1);
  return { text: kept.map((m) => m.content).join('\n'), messages: kept };
}

function fromShareGpt(turns: unknown[]): BenchPrompt | null {
  const first = turns.find((t) => {
    const from = (t as { from?: unknown })?.from;
    return from === 'human' || from === 'user';
  }) as { value?: unknown } | undefined;
  return typeof first?.value === 'string' && first.value ? { text: first.value } : null;
}
