// Reassemble Python tracebacks from journal lines (blank lines dropped, SGLang prefixes only the first line,
// vLLM every line, several processes interleaved) into chains whose first block is the root cause.
import { getEngine } from '../engines/registry.js';
import { detach } from './detach.js';
import type { AppLine } from './prefix.js';
import type { TraceFrame } from './types.js';

/** One exception block: frames and the terminal `Type: message` line. */
export interface TracebackBlock {
  type: string;
  message: string;
  frames: TraceFrame[];
  headerLine: number;
  terminalLine: number | null;
}

/** Chained blocks in print order: blocks[0] is the original (root) exception, the last one propagated. */
export interface TracebackChain {
  stream: string;
  blocks: TracebackBlock[];
  firstLine: number;
  lastLine: number;
  /** App text before `Traceback` on the header line (e.g. "Scheduler hit an exception:"). */
  context: string;
  /** Opaque tag supplied by the caller (the lifetime the chain belongs to). */
  owner: number;
}

/** Bounds that keep memory flat whatever the input: frames kept per block, message lines, blocks per chain. */
const MAX_FRAMES = 120;
const MAX_MESSAGE_LINES = 12;
const MAX_BLOCKS = 8;

const HEADER = 'Traceback (most recent call last):';
const FRAME = /^\s*File "([^"]+)", line (\d+)(?:, in (.+))?$/;
const TERMINAL = /^([A-Za-z_][\w.]*)(?::(?: (.*))?)?$/;
const CHAIN =
  /^(?:The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)/;
const NOISE = /^\s*(?:[\^~]+|\.\.\.<\d+ lines>\.\.\.|\[Previous line repeated .*\]|[|+][-+| ]*.*)$/;

interface StreamState {
  chain: TracebackChain;
  block: TracebackBlock;
  phase: 'frames' | 'message' | 'chain';
  head: string;
  messageLines: number;
}

// Is this line the start of another log record (so it cannot continue the traceback)?
function startsRecord(app: AppLine, head: string): boolean {
  return (
    app.prefixed &&
    ((app.dialect !== null && getEngine(app.dialect).logDialect.prefixStartsRecord === true) || app.head !== head)
  );
}

// Create a new block at a header line.
function newBlock(line: number): TracebackBlock {
  return { type: '', message: '', frames: [], headerLine: line, terminalLine: null };
}

/** Streaming reassembler; completed chains are handed to `onChain`. */
export class TracebackAssembler {
  private readonly open = new Map<string, StreamState>();

  constructor(private readonly onChain: (c: TracebackChain) => void) {}

  // Feed one line of one stream (source + pid + vLLM process tag).
  feed(stream: string, line: number, app: AppLine, owner: number): void {
    const text = app.text;
    const st = this.open.get(stream);
    const at = text.indexOf(HEADER);
    if (at !== -1) return this.openBlock(stream, st, line, app, at, owner);
    if (!st) return;
    if (startsRecord(app, st.head)) {
      this.close(stream);
      return;
    }
    st.chain.lastLine = line;
    if (st.phase === 'frames') this.feedFrame(st, line, text);
    else if (CHAIN.test(text)) st.phase = 'chain';
    else if (st.phase === 'message') this.appendMessage(st, text);
  }

  // Close every open chain (end of input or end of a lifetime).
  flush(): void {
    for (const key of [...this.open.keys()]) this.close(key);
  }

  // Close the open chain of one stream, if any.
  close(stream: string): void {
    const st = this.open.get(stream);
    if (!st) return;
    this.open.delete(stream);
    this.onChain(st.chain);
  }

  // A header: continue a chain after a chain marker, otherwise start a new chain.
  private openBlock(
    stream: string,
    st: StreamState | undefined,
    line: number,
    app: AppLine,
    at: number,
    owner: number,
  ): void {
    const block = newBlock(line);
    if (st && st.phase === 'chain') {
      if (st.chain.blocks.length < MAX_BLOCKS) st.chain.blocks.push(block);
      Object.assign(st, { block, phase: 'frames', messageLines: 0 });
      st.chain.lastLine = line;
      return;
    }
    if (st) this.close(stream);
    const before = app.text.slice(0, at).trim();
    const context = detach(before);
    const chain: TracebackChain = { stream, blocks: [block], firstLine: line, lastLine: line, context, owner };
    this.open.set(stream, { chain, block, phase: 'frames', head: app.head, messageLines: 0 });
  }

  // Inside the frames: a frame, its source line, noise, or the terminal `Type: message` line.
  private feedFrame(st: StreamState, line: number, text: string): void {
    const f = FRAME.exec(text);
    if (f) {
      if (st.block.frames.length < MAX_FRAMES)
        st.block.frames.push({ file: detach(f[1]), line: Number(f[2]), func: detach(f[3] ?? '') });
      return;
    }
    const last = st.block.frames[st.block.frames.length - 1];
    if (text.startsWith('    ') && !NOISE.test(text)) {
      if (last && last.code === undefined) last.code = detach(text.trim());
      return;
    }
    const t = text.charCodeAt(0) === 32 ? null : TERMINAL.exec(text);
    if (!t || NOISE.test(text)) return;
    Object.assign(st.block, { type: detach(t[1]), message: detach(t[2] ?? ''), terminalLine: line });
    st.phase = 'message';
  }

  // Multi-line exception messages (SGLang's "Possible solutions:" list, __notes__).
  private appendMessage(st: StreamState, text: string): void {
    if (st.messageLines >= MAX_MESSAGE_LINES || !text.trim()) return;
    if (text.includes('Traceback') || FRAME.test(text)) return;
    st.block.message = detach(`${st.block.message}\n${text}`);
    st.messageLines++;
  }
}
