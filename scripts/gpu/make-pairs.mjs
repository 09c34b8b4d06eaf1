#!/usr/bin/env node
// Write the GPU campaign's target/draft pairs with spectune's own GGUF writer (src/llamacpp/make-model.ts, built
// into dist/): a target of 7B-class width (embd 4096, 32 heads, ff 11008, f16) so that decoding is memory-bound on
// a GPU, and a one-layer draft that is byte-identical to the target's first layer.
//   target-<L>L-good.gguf  the other layers' outputs zeroed: the draft predicts the target (high acceptance)
//   target-<L>L-poor.gguf  the other layers scaled by --poor-scale: low acceptance
//   draft-1L.gguf          the shared first layer
// Usage: node scripts/gpu/make-pairs.mjs --out DIR --vocab VOCAB.gguf [--layers 16] [--poor-scale 0.05]
//        [--embd 4096 --heads 32 --ff 11008 --ctx 8192] [--only good|poor|draft] (existing files are kept)
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { planPair, writeModel } = await import(join(root, 'dist', 'llamacpp', 'make-model.js'));
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const outDir = arg('out', '/tmp/spectune-gpu/models');
const vocab = arg('vocab', '/var/lib/spectune-llama/vocab/ggml-vocab-llama-spm.gguf');
const layers = Number(arg('layers', '16'));
const shape = {
  embd: Number(arg('embd', '4096')),
  heads: Number(arg('heads', '32')),
  ff: Number(arg('ff', '11008')),
  ctx: Number(arg('ctx', '8192')),
};
const only = arg('only', null);
if (!existsSync(vocab)) {
  console.error(`make-pairs: vocab GGUF not found: ${vocab}`);
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const good = planPair({ layers, draftLayers: 1, deadScale: 0, ...shape });
const poor = planPair({ layers, draftLayers: 1, deadScale: Number(arg('poor-scale', '0.05')), ...shape });
const files = [
  ['good', `target-${layers}L-good.gguf`, good.target],
  ['poor', `target-${layers}L-poor.gguf`, poor.target],
  ['draft', 'draft-1L.gguf', good.draft],
];
for (const [kind, file, spec] of files) {
  if (only && only !== kind) continue;
  const path = join(outDir, file);
  if (existsSync(path)) {
    console.log(JSON.stringify({ path, cached: true }));
    continue;
  }
  const t0 = Date.now();
  const stats = writeModel(`${path}.part`, spec, vocab);
  (await import('node:fs')).renameSync(`${path}.part`, path);
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
