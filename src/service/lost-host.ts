// A lost host: the rank did not answer (ssh timed out, the connection was refused, no route). Unlike a diagnosed
// crash it says nothing about the config, so a group change retries it with backoff while the lease allows.
import { isToolError, ToolError } from '../errors.js';
import { ReadyTimeoutError } from './start-deadline.js';

/** First retry after this long; each next one waits twice as long, up to BACKOFF_MAX_MS. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 15_000;
/** The host-side timer checks the lease every 5 s: stop retrying two checks before it may lapse. */
export const LEASE_MARGIN_MS = 10_000;

/** Whether an error says a host could not be reached (retryable), not that the engine failed. */
export function isLostHost(e: unknown): boolean {
  if (!isToolError(e) || e instanceof ReadyTimeoutError) return false;
  if (e.code === 'E_SSH_UNREACHABLE') return true;
  return e.code === 'E_TIMEOUT' && /timed out after \d+ ms/.test(e.message);
}

/** The wait before retry number `attempt` (0-based): 1 s, 2 s, 4 s, ... at most 15 s. */
export function backoffMs(attempt: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt);
}

/** The error a group change ends with when a rank stayed unreachable past what its lease allows. */
export function lostHostError(message: string): ToolError {
  return new ToolError('E_SSH_UNREACHABLE', message, {
    hint: 'when the host answers again, run the command again (tune: --resume); `spectune status` shows every rank',
  });
}
