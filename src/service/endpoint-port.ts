// The endpoint spectune probes must be the port the unit listens on: a mismatch would wait out the whole start-up
// deadline (20 min by default) on a port nothing serves, so it fails at once, dry runs included (pure).
import { ToolError } from '../errors.js';

/** Where the endpoint came from, for the fix ("target.endpoint" of spectune.yaml, or "--endpoint"). */
export type EndpointSource = 'target.endpoint' | '--endpoint';

// The port of an http(s) URL (the scheme's default when it names none); null when not a URL.
export function urlPort(endpoint: string): number | null {
  try {
    const u = new URL(endpoint);
    if (u.port) return Number(u.port);
    return u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : null;
  } catch {
    return null;
  }
}

/** Fail when the endpoint's port is not the one the unit's ExecStart listens on (execPort undefined: the engine's default). */
export function checkEndpointPort(o: {
  endpoint: string;
  unit: string;
  execPort: number | undefined;
  defaultPort: number;
  source: EndpointSource;
}): void {
  const port = urlPort(o.endpoint);
  const listens = o.execPort ?? o.defaultPort;
  if (port === null || port === listens) return;
  const where =
    o.execPort === undefined
      ? `listens on the engine's default port ${listens} (its ExecStart names no --port)`
      : `listens on --port ${listens}`;
  const fixed = new URL(o.endpoint);
  fixed.port = String(listens);
  throw new ToolError(
    'E_CONFIG_INVALID',
    `${o.source} ${redactUserInfo(o.endpoint)} is port ${port}, but ${o.unit} ${where}: spectune would wait for a port nothing serves`,
    {
      hint: `set ${o.source} to ${redactUserInfo(fixed.toString().replace(/\/$/, ''))} (or change the unit's --port)`,
    },
  );
}

// The URL without user:password (an endpoint may carry them; messages never show them).
function redactUserInfo(url: string): string {
  return url.replace(/^(\w+:\/\/)[^@/]*@/, '$1');
}
