// An endpoint may carry user info (http://user:password@host, behind an authenticating proxy); fetch() refuses such
// URLs, so the credentials move to a Basic Authorization header, as curl sends them.

/** A URL without user info, and the header that carries it. */
export interface SplitUrl {
  url: string;
  headers: Record<string, string>;
}

// Move a URL's user info into an Authorization header (unless one is set already); other URLs pass unchanged.
export function splitUrlCredentials(raw: string, headers: Record<string, string> = {}): SplitUrl {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { url: raw, headers };
  }
  if (!u.username && !u.password) return { url: raw, headers };
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  const has = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  return { url: u.href, headers: has ? headers : { ...headers, authorization: `Basic ${basic}` } };
}
