// The API key spectune sends to the engine, where it comes from, and the one fix for a missing or refused key (pure).

/** The variable spectune reads the key from when no spectune.yaml names one (init proposes it too). */
export const DEFAULT_API_KEY_ENV = 'SPECTUNE_API_KEY';

/** The config's key settings (target.apiKey / target.apiKeyEnv); null: no spectune.yaml, flags only. */
export interface ApiKeySetting {
  apiKey: string | null;
  apiKeyEnv: string | null;
}

/** The key and how to fix it when the engine wants one or refuses it. */
export interface ApiKeyInfo {
  key: string | null;
  /** Where the key was read from, for a message ("$SPECTUNE_API_KEY (target.apiKeyEnv)"); "no key" when none. */
  source: string;
  /** What to do when the engine answers 401/403: which variable or config key carries the key. */
  fix: string;
}

const VALUE = "<the value of the unit's --api-key>";

/** Resolve the key spectune uses: target.apiKey, else the variable target.apiKeyEnv names; without a config, $SPECTUNE_API_KEY. */
export function resolveApiKeyInfo(t: ApiKeySetting | null, env: NodeJS.ProcessEnv): ApiKeyInfo {
  if (t?.apiKey) {
    return {
      key: t.apiKey,
      source: 'target.apiKey',
      fix: `put the unit's --api-key value in spectune.yaml's target.apiKey, or better: target.apiKeyEnv: ${DEFAULT_API_KEY_ENV} and export ${DEFAULT_API_KEY_ENV}=${VALUE}`,
    };
  }
  const name = t ? t.apiKeyEnv : DEFAULT_API_KEY_ENV;
  if (!name) {
    return {
      key: null,
      source: 'no key (spectune.yaml names no target.apiKeyEnv)',
      fix: `add target.apiKeyEnv: ${DEFAULT_API_KEY_ENV} to spectune.yaml and export ${DEFAULT_API_KEY_ENV}=${VALUE}`,
    };
  }
  const key = env[name] || null;
  const named = t
    ? ` (spectune.yaml's target.apiKeyEnv names it)`
    : " (or name another variable in spectune.yaml's target.apiKeyEnv)";
  return {
    key,
    source: key ? `$${name}${t ? ' (target.apiKeyEnv)' : ''}` : `no key ($${name} is not set)`,
    fix: `export ${name}=${VALUE} before running spectune${named}`,
  };
}
