import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { handleInterrupts, ignoreBrokenOutput, SIGNAL_EXIT } from './interrupt.js';

// A run's signal handling against a real EventEmitter standing in for `process`.
function setup() {
  const proc = new EventEmitter();
  const ac = new AbortController();
  const said: string[] = [];
  const exits: number[] = [];
  const h = handleInterrupts(ac, {
    proc,
    say: (l) => said.push(l),
    exit: (c) => exits.push(c),
    leaseNote: 'within 5 min',
  });
  return { proc, ac, said, exits, h };
}

describe('handleInterrupts', () => {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${sig} aborts the run once, says so in one line, and maps to exit ${SIGNAL_EXIT[sig]}`, () => {
      const { proc, ac, said, exits, h } = setup();
      proc.emit(sig);
      expect(ac.signal.aborted).toBe(true);
      expect((ac.signal.reason as Error).message).toBe(`interrupted by ${sig}`);
      expect(said).toEqual([
        `spectune: ${sig} received: rolling back to known-good, releasing the lock, marking the campaign interrupted (resume with --resume)`,
      ]);
      expect(h.received).toBe(sig);
      expect(exits).toEqual([]);
      proc.emit('SIGTERM');
      expect(said).toHaveLength(1);
    });
  }

  it('a second Ctrl-C warns that the next one leaves the host to its lease; a third exits 130', () => {
    const { proc, said, exits } = setup();
    proc.emit('SIGINT');
    proc.emit('SIGINT');
    expect(said[1]).toBe('spectune: rolling back, press Ctrl-C again to leave the host to its lease (within 5 min)');
    expect(exits).toEqual([]);
    proc.emit('SIGINT');
    expect(exits).toEqual([130]);
  });

  it('dispose removes every listener', () => {
    const { proc, h } = setup();
    expect(proc.listenerCount('SIGHUP')).toBe(1);
    h.dispose();
    expect(proc.listenerCount('SIGINT') + proc.listenerCount('SIGTERM') + proc.listenerCount('SIGHUP')).toBe(0);
  });
});

describe('ignoreBrokenOutput', () => {
  it('swallows EPIPE and EIO (a closed terminal) but not other errors', () => {
    const s = new PassThrough();
    ignoreBrokenOutput(s);
    expect(() => s.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).not.toThrow();
    expect(() => s.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }))).not.toThrow();
    expect(() => s.emit('error', Object.assign(new Error('boom'), { code: 'EBADF' }))).toThrow('boom');
  });
});
