import { describe, expect, it } from 'vitest';
import { ToolError } from '../errors.js';
import { backoffMs, isLostHost } from './lost-host.js';
import { ReadyTimeoutError } from './start-deadline.js';

describe('isLostHost', () => {
  it('retries a host that did not answer, never an engine failure', () => {
    expect(isLostHost(new ToolError('E_SSH_UNREACHABLE', 'th2: unreachable: No route to host'))).toBe(true);
    expect(isLostHost(new ToolError('E_TIMEOUT', 'th2: systemctl cat x.service timed out after 30712 ms'))).toBe(true);
    expect(isLostHost(new ToolError('E_REMOTE_COMMAND', 'th2: systemctl restart x failed with exit code 1'))).toBe(
      false,
    );
    expect(
      isLostHost(new ReadyTimeoutError('x.service', 120_000, { state: null, health: null, line: null } as never)),
    ).toBe(false);
    expect(isLostHost(new Error('timed out after 5 ms'))).toBe(false);
  });
  it('backs off 1, 2, 4, 8 s, then 15 s at most', () => {
    expect([0, 1, 2, 3, 4, 9].map(backoffMs)).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000]);
  });
});
