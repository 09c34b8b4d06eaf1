// The only impure part of config: read a YAML/JSON file and validate it, failing with one coded line.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { ToolError } from '../errors.js';
import { locateMessages } from './locate.js';
import type { RuleContext } from './rules.js';
import type { SpectuneConfig } from './types.js';
import { validateConfig } from './validate.js';

// The one-line error shows this many problems; the rest are counted.
const ERRORS_SHOWN = 3;

// Read and validate a config file; warnings are returned so the CLI can print them.
export async function loadConfig(
  path: string,
  ctx: RuleContext = {},
): Promise<{ config: SpectuneConfig; warnings: string[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'E_FILE_NOT_FOUND' : 'E_CONFIG_INVALID';
    throw new ToolError(code, `cannot read config ${path}: ${(e as Error).message}`, {
      hint: 'pass -c spectune.yaml (see examples/spectune.yaml)',
      cause: e,
    });
  }
  let json: unknown;
  try {
    // logLevel error: YAML warnings (an unknown tag) would print as a node process warning; the schema judges the value.
    json = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text, { logLevel: 'error' });
  } catch (e) {
    throw new ToolError(
      'E_CONFIG_INVALID',
      `${syntaxWhere(path, e)}: not valid ${/\.json$/i.test(path) ? 'JSON' : 'YAML'}: ${(e as Error).message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
      { cause: e },
    );
  }
  const result = validateConfig(json, ctx);
  if (!result.ok) {
    const more = result.errors.length > ERRORS_SHOWN ? ` (+${result.errors.length - ERRORS_SHOWN} more)` : '';
    throw new ToolError(
      'E_CONFIG_INVALID',
      `${locateMessages(path, text, result.errors.slice(0, ERRORS_SHOWN)).join('; ')}${more}`,
      {
        hint: 'see schema/spectune.schema.json and examples/spectune.yaml',
      },
    );
  }
  return { config: result.config, warnings: result.warnings };
}

// "spectune.yaml:39:3" for a YAML syntax error the parser placed, else the file alone.
function syntaxWhere(path: string, e: unknown): string {
  const pos = (e as { linePos?: { line: number; col: number }[] }).linePos?.[0];
  return pos ? `${path}:${pos.line}:${pos.col}` : path;
}
