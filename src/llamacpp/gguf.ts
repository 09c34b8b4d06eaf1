// GGUF v3 encoding (github.com/ggml-org/ggml docs/gguf.md): metadata key/values, tensor infos, aligned data.
// Just what spectune's model generator needs: write scalars/strings, copy tokenizer entries from a vocab file.

/** GGUF metadata value types. */
export const GGUF_TYPE = {
  U8: 0,
  I8: 1,
  U16: 2,
  I16: 3,
  U32: 4,
  I32: 5,
  F32: 6,
  BOOL: 7,
  STR: 8,
  ARR: 9,
  U64: 10,
  I64: 11,
  F64: 12,
} as const;
// Byte size of each fixed-size metadata type.
const FIXED_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
/** ggml tensor types used here. */
export const GGML_TYPE = { F32: 0, F16: 1 } as const;
/** Data alignment (general.alignment); llama.cpp's default. */
export const GGUF_ALIGNMENT = 32;
const GGUF_MAGIC = 'GGUF';
const GGUF_VERSION = 3;

/** A growable little-endian byte sink. */
export class ByteWriter {
  private parts: Buffer[] = [];
  length = 0;
  // Append raw bytes.
  bytes(b: Buffer): this {
    this.parts.push(b);
    this.length += b.length;
    return this;
  }
  // Append a u32.
  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    return this.bytes(b);
  }
  // Append a u64.
  u64(v: number): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    return this.bytes(b);
  }
  // Append an f32.
  f32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    return this.bytes(b);
  }
  // Append a GGUF string (u64 length + UTF-8 bytes).
  str(s: string): this {
    const b = Buffer.from(s, 'utf8');
    return this.u64(b.length).bytes(b);
  }
  // Everything written so far.
  toBuffer(): Buffer {
    return Buffer.concat(this.parts, this.length);
  }
}

/** Metadata being assembled: encoded entries and their count. */
export class GgufMetadata {
  readonly w = new ByteWriter();
  count = 0;
  // Add a string entry.
  string(key: string, v: string): this {
    this.w.str(key).u32(GGUF_TYPE.STR).str(v);
    this.count++;
    return this;
  }
  // Add a u32 entry.
  u32(key: string, v: number): this {
    this.w.str(key).u32(GGUF_TYPE.U32).u32(v);
    this.count++;
    return this;
  }
  // Add an f32 entry.
  f32(key: string, v: number): this {
    this.w.str(key).u32(GGUF_TYPE.F32).f32(v);
    this.count++;
    return this;
  }
  // Add an already-encoded entry (copied from another file).
  raw(entry: Buffer): this {
    this.w.bytes(entry);
    this.count++;
    return this;
  }
}

/** One tensor's header information; shape is [rows, cols] (GGUF stores ne = [cols, rows]). */
export interface TensorInfo {
  name: string;
  rows: number;
  cols: number;
  type: number;
  offset: number;
  nbytes: number;
}

/** Tokenizer entries of a vocab-only GGUF, ready to copy, and the vocabulary size. */
export interface VocabEntries {
  entries: Buffer[];
  nVocab: number;
}

// Walk a GGUF file's metadata and keep the raw tokenizer.* entries (except the chat template).
export function readVocabEntries(buf: Buffer): VocabEntries {
  if (buf.toString('latin1', 0, 4) !== GGUF_MAGIC) throw new Error('not a GGUF file');
  if (buf.readUInt32LE(4) !== GGUF_VERSION) throw new Error(`unsupported GGUF version ${buf.readUInt32LE(4)}`);
  const nKv = Number(buf.readBigUInt64LE(16));
  let o = 24;
  const u64 = () => {
    const v = Number(buf.readBigUInt64LE(o));
    o += 8;
    return v;
  };
  const skipValue = (type: number) => {
    if (type === GGUF_TYPE.STR) {
      const len = u64();
      o += len;
      return;
    }
    if (type !== GGUF_TYPE.ARR) {
      o += FIXED_SIZE[type];
      return;
    }
    const et = buf.readUInt32LE(o);
    o += 4;
    const n = u64();
    if (et === GGUF_TYPE.STR)
      for (let i = 0; i < n; i++) {
        const len = u64();
        o += len;
      }
    else o += n * FIXED_SIZE[et];
  };
  const out: VocabEntries = { entries: [], nVocab: 0 };
  for (let i = 0; i < nKv; i++) {
    const start = o;
    const keyLen = u64();
    const key = buf.toString('utf8', o, o + keyLen);
    o += keyLen;
    const type = buf.readUInt32LE(o);
    o += 4;
    if (key === 'tokenizer.ggml.tokens') out.nVocab = Number(buf.readBigUInt64LE(o + 4));
    skipValue(type);
    if (key.startsWith('tokenizer.') && key !== 'tokenizer.chat_template') out.entries.push(buf.subarray(start, o));
  }
  if (!out.nVocab) throw new Error('no tokenizer.ggml.tokens in the vocab file');
  return out;
}

// Round up to the data alignment.
export function alignUp(n: number): number {
  return Math.ceil(n / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
}

// Lay tensors out in the data section (aligned offsets) and return the total data size.
export function layoutTensors(tensors: TensorInfo[]): number {
  let off = 0;
  for (const t of tensors) {
    t.offset = off;
    off = alignUp(off + t.nbytes);
  }
  return off;
}

// Encode the file header: magic, counts, metadata, tensor infos, padded to the alignment.
export function encodeHeader(meta: GgufMetadata, tensors: TensorInfo[]): Buffer {
  const w = new ByteWriter()
    .bytes(Buffer.from(GGUF_MAGIC, 'latin1'))
    .u32(GGUF_VERSION)
    .u64(tensors.length)
    .u64(meta.count);
  w.bytes(meta.w.toBuffer());
  for (const t of tensors) {
    w.str(t.name);
    if (t.rows === 1) w.u32(1).u64(t.cols);
    else w.u32(2).u64(t.cols).u64(t.rows);
    w.u32(t.type).u64(t.offset);
  }
  const header = w.toBuffer();
  return Buffer.concat([header, Buffer.alloc(alignUp(header.length) - header.length)]);
}
