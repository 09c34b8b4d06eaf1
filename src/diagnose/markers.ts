// Lifecycle markers: the lines that build lifetimes and the timeline (start, ready, requests, stop, drain, exit...).
import { getEngine } from '../engines/registry.js';
import type { Dialect } from './prefix.js';

/** Kinds of timeline events, in the vocabulary of the report. */
export type MarkerKind =
  | 'starting'
  | 'started'
  | 'stop_requested'
  | 'stopped'
  | 'weights_loaded'
  | 'kv_allocated'
  | 'ready'
  | 'request'
  | 'sigterm'
  | 'drain'
  | 'stop_timeout'
  | 'sigkill'
  | 'kill_request'
  | 'exit'
  | 'result'
  | 'restart'
  | 'start_limit'
  | 'oom_kill'
  | 'app_exit'
  | 'app_abort'
  | 'engine_start';

/** One recognised lifecycle line with its parsed fields. */
export interface Marker {
  kind: MarkerKind;
  fields: Record<string, string>;
}

const EXIT = /Main process exited, code=(?<code>exited|killed|dumped), status=(?<status>\d+)\/(?<name>\w+)/;
const RESULT = /Failed with result '(?<result>[a-z-]+)'\./;
const RESTART = /Scheduled restart job.*restart counter is at (?<counter>\d+)\./;
const STOP_TIMEOUT = /State '(?<state>[a-z-]+)' timed out\. (?<action>\w+)|Stopping timed out\. (?<action2>\w+)/;
const SIGKILL = /Killing process (?<pid>\d+) \((?<comm>.*)\) with signal SIG(?<signal>\w+)\./;
const KILL_REQUEST = /Sending signal SIG(?<signal>\w+) to process (?<pid>\d+) \((?<comm>.*)\) on client request\./;
const JOB = /^(?<verb>Starting|Started|Stopping|Stopped) (?<what>.+?)(?:\.\.\.|\.)$/;
const KERNEL_OOM =
  /(?:Out of memory|Memory cgroup out of memory)[^:]*:\s+Kill(?:ed)? process (?<pid>\d+) \((?<comm>[^)]+)\)/;
const DRAIN =
  /Gracefully exiting\.\.\. Remaining number of requests (?<remaining>\d+)\.(?: Remaining requests remaining_rids=\[(?<rids>.*)\]\.)?/;
const ACCESS = /"POST (?<path>\/[^\s"?]*)[^"]* HTTP\/[\d.]+" (?<status>\d{3})/;
const READY_VLLM = /Starting vLLM API server \d+ on (?<url>\S+)|Application startup complete\./;
const READY_LLAMA = /server is listening on (?<url>\S+)/;
/** The process is dying by itself with no Python exception: faulthandler, ggml asserts, C++ terminate. */
const ABORT =
  /Fatal Python error: (?<reason>.+)|GGML_ASSERT\((?<assert>.*)\) failed|terminate called after throwing|Segmentation fault \(core dumped\)/;
const ENGINE_START = /server_args=ServerArgs\(|vLLM API server version|^(?:main: )?build(?: =|:) \d+/;
/** docker compose's own line when a container stops: "name exited with code 127 (restarting)". */
const DOCKER_EXIT = /^[\w.-]+ exited with code (?<status>\d+)(?<restarting> \(restarting\))?$/;
/** Batch statistics, by far the most frequent lines of a busy server: never a lifecycle event. */
export const BATCH_PREFIXES = ['Decode batch', 'Prefill batch'];
/** Request logs (SGLang --log-requests, vLLM "Received request"): they quote the user's prompt, so no marker or rule
 * may read them — a prompt that mentions "CUDA out of memory" is not a crash. */
export const REQUEST_LOG_PREFIXES = ['Receive: obj=', 'Finish: obj=', 'Received request '];
const NOT_LIFECYCLE = [...BATCH_PREFIXES, ...REQUEST_LOG_PREFIXES];
const JOB_VERBS: Record<string, MarkerKind> = {
  Starting: 'starting',
  Started: 'started',
  Stopping: 'stop_requested',
  Stopped: 'stopped',
};

// Named groups of a match as plain strings.
function groups(m: RegExpExecArray | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m?.groups ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

// Markers written by systemd (PID 1): unit lines and job lines.
export function readSystemdMarker(text: string): Marker | null {
  let m: RegExpExecArray | null;
  if ((m = EXIT.exec(text))) return { kind: 'exit', fields: groups(m) };
  if ((m = RESULT.exec(text))) return { kind: 'result', fields: groups(m) };
  if (text.endsWith('Deactivated successfully.')) return { kind: 'result', fields: { result: 'success' } };
  if ((m = RESTART.exec(text))) return { kind: 'restart', fields: groups(m) };
  if (text.endsWith('Start request repeated too quickly.')) return { kind: 'start_limit', fields: {} };
  if ((m = STOP_TIMEOUT.exec(text))) return { kind: 'stop_timeout', fields: groups(m) };
  if ((m = SIGKILL.exec(text))) return { kind: 'sigkill', fields: groups(m) };
  if ((m = KILL_REQUEST.exec(text))) return { kind: 'kill_request', fields: groups(m) };
  if (text.includes('killed by the OOM killer') || text.includes('systemd-oomd killed'))
    return { kind: 'oom_kill', fields: {} };
  if ((m = JOB.exec(text))) return { kind: JOB_VERBS[m.groups!.verb], fields: groups(m) };
  return null;
}

// Markers written by the kernel (OOM killer).
export function readKernelMarker(text: string): Marker | null {
  const m = text.includes('Kill') ? KERNEL_OOM.exec(text) : null;
  return m ? { kind: 'oom_kill', fields: groups(m) } : null;
}

// Markers written by the engine itself; `dialect` decides what "ready" means (uvicorn start-up is not SGLang ready).
export function readAppMarker(text: string, dialect: Dialect | null): Marker | null {
  let m: RegExpExecArray | null;
  if (text.includes(' HTTP/1.') && (m = ACCESS.exec(text))) return { kind: 'request', fields: groups(m) };
  // Batch statistics and request logs (which quote the user's prompt) are never lifecycle lines.
  if (NOT_LIFECYCLE.some((p) => text.startsWith(p))) return null;
  if (text.includes('total time =')) return { kind: 'request', fields: {} };
  if (text.includes('The server is fired up and ready to roll!')) return { kind: 'ready', fields: {} };
  if (!(dialect && getEngine(dialect).logDialect.uvicornStartupNotReady) && (m = READY_VLLM.exec(text)))
    return { kind: 'ready', fields: groups(m) };
  if (text.includes('server is listening on') && (m = READY_LLAMA.exec(text)))
    return { kind: 'ready', fields: groups(m) };
  if ((m = DRAIN.exec(text))) return { kind: 'drain', fields: groups(m) };
  if ((m = ABORT.exec(text))) return { kind: 'app_abort', fields: groups(m) };
  if (
    text.includes('cleaning up before exit...') ||
    text.includes('exiting normally') ||
    /Finished server process \[\d+\]/.test(text)
  )
    return { kind: 'app_exit', fields: {} };
  if (
    text.includes('SIGTERM received') ||
    text.includes('Shutting down FastAPI HTTP server.') ||
    /received signal=SIG(?:INT|TERM)\b/.test(text)
  )
    return { kind: 'sigterm', fields: {} };
  if (text.includes('with SIGKILL because SIGTERM was not enough'))
    return { kind: 'stop_timeout', fields: { action: 'Killing' } };
  if (text.includes('timed out waiting to stop, sending KILL'))
    return { kind: 'stop_timeout', fields: { action: 'Killing' } };
  if ((m = DOCKER_EXIT.exec(text)))
    return {
      kind: m.groups!.restarting ? 'restart' : 'exit',
      fields: { code: 'exited', status: m.groups!.status, name: m.groups!.status === '0' ? 'SUCCESS' : 'FAILURE' },
    };
  if (/Load weight end\.|Model loading took|: model loaded$/.test(text)) return { kind: 'weights_loaded', fields: {} };
  if (text.includes('KV Cache is allocated.') || text.includes('GPU KV cache size: '))
    return { kind: 'kv_allocated', fields: {} };
  if (ENGINE_START.test(text)) return { kind: 'engine_start', fields: {} };
  return null;
}

/** Generation endpoints: POSTs elsewhere (e.g. /flush_cache) are not served requests. */
export function isGenerationPath(path: string | undefined): boolean {
  return (
    path === undefined ||
    /\/(?:generate|completions?|chat\/completions|embeddings|infill|encode|v1\/responses)$/.test(path)
  );
}
