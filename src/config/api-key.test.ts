import { describe, expect, it } from 'vitest';
import { resolveApiKeyInfo } from './api-key.js';

describe('resolveApiKeyInfo: the key spectune sends and the fix of a refused one', () => {
  it('reads the variable target.apiKeyEnv names and says to export it', () => {
    const set = resolveApiKeyInfo({ apiKey: null, apiKeyEnv: 'LLM_KEY' }, { LLM_KEY: 'k1' });
    expect(set).toMatchObject({ key: 'k1', source: '$LLM_KEY (target.apiKeyEnv)' });
    expect(set.fix).toMatch(
      /^export LLM_KEY=<the value of the unit's --api-key> before running spectune \(spectune.yaml's target.apiKeyEnv names it\)$/,
    );
    const unset = resolveApiKeyInfo({ apiKey: null, apiKeyEnv: 'LLM_KEY' }, {});
    expect(unset).toMatchObject({ key: null, source: 'no key ($LLM_KEY is not set)' });
    expect(resolveApiKeyInfo({ apiKey: null, apiKeyEnv: 'LLM_KEY' }, { LLM_KEY: '' }).key).toBeNull();
  });

  it('a config without a key setting: add target.apiKeyEnv; an inline key: target.apiKey', () => {
    const none = resolveApiKeyInfo({ apiKey: null, apiKeyEnv: null }, { SPECTUNE_API_KEY: 'ignored' });
    expect(none.key).toBeNull();
    expect(none.fix).toContain('add target.apiKeyEnv: SPECTUNE_API_KEY to spectune.yaml');
    const inline = resolveApiKeyInfo({ apiKey: 'lit', apiKeyEnv: null }, {});
    expect(inline).toMatchObject({ key: 'lit', source: 'target.apiKey' });
    expect(inline.fix).toContain('target.apiKey');
  });

  it('flags only (no spectune.yaml): $SPECTUNE_API_KEY', () => {
    expect(resolveApiKeyInfo(null, { SPECTUNE_API_KEY: 'k' })).toMatchObject({ key: 'k', source: '$SPECTUNE_API_KEY' });
    expect(resolveApiKeyInfo(null, {}).fix).toMatch(/^export SPECTUNE_API_KEY=/);
  });
});
