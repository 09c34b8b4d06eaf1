import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { buildJsonSchema } from './json-schema.js';

const file = fileURLToPath(new URL('../../schema/spectune.schema.json', import.meta.url));

// SPECTUNE_UPDATE_SCHEMA=1 npx vitest run src/config/json-schema.test.ts regenerates the committed file.
it('schema/spectune.schema.json is generated from the zod schema and up to date', () => {
  const text = `${JSON.stringify(buildJsonSchema(), null, 2)}\n`;
  if (process.env.SPECTUNE_UPDATE_SCHEMA === '1') writeFileSync(file, text);
  expect(readFileSync(file, 'utf8')).toBe(text);
});

it('documents fields and requires target and space', () => {
  const s = buildJsonSchema() as {
    required: string[];
    properties: Record<string, { description?: string; properties?: Record<string, { description?: string }> }>;
  };
  expect(s.required).toEqual(['target', 'space']);
  expect(s.properties.target.properties?.engine.description).toBe('inference engine');
  expect(s.properties.space.description).toMatch(/setting key/);
});
