import { describe, expect, it } from 'vitest';
import { Http1ResponseParser } from './http1-parser.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function collect() {
  const got = { status: 0, headers: new Map<string, string>(), body: '', ends: 0 };
  const parser = new Http1ResponseParser({
    onHead: (status, headers) => {
      got.status = status;
      got.headers = headers;
    },
    onBody: (buf, s, e) => {
      got.body += new TextDecoder().decode(buf.subarray(s, e));
    },
    onEnd: () => {
      got.ends++;
    },
  });
  return { parser, got };
}

const CHUNKED =
  'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
  '8\r\ndata: a\n\r\n' +
  '1a;ext=1\r\n\ndata: {"x":"bcdefghijk"}\n\r\n' +
  '0\r\nX-Trailer: 1\r\n\r\n';
const CHUNKED_BODY = 'data: a\n\ndata: {"x":"bcdefghijk"}\n';

describe('Http1ResponseParser', () => {
  it('decodes a chunked response split at every byte offset, in a reused oversized buffer', () => {
    const all = enc(CHUNKED);
    for (let i = 0; i <= all.length; i++) {
      const { parser, got } = collect();
      // Stale bytes after `len` must never be read: the transport reuses one read buffer.
      const scratch = new Uint8Array(all.length + 16).fill(0x0a);
      scratch.set(all.subarray(0, i));
      parser.push(scratch, i);
      scratch.fill(0x0a);
      scratch.set(all.subarray(i));
      parser.push(scratch, all.length - i);
      expect(got.body, `split at ${i}`).toBe(CHUNKED_BODY);
      expect(got.ends, `split at ${i}`).toBe(1);
      expect(got.status).toBe(200);
      expect(parser.done).toBe(true);
    }
  });

  it('reads content-length bodies and error statuses, and honours Connection: close', () => {
    const { parser, got } = collect();
    parser.push(enc('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops!'));
    expect(got).toMatchObject({ status: 500, body: 'oops!', ends: 1 });
    expect(parser.closeAfter).toBe(true);
  });

  it('ends a body without length at close, and parses the next response after reset', () => {
    const { parser, got } = collect();
    parser.push(enc('HTTP/1.1 200 OK\r\n\r\npartial'));
    expect(got.ends).toBe(0);
    parser.closed();
    expect(got).toMatchObject({ body: 'partial', ends: 1 });
    parser.reset();
    parser.push(enc('HTTP/1.1 204 No Content\r\n\r\n'));
    expect(got).toMatchObject({ status: 204, ends: 2 });
  });

  it('flags garbage instead of guessing', () => {
    const { parser } = collect();
    parser.push(enc('SSH-2.0-OpenSSH\r\n\r\n'));
    expect(parser.error).toMatch(/not an HTTP\/1.1 response/);
  });

  it('refuses a Content-Length that is not a non-negative integer (fuzz: "-5" gave the body range [71, 66))', () => {
    for (const bad of ['-5', 'abc', '1e3', '', '99999999999999999999', '5, 6']) {
      const { parser, got } = collect();
      parser.push(enc(`HTTP/1.1 200 OK\r\nContent-Length: ${bad}\r\n\r\ndata: x\n\n`));
      expect(parser.error, bad).toMatch(/bad content-length/);
      expect(got.body, bad).toBe('');
      expect(parser.done).toBe(false);
    }
  });
});
