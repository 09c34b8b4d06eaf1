import { describe, expect, it } from 'vitest';
import { redactArgv, redactText, redactValue } from './redact.js';

describe('redact', () => {
  it('hides api keys in flags, env lines and bearer tokens', () => {
    expect(redactText('sglang --api-key s3cr3t --port 1')).toBe('sglang --api-key *** --port 1');
    expect(redactText('--api-key=abc --x')).toBe('--api-key=*** --x');
    expect(redactText('Environment="HF_TOKEN=hf_abcdefghijklmnopqrstuvwx"')).not.toContain('abcdefghij');
    expect(redactText('Authorization: Bearer abcdef123456')).toBe('Authorization: Bearer ***');
  });
  it('redacts argv and nested values', () => {
    expect(redactArgv(['x', '--api-key', 'k1', '--port', '8'])).toEqual(['x', '--api-key', '***', '--port', '8']);
    expect(redactValue({ apiKey: 'k', nested: { api_key: 'z', s: '--api-key q' } })).toEqual({
      apiKey: '***',
      nested: { api_key: '***', s: '--api-key ***' },
    });
  });

  it('hides the password of a URL (user info), keeping the user and the rest', () => {
    expect(redactText('cannot connect to http://operator:hunter2@10.0.0.1:30000/v1: ECONNREFUSED')).toBe(
      'cannot connect to http://operator:***@10.0.0.1:30000/v1: ECONNREFUSED',
    );
    expect(redactValue({ url: 'https://u:p%40ss@h/x' })).toEqual({ url: 'https://u:***@h/x' });
    expect(redactText('ssh root@gpu1 and http://gpu1:30000/health')).toBe('ssh root@gpu1 and http://gpu1:30000/health');
  });

  it('hides a token in a URL query and quoted values of secret-named keys (the secrets fault: an engine logs its request lines)', () => {
    expect(redactText('INFO: 10.0.0.1 - "POST /v1/chat/completions?token=qt0123abcd&x=1 HTTP/1.1" 200')).toBe(
      'INFO: 10.0.0.1 - "POST /v1/chat/completions?token=***&x=1 HTTP/1.1" 200',
    );
    expect(redactText('http://h/v1?x=1&api_key=abc#f')).toBe('http://h/v1?x=1&api_key=***#f');
    expect(redactText('server_args=ServerArgs(api_key=\'sk1234\', hf_token="hf_x", max_total_tokens=5)')).toBe(
      'server_args=ServerArgs(api_key=\'***\', hf_token="***", max_total_tokens=5)',
    );
    expect(redactText('{"password": "hunter2", "completion_tokens": 7, "token": "t1"}')).toBe(
      '{"password": "***", "completion_tokens": 7, "token": "***"}',
    );
    expect(redactText('api_key=None, tokenizer_path=x, "max_tokens": 16, ?page=2')).toBe(
      'api_key=None, tokenizer_path=x, "max_tokens": 16, ?page=2',
    );
  });
});
