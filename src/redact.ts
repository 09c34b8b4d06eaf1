// Secrets (API keys, tokens) must never be stored or shown: every path that persists or prints text passes here.

const FLAG_SECRET =
  /(--(?:api-key|api_key|hf-token|token|admin-api-key|ssl-keyfile-password)(?:=|\s+))("[^"]*"|'[^']*'|\S+)/gi;
const ENV_SECRET = /\b([A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*=)("[^"]*"|'[^']*'|[^\s"']+)/g;
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]{6,}/g;
const HF_TOKEN = /\bhf_[A-Za-z0-9]{20,}\b/g;
// The password of a URL's user info (http://user:password@host): the user stays, the password goes.
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]*:)[^\s/@'"]+@/gi;
const SK_KEY = /\bsk-[A-Za-z0-9_-]{16,}\b/g;
// A secret in a URL's query (`?token=...`, `&api_key=...`), as engines log the request line and clients print URLs.
const QUERY_SECRET =
  /([?&](?:token|access_token|auth_token|api[_-]?key|apikey|key|secret|password|passwd|sig|signature)=)[^&\s#'"]+/gi;
// A quoted value of a secret-named key in Python reprs and JSON (`api_key='...'`, `"hf_token": "..."`).
const KEYWORD_SECRET =
  /(["']?\b(?:api[_-]?key|hf[_-]?token|access[_-]?token|auth[_-]?token|token|password|passwd|secret)["']?\s*[:=]\s*)("[^"]+"|'[^']+')/gi;

// A value that is only an environment reference (`$KEY`, `${KEY}`): the unit's own form, no secret in it.
const ENV_REFERENCE = /^(["']?)\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\1$/;

/** The placeholder that replaces a secret. */
export const REDACTED = '***';

// Replace secret values in free text (ExecStart lines, Environment= lines, logs, error messages).
export function redactText(text: string): string {
  return text
    .replace(FLAG_SECRET, (m, flag: string, v: string) => (ENV_REFERENCE.test(v) ? m : `${flag}${REDACTED}`))
    .replace(ENV_SECRET, (_m, key: string) => `${key}${REDACTED}`)
    .replace(BEARER, (_m, p: string) => `${p}${REDACTED}`)
    .replace(HF_TOKEN, REDACTED)
    .replace(SK_KEY, REDACTED)
    .replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`)
    .replace(QUERY_SECRET, (_m, head: string) => `${head}${REDACTED}`)
    .replace(KEYWORD_SECRET, (_m, head: string, v: string) =>
      v.slice(1, -1) === REDACTED ? _m : `${head}${v[0]}${REDACTED}${v[0]}`,
    );
}

// Redact an argv array: the value after a secret flag, or the value part of --flag=secret.
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (/^--(api-key|api_key|hf-token|token|admin-api-key)$/i.test(a) && i + 1 < argv.length) {
      out.push(a, REDACTED);
      i++;
    } else {
      out.push(redactText(a));
    }
  }
  return out;
}

// Deep-redact a JSON-able value: keys that name secrets lose their value, strings are scrubbed.
export function redactValue<T>(value: T): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        /^(api_?key|apikey|token|secret|password)$/i.test(k.replace(/-/g, '_')) && v != null
          ? REDACTED
          : redactValue(v);
    }
    return out as T;
  }
  return value;
}
