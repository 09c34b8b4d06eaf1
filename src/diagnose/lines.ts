// Turn arbitrary chunks (any boundary, CRLF, invalid UTF-8) into whole lines without ever dropping one.
import { isAscii } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';

/**
 * A line longer than this is emitted in pieces: journald itself cuts at 48K (LineMax=), so anything bigger is
 * a pasted blob; 4M characters keeps memory bounded while leaving a 1 MB line whole.
 */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** Receives each complete line (without its end-of-line), in order. */
export type LineSink = (line: string) => void;

/** Incremental splitter: push chunks, get lines; `end()` flushes the last unterminated line. */
export interface LineSplitter {
  push(chunk: Buffer | string): void;
  end(): void;
}

// Drop one trailing carriage return (CRLF input and vLLM's "\r\n" continuation joins).
function stripCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

// Create a splitter; the decoder replaces invalid UTF-8 with U+FFFD and keeps multi-byte characters split across chunks.
export function createLineSplitter(sink: LineSink, maxLineChars = MAX_LINE_CHARS): LineSplitter {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let pending = false;
  const feed = (text: string): void => {
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl !== -1 && carry) {
      sink(stripCr(carry + text.slice(0, nl)));
      carry = '';
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    while (nl !== -1) {
      sink(stripCr(text.slice(start, nl)));
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    carry += text.slice(start);
    while (carry.length > maxLineChars) {
      sink(carry.slice(0, maxLineChars));
      carry = carry.slice(maxLineChars);
    }
  };
  return {
    push(chunk) {
      if (typeof chunk === 'string') return feed(chunk);
      // Pure ASCII decodes byte for byte (much faster than UTF-8 decoding), unless the decoder holds a partial character.
      if (!pending && isAscii(chunk)) return feed(chunk.toString('latin1'));
      feed(decoder.write(chunk));
      pending = chunk.length > 0 && chunk[chunk.length - 1] >= 0x80;
    },
    end() {
      feed(decoder.end());
      if (carry) sink(stripCr(carry));
      carry = '';
    },
  };
}
