// Deterministic tensor contents: every tensor is a pure function of (seed, tensor name), so a 1-layer draft is
// byte-identical to the first layer of a deeper target built with the same seed.
import { GGML_TYPE } from './gguf.js';

/** How one tensor is filled. */
export interface TensorFill {
  name: string;
  rows: number;
  cols: number;
  type: number;
  /** "ones" for norm weights, "random" for matrices. */
  kind: 'ones' | 'random';
  /** Multiplies the random values (0 = all zeros: a layer that adds nothing to the residual). */
  scale: number;
}

/** Token-ban and bias constants (see fixBannedTokens). */
export interface BanPlan {
  /** Token ids [first, last] that must never be sampled (control and byte-fallback tokens). */
  banned: [number, number];
}

// Residual channel 0 carries this constant, so a negative weight there can make a logit always lose.
const BIAS_CHANNEL_VALUE = 32;
// Output weight on channel 0 for banned ids: -4 * 32 = -128 below every other logit's channel-0 term (which is 0).
const BAN_WEIGHT = -4;

// FNV-1a of a string: the per-tensor seed.
function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

// A small, fast, seedable generator (xorshift128+ folded to 32 bits) yielding floats in [0, 1).
function makeRandom(seed: number): () => number {
  let a = seed ^ 0x9e3779b9,
    b = Math.imul(seed, 0x85ebca6b) ^ 0xc2b2ae35,
    c = 0x27d4eb2f,
    d = (seed >>> 3) | 1;
  return () => {
    const t = a ^ (a << 11);
    a = b;
    b = c;
    c = d;
    d = (d ^ (d >>> 19) ^ t ^ (t >>> 8)) >>> 0;
    return d / 4294967296;
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// IEEE 754 binary16 bits of a float (round to nearest, subnormals kept, overflow to infinity).
export function floatToHalf(v: number): number {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 112;
  const mant = x & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    const m = (mant | 0x800000) >>> (1 - exp);
    return sign | ((m + 0x1000) >>> 13);
  }
  if (exp >= 31) return sign | 0x7c00;
  return (sign | (exp << 10) | (mant >>> 13)) + ((mant >>> 12) & 1);
}

// Write one element of a tensor buffer in its type.
function setElement(buf: Buffer, type: number, index: number, value: number): void {
  if (type === GGML_TYPE.F16) buf.writeUInt16LE(floatToHalf(value), index * 2);
  else buf.writeFloatLE(value, index * 4);
}

// Generate a tensor's bytes: ones, or uniform values with std 1/sqrt(fan_in) (embeddings: std 1).
export function fillTensor(t: TensorFill, seed: number, ban: BanPlan): Buffer {
  const n = t.rows * t.cols;
  const f16 = t.type === GGML_TYPE.F16;
  const buf = Buffer.alloc(n * (f16 ? 2 : 4));
  const out = f16 ? new Uint16Array(buf.buffer, buf.byteOffset, n) : new Float32Array(buf.buffer, buf.byteOffset, n);
  const put = f16
    ? (i: number, v: number) => {
        out[i] = floatToHalf(v);
      }
    : (i: number, v: number) => {
        out[i] = v;
      };
  if (t.kind === 'ones') {
    for (let i = 0; i < n; i++) put(i, 1);
    return buf;
  }
  if (t.scale !== 0) {
    const std = t.name === 'token_embd.weight' ? 1 : 1 / Math.sqrt(t.cols);
    const half = std * Math.sqrt(3) * t.scale;
    const rand = makeRandom(hashName(`${seed}/${t.name}`));
    for (let i = 0; i < n; i++) put(i, (rand() * 2 - 1) * half);
  }
  fixBannedTokens(buf, t, ban);
  return buf;
}

// Make banned ids unreachable: channel 0 of every embedding is a large constant no layer writes to, and
// only banned output rows read it (negatively), so their logits are always far below the rest.
function fixBannedTokens(buf: Buffer, t: TensorFill, ban: BanPlan): void {
  if (t.name === 'token_embd.weight') {
    for (let r = 0; r < t.rows; r++) setElement(buf, t.type, r * t.cols, BIAS_CHANNEL_VALUE);
  } else if (t.name === 'output.weight') {
    for (let r = 0; r < t.rows; r++) {
      const banned = r >= ban.banned[0] && r <= ban.banned[1];
      if (banned) for (let c = 1; c < t.cols; c++) setElement(buf, t.type, r * t.cols + c, 0);
      setElement(buf, t.type, r * t.cols, banned ? BAN_WEIGHT : 0);
    }
  } else if (/attn_output|ffn_down/.test(t.name)) {
    for (let c = 0; c < t.cols; c++) setElement(buf, t.type, c, 0);
  }
}
