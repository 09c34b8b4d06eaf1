// SGLang's log lines, byte for byte, as pure formatters (the logger adds the `[time TPn] ` prefix).
import type { CapacityOk } from './model.js';
import type { SimSettings } from './settings.js';

/** The first line of every run: the simulator never passes itself off as the real engine. */
export const SIM_BANNER = 'spectune sim: SIMULATED SGLang-compatible engine (no GPU)';
/** SGLang's one true readiness line (http_server._wait_and_warmup). */
export const READY_MSG = 'The server is fired up and ready to roll!';
/** SGLang's KV-pool start-up failure. */
export const NOT_ENOUGH_MEMORY_MSG = 'Not enough memory. Please try to increase --mem-fraction-static.';
/** What the launch-phase parent logs when a child sent SIGQUIT (engine._set_envs_and_config). */
export const LAUNCH_SIGQUIT_MSG = 'Received sigquit from a child process. It usually means the child failed.';
/** What the running-phase parent logs on SIGQUIT (tokenizer_manager.SignalHandler). */
export const RUNNING_SIGQUIT_MSG = 'SIGQUIT received. signum=None, frame=None. It usually means one child failed.';
/** The SIGTERM handler's line; add_signal_handler passes no arguments, hence None. */
export const SIGTERM_MSG = 'SIGTERM received. signum=None frame=None. Draining requests and shutting down...';

// `[YYYY-MM-DD HH:MM:SS]` in local time, as Python logging's asctime with SGLang's datefmt.
export function formatStamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// SGLang's uvicorn formatter pads the level name: `INFO:     `.
export function formatUvicorn(message: string, level: 'INFO' | 'ERROR' | 'WARNING' = 'INFO'): string {
  return `${`${level}:`.padEnd(10)}${message}`;
}

// uvicorn's access-log message (the logger adds `INFO:     `).
export function formatAccess(client: string, method: string, path: string, status: number): string {
  const reason: Record<number, string> = {
    200: 'OK',
    400: 'Bad Request',
    401: 'Unauthorized',
    404: 'Not Found',
    503: 'Service Unavailable',
    405: 'Method Not Allowed',
    500: 'Internal Server Error',
  };
  return `${client} - "${method} ${path} HTTP/1.1" ${status} ${reason[status] ?? ''}`.trimEnd();
}

// Python repr of one ServerArgs value.
function reprValue(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  return `'${String(v)}'`;
}

// `server_args=ServerArgs(...)`, logged once at start-up by engine._launch_subprocesses.
export function formatServerArgs(fields: Record<string, unknown>): string {
  const body = Object.entries(fields)
    .map(([k, v]) => `${k}=${reprValue(v)}`)
    .join(', ');
  return `server_args=ServerArgs(${body})`;
}

// The scheduler's capacity line (recent versions, with available_gpu_mem).
export function formatCapacityLine(cap: CapacityOk, s: SimSettings): string {
  const maxPrefill = s.chunkedPrefillSize > 0 ? s.chunkedPrefillSize * 2 : 16384;
  return (
    `max_total_num_tokens=${cap.maxTotalNumTokens}, chunked_prefill_size=${s.chunkedPrefillSize}, ` +
    `max_prefill_tokens=${maxPrefill}, max_running_requests=${cap.maxRunningRequests}, ` +
    `context_len=${s.contextLength}, available_gpu_mem=${cap.availableGpuMemGb.toFixed(2)} GB`
  );
}

// Batch sizes SGLang captures CUDA graphs for, up to cuda_graph_max_bs.
export function listCaptureBatchSizes(maxBs: number): number[] {
  const out = [1, 2, 4, 8, 12];
  for (let bs = 16; bs <= 256; bs += bs < 64 ? 8 : 16) out.push(bs);
  for (let bs = 288; bs <= 4096; bs += 32) out.push(bs);
  return out.filter((b) => b <= maxBs);
}

/** Values of one periodic decode log line. */
export interface DecodeStats {
  running: number;
  tokens: number;
  tokenUsage: number;
  acceptLen: number | null;
  acceptRate: number | null;
  genThroughput: number;
  queued: number;
}

// `Decode batch, ...` (scheduler_metrics_mixin.log_decode_stats), trailing ", " included as SGLang prints it.
export function formatDecodeBatch(d: DecodeStats): string {
  let msg = `Decode batch, #running-req: ${d.running}, #token: ${d.tokens}, token usage: ${d.tokenUsage.toFixed(2)}, `;
  if (d.acceptLen !== null)
    msg += `accept len: ${d.acceptLen.toFixed(2)}, accept rate: ${(d.acceptRate ?? 0).toFixed(2)}, `;
  return `${msg}cuda graph: True, gen throughput (token/s): ${d.genThroughput.toFixed(2)}, #queue-req: ${d.queued}, `;
}

// `Prefill batch, ...` (log_prefill_stats).
export function formatPrefillBatch(
  newSeq: number,
  newTokens: number,
  tokenUsage: number,
  running: number,
  queued: number,
): string {
  return (
    `Prefill batch, #new-seq: ${newSeq}, #new-token: ${newTokens}, #cached-token: 0, token usage: ${tokenUsage.toFixed(2)}, ` +
    `#running-req: ${running}, #queue-req: ${queued}, `
  );
}

/** What the per-request finish line reports. */
export interface FinishInfo {
  rid: string;
  finishReason: 'length' | 'stop';
  promptTokens: number;
  completionTokens: number;
  e2eLatency: number;
  specAcceptLength: number | null;
  specVerifyCt: number;
}

// The request logger's `Finish:` line, carrying the request id so a benchmark request is traceable.
export function formatFinish(f: FinishInfo): string {
  const reason =
    f.finishReason === 'length'
      ? `{'type': 'length', 'length': ${f.completionTokens}}`
      : `{'type': 'stop', 'matched': 151645}`;
  const spec =
    f.specAcceptLength === null
      ? ''
      : `, 'spec_accept_length': ${f.specAcceptLength.toFixed(4)}, 'spec_verify_ct': ${f.specVerifyCt}`;
  return (
    `Finish: obj=GenerateReqInput(rid='${f.rid}'), out={'meta_info': {'id': '${f.rid}', 'finish_reason': ${reason}, ` +
    `'prompt_tokens': ${f.promptTokens}, 'completion_tokens': ${f.completionTokens}, 'cached_tokens': 0${spec}, ` +
    `'e2e_latency': ${f.e2eLatency.toFixed(4)}}}`
  );
}

// The SIGTERM watchdog's round line, with Python's list repr of the remaining ids.
export function formatGracefulExit(rids: string[]): string {
  const list = rids.map((r) => `'${r}'`).join(', ');
  return `Gracefully exiting... Remaining number of requests ${rids.length}. Remaining requests remaining_rids=[${list}].`;
}
