import { describe, expect, it } from 'vitest';
import { SseScanner } from './sse.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const chat = (content: string | null): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

// A stream with every kind of frame: role-only, tokens (one with an escaped quote and a fake key inside the
// text), a reasoning token, a comment, the usage chunk and [DONE], with CRLF on one frame.
const STREAM = [
  chat(''),
  chat('Hello'),
  ': keep-alive comment\n\n',
  chat('say \\"content\\":\\"x'),
  `data: ${JSON.stringify({ choices: [{ delta: { reasoning_content: 'hmm' } }] })}\r\n\r\n`,
  chat(null),
  chat(' world'),
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 9, completion_tokens_details: null } })}\n\n`,
  'data: [DONE]\n\n',
].join('');

function feed(chunks: Uint8Array[]): { s: SseScanner; frames: number[] } {
  const s = new SseScanner();
  return { s, frames: chunks.map((c) => s.push(c)) };
}

describe('SseScanner', () => {
  it('classifies a whole stream in one chunk', () => {
    const { s, frames } = feed([enc(STREAM)]);
    expect(frames).toEqual([4]);
    expect(s).toMatchObject({ tokenFrames: 4, completionTokens: 9, promptTokens: 12, done: true, errorMessage: null });
  });

  it('gives the same answer when split at every byte offset', () => {
    const all = enc(STREAM);
    for (let i = 0; i <= all.length; i++) {
      const { s, frames } = feed([all.subarray(0, i), all.subarray(i)]);
      expect(frames[0] + frames[1], `split at ${i}`).toBe(4);
      expect(s.completionTokens, `split at ${i}`).toBe(9);
      expect(s.done).toBe(true);
    }
  });

  it('gives the same answer fed one byte at a time, counting each token when its line completes', () => {
    const all = enc(STREAM);
    const { s, frames } = feed(Array.from(all, (_b, i) => all.subarray(i, i + 1)));
    expect(frames.reduce((a, b) => a + b, 0)).toBe(4);
    const firstTokenAt = frames.indexOf(1);
    expect(new TextDecoder().decode(all.subarray(0, firstTokenAt + 1)).endsWith('"Hello"}}]}\n')).toBe(true);
    expect(s).toMatchObject({ completionTokens: 9, promptTokens: 12, done: true });
  });

  it('reads completions text and SGLang native frames with spaces after colons', () => {
    const s = new SseScanner();
    expect(s.push(enc(`data: ${JSON.stringify({ choices: [{ text: 'a' }] })}\n\n`))).toBe(1);
    expect(s.push(enc('data: {"text": "so far", "meta_info": {"prompt_tokens": 5, "completion_tokens": 3}}\n\n'))).toBe(
      1,
    );
    expect(s.push(enc('data: {"text": "", "meta_info": {"completion_tokens": 3}}\n\n'))).toBe(0);
    expect(s).toMatchObject({ completionTokens: 3, promptTokens: 5, done: false });
  });

  it('counts several frames that arrive in one network read', () => {
    const s = new SseScanner();
    expect(s.push(enc(chat('a') + chat('b') + chat('c')))).toBe(3);
  });

  it('keeps the message of an error frame and ignores "error": null', () => {
    const s = new SseScanner();
    s.push(enc('data: {"error": null, "choices": [{"delta": {"content": "x"}}]}\n\n'));
    expect(s.errorMessage).toBeNull();
    s.push(enc('data: {"error": {"message": "KV cache full", "code": 503}}\n\n'));
    expect(s.errorMessage).toContain('KV cache full');
  });

  it('ignores non-data fields and lines that only look like tokens', () => {
    const s = new SseScanner();
    expect(s.push(enc('event: message\nid: 3\nretry: 10\n: "content":"x"\n\n'))).toBe(0);
    expect(s.push(enc('data: {"choices":[{"delta":{"content":null},"logprobs":{"content":[]}}]}\n\n'))).toBe(0);
  });
});
