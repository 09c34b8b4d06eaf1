import { describe, expect, it } from 'vitest';
import { execMainCode, formatStatus, formatTimespan, isCleanExit, resultOfExit, toProcessExit } from './exit-status.js';

describe('exit status as systemd names it', () => {
  it.each([
    [1, null, 'exited', '1/FAILURE', false, 'exit-code', '1'],
    [0, null, 'exited', '0/SUCCESS', true, 'success', '1'],
    [42, null, 'exited', '42/n/a', false, 'exit-code', '1'],
    [null, 'SIGKILL', 'killed', '9/KILL', false, 'signal', '2'],
    [null, 'SIGTERM', 'killed', '15/TERM', true, 'success', '2'],
    [null, 'SIGSEGV', 'dumped', '11/SEGV', false, 'core-dump', '3'],
  ] as const)('code %s signal %s -> code=%s status=%s', (code, signal, kind, status, clean, result, execCode) => {
    const e = toProcessExit(code, signal);
    expect(e.code).toBe(kind);
    expect(formatStatus(e)).toBe(status);
    expect(isCleanExit(e)).toBe(clean);
    expect(resultOfExit(e)).toBe(result);
    expect(execMainCode(e)).toBe(execCode);
  });

  it('formats timespans like systemctl show', () => {
    expect(formatTimespan(90)).toBe('1min 30s');
    expect(formatTimespan(0.5)).toBe('500ms');
    expect(formatTimespan(Infinity)).toBe('infinity');
    expect(formatTimespan(0)).toBe('0');
  });
});
