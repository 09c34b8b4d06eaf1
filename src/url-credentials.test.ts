import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { splitUrlCredentials } from './url-credentials.js';

describe('splitUrlCredentials', () => {
  it('moves user info into a Basic header and leaves other URLs alone', () => {
    expect(splitUrlCredentials('http://op:p%40ss@10.0.0.1:30000/health')).toEqual({
      url: 'http://10.0.0.1:30000/health',
      headers: { authorization: `Basic ${Buffer.from('op:p@ss').toString('base64')}` },
    });
    expect(splitUrlCredentials('http://10.0.0.1:30000/health', { a: '1' })).toEqual({
      url: 'http://10.0.0.1:30000/health',
      headers: { a: '1' },
    });
    expect(splitUrlCredentials('http://op:pw@h/x', { Authorization: 'Bearer k' }).headers).toEqual({
      Authorization: 'Bearer k',
    });
    expect(splitUrlCredentials('not a url')).toEqual({ url: 'not a url', headers: {} });
  });
  it('lets fetch reach an endpoint given with user info (the secrets fault: status showed "health: ... -> TypeError")', async () => {
    let seen = '';
    const server = createServer((req, res) => {
      seen = req.headers.authorization ?? '';
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      await expect(fetch(`http://op:pw@127.0.0.1:${port}/health`)).rejects.toThrow(TypeError);
      const s = splitUrlCredentials(`http://op:pw@127.0.0.1:${port}/health`);
      expect((await fetch(s.url, { headers: s.headers })).status).toBe(200);
      expect(seen).toBe(`Basic ${Buffer.from('op:pw').toString('base64')}`);
    } finally {
      server.close();
    }
  });
});
