// The operator's commands around each restart spectune makes (e.g. take the host out of the load balancer before the
// stop, put it back once the engine is ready): argv arrays run on this machine, one after another, each with a time
// limit. A failing preStop hook stops the restart (the host may still be in the load balancer); a failing postReady
// hook is a warning (the engine serves; the operator puts it back by hand).
import { ToolError } from '../errors.js';
import { runArgv } from '../host/local.js';
import { redactArgv } from '../redact.js';

/** The hooks of a target. */
export interface RestartHooks {
  preStop: string[][];
  postReady: string[][];
  timeoutMs: number;
}

/** No hooks. */
export const NO_HOOKS: RestartHooks = { preStop: [], postReady: [], timeoutMs: 60_000 };

// One line per hook for plans and dry runs ("preStop: lb-ctl drain host1 (on this machine, limit 60 s)").
export function describeHooks(h: RestartHooks): string[] {
  const limit = `on this machine, limit ${Math.round(h.timeoutMs / 1000)} s`;
  return [
    ...h.preStop.map((a) => `preStop hook: ${redactArgv(a).join(' ')} (${limit}, before the stop)`),
    ...h.postReady.map((a) => `postReady hook: ${redactArgv(a).join(' ')} (${limit}, once the engine is ready)`),
  ];
}

// Run one kind of hook in order; throws E_REMOTE_COMMAND naming the hook that failed or ran out of time.
export async function runHooks(
  kind: 'preStop' | 'postReady',
  h: RestartHooks,
  log: (m: string) => void,
): Promise<void> {
  for (const argv of h[kind]) {
    const shown = redactArgv(argv).join(' ');
    log(`${kind} hook: ${shown}`);
    const r = await runArgv('local', argv, { timeoutMs: h.timeoutMs }).catch((e: unknown) => ({
      exitCode: 127,
      stderr: (e as Error).message,
      stdout: '',
      timedOut: false,
    }));
    if (r.timedOut)
      throw new ToolError(
        'E_REMOTE_COMMAND',
        `${kind} hook \`${shown}\` ran past its limit of ${Math.round(h.timeoutMs / 1000)} s`,
        { hint: 'raise target.hooks.timeout, or fix the command' },
      );
    if (r.exitCode !== 0) {
      const why = r.stderr.trim().split('\n').pop() ?? '';
      throw new ToolError(
        'E_REMOTE_COMMAND',
        `${kind} hook \`${shown}\` failed with exit code ${r.exitCode}${why ? `: ${why}` : ''}`,
        { hint: 'fix the command in target.hooks (it runs on this machine, as this user)' },
      );
    }
  }
}
