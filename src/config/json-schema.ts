// The editor JSON Schema, generated from the same zod schema that validates (schema/spectune.schema.json).
import { z } from 'zod';
import { configSchema } from './schema.js';

/** Where the generated schema is published (editors resolve `$schema` to it). */
export const SCHEMA_ID = 'https://github.com/spectune/spectune/raw/main/schema/spectune.schema.json';

// Build the JSON Schema of the input side (what users write: defaults optional).
export function buildJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: SCHEMA_ID,
    title: 'spectune.yaml',
    description: 'Configuration of a spectune tuning campaign',
  };
}
