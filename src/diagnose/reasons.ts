// Why each plausible alternative was ruled out, in words an operator can check against the quoted lines.
import type { Death } from './death.js';
import type { DiagnosisClass } from './types.js';

/** What the reasons may refer to. */
export interface ReasonFacts {
  death: Death;
  kernelChecked: boolean;
  remaining: number | null;
  failedStarts: number;
  nRestarts: number | null;
}

/** The alternatives worth ruling out for each verdict (the ones an operator would suspect). */
export const ALTERNATIVES: Readonly<Record<DiagnosisClass, DiagnosisClass[]>> = {
  stop_timeout: ['host_oom_kill', 'external_kill', 'clean_stop', 'crash_loop'],
  clean_stop: ['host_oom_kill', 'external_kill', 'stop_timeout'],
  host_oom_kill: ['external_kill', 'cuda_oom', 'stop_timeout'],
  external_kill: ['host_oom_kill', 'stop_timeout', 'clean_stop'],
  kv_cache_oom: ['cuda_oom', 'host_oom_kill', 'cuda_graph_capture_failure'],
  cuda_oom: ['kv_cache_oom', 'host_oom_kill', 'cuda_graph_capture_failure'],
  cuda_graph_capture_failure: ['cuda_oom', 'kv_cache_oom', 'host_oom_kill'],
  crash_loop: ['stop_timeout', 'external_kill'],
  distributed_error: ['host_oom_kill', 'cuda_error', 'cuda_oom'],
  port_in_use: ['bad_config', 'host_oom_kill'],
  bad_config: ['model_load_error', 'speculative_error', 'port_in_use'],
  model_load_error: ['bad_config', 'host_oom_kill'],
  speculative_error: ['bad_config', 'kv_cache_oom'],
  cuda_error: ['cuda_oom', 'distributed_error', 'host_oom_kill'],
  unknown: ['host_oom_kill', 'stop_timeout', 'kv_cache_oom', 'cuda_oom', 'external_kill'],
  healthy: [],
  starting: [],
  disk_full: ['model_load_error', 'host_oom_kill'],
  tokenizer_error: ['model_load_error', 'bad_config'],
  dependency_error: ['model_load_error', 'cuda_error', 'bad_config'],
};

/** Characters of a quoted line inside a sentence. */
const QUOTE_IN_SENTENCE = 160;

// Shorten a quoted line for a sentence.
function clip(text: string): string {
  return text.length > QUOTE_IN_SENTENCE ? `${text.slice(0, QUOTE_IN_SENTENCE)}…` : text;
}

// What the process did, as context for "ruled out" sentences.
function story(f: ReasonFacts): string {
  const d = f.death;
  const l = d.life;
  const served =
    l.requests > 0 ? `the process served ${l.requests} request${l.requests === 1 ? '' : 's'}, then ` : 'the process ';
  if (d.class === 'stop_timeout') return `${served}exited after \`State 'stop-sigterm' timed out\``;
  if (d.class === 'clean_stop') return `${served}drained and exited on request`;
  if (d.decisive) return `${served}raised \`${clip(d.decisive.text)}\` (line ${d.decisive.line})`;
  return `${served}ended with ${l.marks.exit?.text ?? 'no exit record'}`;
}

// Why there was no OOM kill.
function notHostOom(f: ReasonFacts): string {
  const where = f.kernelChecked
    ? 'no OOM-killer record in the window (kernel log included)'
    : 'no OOM-killer record in the input (no kernel lines given, and no systemd OOM notice)';
  const exit = f.death.life.marks.exit?.fields;
  const nine = exit && exit.status === '9' ? '; status=9/KILL by itself is not proof of an OOM kill' : '';
  return `${where}; ${story(f)}${nine}`;
}

// Why it was not an outside kill.
function notExternalKill(f: ReasonFacts): string {
  const d = f.death;
  if (d.class === 'stop_timeout') return "the SIGKILL came from systemd itself after `State 'stop-sigterm' timed out`";
  if (d.class === 'clean_stop')
    return d.life.marks.exit?.fields.status === '9'
      ? 'the SIGKILL (status=9/KILL) is SGLang killing its own process tree after the drain reached 0'
      : 'the process exited on its own after the stop request';
  if (d.class === 'host_oom_kill')
    return `the kill is the kernel OOM killer's (${d.oom[0]?.text.slice(0, 100) ?? 'OOM record'})`;
  if (d.decisive) {
    const exit = d.life.marks.exit?.fields;
    return exit && exit.code !== 'killed'
      ? `the engine raised an error first (line ${d.decisive.line}) and exited with status ${exit.status}/${exit.name}; nothing killed it`
      : `the engine raised an error first (line ${d.decisive.line}); its own shutdown path killed the process tree`;
  }
  return 'no kill request (`systemctl kill`, action log) and no signal death in the window';
}

// Whether the input holds systemd's job lines for this lifetime: only then can it tell that no stop was requested.
function seesSystemd(f: ReasonFacts): boolean {
  const m = f.death.life.marks;
  return Boolean(m.starting || m.started || m.stopped || m.result || m.restart);
}

// Why it was not a clean stop.
function notCleanStop(f: ReasonFacts): string {
  const m = f.death.life.marks;
  if (f.remaining !== null && f.remaining > 0)
    return `the drain did not finish: ${f.remaining} request${f.remaining === 1 ? '' : 's'} still in flight when the process was killed`;
  if (!m.stop_requested && !m.sigterm)
    return seesSystemd(f)
      ? 'no stop was requested before the process died'
      : "the input has no stop request (it holds none of systemd's lines, so it cannot show one)";
  return 'the process did not exit cleanly after the stop request';
}

// Why it was not a stop timeout.
function notStopTimeout(f: ReasonFacts): string {
  const m = f.death.life.marks;
  if (m.stop_requested || m.sigterm)
    return "no `State 'stop-sigterm' timed out` line: the stop finished within TimeoutStopSec";
  return seesSystemd(f)
    ? "no stop was requested and no `State 'stop-sigterm' timed out` line"
    : "no `State 'stop-sigterm' timed out` line and no stop request in the input";
}

/** Sentences for classes ruled out by the absence of their signature lines. */
const ABSENT: Partial<Record<DiagnosisClass, string>> = {
  kv_cache_oom:
    'no KV-pool sizing error ("Not enough memory…", "No available memory for the cache blocks", "failed to allocate buffer for kv cache")',
  cuda_oom: 'no allocator out-of-memory line ("CUDA out of memory", "cudaMalloc failed: out of memory")',
  cuda_graph_capture_failure: 'no CUDA-graph capture failure ("Capture cuda graph failed", error under capture_model)',
  distributed_error: 'no NCCL / torch.distributed error',
  cuda_error: 'no CUDA runtime error and no NVRM Xid line',
  bad_config: 'the engine accepted its flags (no argument or validation error)',
  model_load_error: 'no model-file error',
  speculative_error: 'no speculative-decoding set-up error',
  port_in_use: 'no bind error: the port was free',
  disk_full: 'no "No space left on device" line',
  tokenizer_error: 'no tokenizer or chat-template error',
  dependency_error: 'no import, undefined-symbol or library-version error',
};

// Why one alternative class does not explain this incident.
export function whyNot(cls: DiagnosisClass, f: ReasonFacts): string {
  if (cls === 'host_oom_kill') return notHostOom(f);
  if (cls === 'external_kill') return notExternalKill(f);
  if (cls === 'clean_stop') return notCleanStop(f);
  if (cls === 'stop_timeout') return notStopTimeout(f);
  if (cls === 'crash_loop')
    return `only ${Math.max(f.failedStarts, 0)} failed start${f.failedStarts === 1 ? '' : 's'} in the window${f.nRestarts !== null ? ` (NRestarts=${f.nRestarts})` : ''}; this was a single stop, not a restart loop`;
  if (cls === 'cuda_oom' && f.death.class === 'kv_cache_oom')
    return 'not an allocator OOM: the KV-pool sizing check failed after the weights loaded, so the pool needs more memory (mem_fraction_static / gpu_memory_utilization up, or smaller context), not less';
  return ABSENT[cls] ?? `no evidence line for ${cls}`;
}

// Why a class that did match a line lost to the verdict.
export function whyOutranked(cls: DiagnosisClass, line: number, ruleId: string, verdict: DiagnosisClass): string {
  const lead = `line ${line} matched ${ruleId}, but`;
  if (verdict === 'cuda_graph_capture_failure')
    return `${lead} the error was raised while capturing CUDA graphs, which is the more specific failure`;
  if (cls === 'distributed_error')
    return `${lead} NCCL errors here are the echo of the ${verdict} that took a rank down`;
  if (cls === 'model_load_error') return `${lead} that line only reports giving up; the ${verdict} above it is why`;
  return `${lead} ${verdict} is the more specific explanation of the same failure`;
}
