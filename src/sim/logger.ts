// Writes SGLang-formatted lines (`[time TPn] message`) to a sink; multi-line records keep raw continuation lines.
import { formatStamp, formatUvicorn } from './log-format.js';

/** Where log text goes: process stdout in the CLI, a buffer in in-process tests. */
export type LogSink = (text: string) => void;

/** SGLang's loggers as the simulator uses them. */
export class SimLogger {
  /** Every line written, for in-process inspection (bounded). */
  readonly lines: string[] = [];
  constructor(
    private readonly sink: LogSink,
    private readonly tpSize: number,
    private readonly keep = 10_000,
  ) {}

  // One record from the main (tokenizer/http) process: `[time] message`.
  main(message: string): void {
    this.emit(`[${formatStamp(new Date())}] ${message}`);
  }

  // One record from a scheduler rank: `[time TPn] message` (the TP tag only when tp_size > 1).
  rank(message: string, tpRank = 0): void {
    const tag = this.tpSize > 1 ? ` TP${tpRank}` : '';
    this.emit(`[${formatStamp(new Date())}${tag}] ${message}`);
  }

  // A uvicorn record: `[time] INFO:     message`.
  uvicorn(message: string, level: 'INFO' | 'ERROR' | 'WARNING' = 'INFO'): void {
    this.main(formatUvicorn(message, level));
  }

  // A line without SGLang's prefix (banner, C++ glog output).
  raw(line: string): void {
    this.emit(line);
  }

  private emit(text: string): void {
    for (const l of text.split('\n')) {
      this.lines.push(l);
      if (this.lines.length > this.keep) this.lines.shift();
    }
    this.sink(`${text}\n`);
  }
}
