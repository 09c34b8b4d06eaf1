import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ByteWriter, GGUF_TYPE, GgufMetadata, encodeHeader, readVocabEntries } from './gguf.js';
import { planPair, writeModel } from './make-model.js';
import { floatToHalf } from './weights.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-gguf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A vocab-only GGUF like llama.cpp's models/ggml-vocab-*.gguf: tokenizer.* entries, no tensors.
function writeFakeVocab(nVocab: number): string {
  const meta = new GgufMetadata().string('general.architecture', 'llama').string('tokenizer.ggml.model', 'llama');
  const tokens = new ByteWriter().str('tokenizer.ggml.tokens').u32(GGUF_TYPE.ARR).u32(GGUF_TYPE.STR).u64(nVocab);
  for (let i = 0; i < nVocab; i++) tokens.str(`tok${i}`);
  meta.raw(tokens.toBuffer()).u32('tokenizer.ggml.bos_token_id', 1).string('tokenizer.chat_template', 'old');
  const path = join(dir, 'vocab.gguf');
  writeFileSync(path, encodeHeader(meta, []));
  return path;
}

// Read tensor infos back from a GGUF header: name -> { offset in file, byte size }.
function readTensorTable(buf: Buffer): Map<string, { start: number; dims: number[] }> {
  let o = 8;
  const u64 = () => {
    const v = Number(buf.readBigUInt64LE(o));
    o += 8;
    return v;
  };
  const nTensors = u64();
  const nKv = u64();
  const str = () => {
    const n = u64();
    const s = buf.toString('utf8', o, o + n);
    o += n;
    return s;
  };
  for (let i = 0; i < nKv; i++) {
    str();
    const t = buf.readUInt32LE(o);
    o += 4;
    if (t === GGUF_TYPE.STR) str();
    else if (t === GGUF_TYPE.ARR) {
      o += 4;
      const n = u64();
      for (let k = 0; k < n; k++) str();
    } else o += 4;
  }
  const raw: { name: string; dims: number[]; offset: number }[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const nd = buf.readUInt32LE(o);
    o += 4;
    const dims = Array.from({ length: nd }, () => u64());
    o += 4;
    raw.push({ name, dims, offset: u64() });
  }
  const dataStart = Math.ceil(o / 32) * 32;
  return new Map(raw.map((t) => [t.name, { start: dataStart + t.offset, dims: t.dims }]));
}

describe('GGUF model generator', () => {
  const vocab = writeFakeVocab(300);
  const pair = planPair({ layers: 3, draftLayers: 1, deadScale: 0, embd: 64, heads: 4, ff: 128, ctx: 256 });
  const target = writeModel(join(dir, 't.gguf'), pair.target, vocab);
  const draft = writeModel(join(dir, 'd.gguf'), pair.draft, vocab);

  it('copies the tokenizer (not its chat template) and counts the vocabulary', () => {
    const v = readVocabEntries(readFileSync(vocab));
    expect(v.nVocab).toBe(300);
    expect(v.entries).toHaveLength(3);
    expect(readVocabEntries(readFileSync(target.path)).nVocab).toBe(300);
  });

  it('writes an aligned llama layout whose draft layer 0 is byte-identical to the target layer 0', () => {
    const t = readFileSync(target.path),
      d = readFileSync(draft.path);
    const tt = readTensorTable(t),
      dt = readTensorTable(d);
    expect(tt.size).toBe(3 + 3 * 9);
    expect(dt.size).toBe(3 + 9);
    expect(tt.get('blk.0.ffn_gate.weight')?.dims).toEqual([64, 128]);
    for (const name of ['token_embd.weight', 'output.weight', 'blk.0.attn_q.weight', 'blk.0.ffn_down.weight']) {
      const size = name.startsWith('blk.0.attn')
        ? 64 * 64 * 2
        : name === 'blk.0.ffn_down.weight'
          ? 64 * 128 * 2
          : 300 * 64 * 2;
      const a = t.subarray(tt.get(name)!.start, tt.get(name)!.start + size),
        b = d.subarray(dt.get(name)!.start, dt.get(name)!.start + size);
      expect(a.equals(b), name).toBe(true);
    }
    const dead = tt.get('blk.2.attn_output.weight')!.start;
    expect(t.subarray(dead, dead + 64 * 64 * 2).every((x) => x === 0)).toBe(true);
    expect(t.length).toBe(target.bytes);
  });

  it('encodes halves like IEEE 754 binary16', () => {
    expect([1, -2, 0.5, 65504, 1e-8, 2 ** -14, 2 ** -24, 1e6].map(floatToHalf)).toEqual([
      0x3c00, 0xc000, 0x3800, 0x7bff, 0, 0x0400, 1, 0x7c00,
    ]);
  });
});
