#!/usr/bin/env node
// Write the small GGUF target/draft pairs spectune's real llama-server tests use (run `npm run build` first):
//   target-8L.gguf       8 layers, dead layers zeroed: the draft predicts it perfectly (~100% acceptance)
//   target-8L-poor.gguf  8 layers, dead layers scaled 0.1: ~15-20% acceptance
//   draft-1L.gguf        the shared first layer (byte-identical to both targets' layer 0)
// Existing files are kept unless --force. Usage: node scripts/llamacpp/make-models.mjs [--out DIR] [--vocab F] [--force]
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { planPair, writeModel } = await import(join(root, 'dist', 'llamacpp', 'make-model.js'));
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const outDir = arg('out', '/var/lib/spectune-llama/models');
const vocab = arg('vocab', '/var/lib/spectune-llama/vocab/ggml-vocab-llama-spm.gguf');
const force = process.argv.includes('--force');
const layers = Number(arg('layers', '8'));

if (!existsSync(vocab)) {
  console.error(`vocab GGUF not found: ${vocab} (run scripts/llamacpp/build-llama-server.sh)`);
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const good = planPair({ layers, draftLayers: 1, deadScale: 0 });
const poor = planPair({ layers, draftLayers: 1, deadScale: 0.1 });
const files = [
  [`target-${layers}L.gguf`, good.target],
  [`target-${layers}L-poor.gguf`, poor.target],
  ['draft-1L.gguf', good.draft],
];
for (const [file, spec] of files) {
  const path = join(outDir, file);
  if (existsSync(path) && !force) {
    console.log(JSON.stringify({ path, cached: true }));
    continue;
  }
  const t0 = Date.now();
  const stats = writeModel(path, spec, vocab);
  console.log(
    JSON.stringify({
      path,
      bytes: stats.bytes,
      params: stats.params,
      layers: spec.layers,
      deadScale: spec.deadScale,
      ms: Date.now() - t0,
    }),
  );
}
