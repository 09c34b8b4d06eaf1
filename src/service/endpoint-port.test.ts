import { describe, expect, it } from 'vitest';
import { checkEndpointPort, urlPort } from './endpoint-port.js';

describe('checkEndpointPort: the endpoint must be the port the unit listens on', () => {
  it('passes on the same port, the engine default when ExecStart names none, and the scheme default', () => {
    expect(() =>
      checkEndpointPort({
        endpoint: 'http://10.0.0.5:30000',
        unit: 'sglang.service',
        execPort: 30000,
        defaultPort: 30000,
        source: 'target.endpoint',
      }),
    ).not.toThrow();
    expect(() =>
      checkEndpointPort({
        endpoint: 'http://10.0.0.5:8000/',
        unit: 'vllm.service',
        execPort: undefined,
        defaultPort: 8000,
        source: '--endpoint',
      }),
    ).not.toThrow();
    expect(urlPort('https://h')).toBe(443);
    expect(urlPort('http://h')).toBe(80);
    expect(urlPort('not a url')).toBeNull();
  });

  it('fails at once with both ports and the endpoint to write, never showing user info', () => {
    let err: { code?: string; message?: string; hint?: string } = {};
    try {
      checkEndpointPort({
        endpoint: 'http://u:pw@10.0.0.5:30001',
        unit: 'sglang.service',
        execPort: 30000,
        defaultPort: 30000,
        source: 'target.endpoint',
      });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('E_CONFIG_INVALID');
    expect(err.message).toBe(
      'target.endpoint http://10.0.0.5:30001 is port 30001, but sglang.service listens on --port 30000: spectune would wait for a port nothing serves',
    );
    expect(err.hint).toBe("set target.endpoint to http://10.0.0.5:30000 (or change the unit's --port)");
    expect(() =>
      checkEndpointPort({
        endpoint: 'http://h:9000',
        unit: 'vllm.service',
        execPort: undefined,
        defaultPort: 8000,
        source: '--endpoint',
      }),
    ).toThrow(
      "--endpoint http://h:9000 is port 9000, but vllm.service listens on the engine's default port 8000 (its ExecStart names no --port)",
    );
  });
});
