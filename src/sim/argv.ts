// SGLang's launch_server flags, parsed the way Python's argparse does, plus the simulator's own --sim-* flags (pure).

/** How argparse would convert one flag's value. */
type FlagType = 'str' | 'int' | 'float' | 'bool';

interface FlagSpec {
  /** ServerArgs field name. */
  dest: string;
  type: FlagType;
  choices?: readonly string[];
  /** Repeatable (the values are collected in a list). */
  append?: boolean;
}

const SPEC_ALGORITHMS = ['EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM'] as const;

/** Flags the simulator understands; the first spelling is SGLang's canonical one, the rest its aliases. */
const FLAGS: Record<string, FlagSpec> = {
  '--model-path': { dest: 'model_path', type: 'str' },
  '--model': { dest: 'model_path', type: 'str' },
  '--tokenizer-path': { dest: 'tokenizer_path', type: 'str' },
  '--served-model-name': { dest: 'served_model_name', type: 'str' },
  '--host': { dest: 'host', type: 'str' },
  '--port': { dest: 'port', type: 'int' },
  '--tp-size': { dest: 'tp_size', type: 'int' },
  '--tensor-parallel-size': { dest: 'tp_size', type: 'int' },
  '--tp': { dest: 'tp_size', type: 'int' },
  '--dp-size': { dest: 'dp_size', type: 'int' },
  '--mem-fraction-static': { dest: 'mem_fraction_static', type: 'float' },
  '--cuda-graph-max-bs': { dest: 'cuda_graph_max_bs', type: 'int' },
  '--disable-cuda-graph': { dest: 'disable_cuda_graph', type: 'bool' },
  '--max-running-requests': { dest: 'max_running_requests', type: 'int' },
  '--max-total-tokens': { dest: 'max_total_tokens', type: 'int' },
  '--context-length': { dest: 'context_length', type: 'int' },
  '--chunked-prefill-size': { dest: 'chunked_prefill_size', type: 'int' },
  '--page-size': { dest: 'page_size', type: 'int' },
  '--speculative-algorithm': { dest: 'speculative_algorithm', type: 'str', choices: SPEC_ALGORITHMS },
  '--speculative-draft-model-path': { dest: 'speculative_draft_model_path', type: 'str' },
  '--speculative-num-steps': { dest: 'speculative_num_steps', type: 'int' },
  '--speculative-eagle-topk': { dest: 'speculative_eagle_topk', type: 'int' },
  '--speculative-num-draft-tokens': { dest: 'speculative_num_draft_tokens', type: 'int' },
  '--nnodes': { dest: 'nnodes', type: 'int' },
  '--node-rank': { dest: 'node_rank', type: 'int' },
  '--dist-init-addr': { dest: 'dist_init_addr', type: 'str' },
  '--api-key': { dest: 'api_key', type: 'str' },
  '--enable-metrics': { dest: 'enable_metrics', type: 'bool' },
  '--log-requests': { dest: 'log_requests', type: 'bool' },
  '--decode-log-interval': { dest: 'decode_log_interval', type: 'int' },
  '--watchdog-timeout': { dest: 'watchdog_timeout', type: 'float' },
  '--skip-server-warmup': { dest: 'skip_server_warmup', type: 'bool' },
  '--trust-remote-code': { dest: 'trust_remote_code', type: 'bool' },
  '--kv-cache-dtype': { dest: 'kv_cache_dtype', type: 'str' },
  '--attention-backend': { dest: 'attention_backend', type: 'str' },
  '--reasoning-parser': { dest: 'reasoning_parser', type: 'str' },
  '--tool-call-parser': { dest: 'tool_call_parser', type: 'str' },
  '--log-level': { dest: 'log_level', type: 'str' },
  '--random-seed': { dest: 'random_seed', type: 'int' },
  '--dtype': { dest: 'dtype', type: 'str' },
  '--quantization': { dest: 'quantization', type: 'str' },
  '--load-format': { dest: 'load_format', type: 'str' },
  '--chat-template': { dest: 'chat_template', type: 'str' },
  '--device': { dest: 'device', type: 'str' },
  '--data-parallel-size': { dest: 'dp_size', type: 'int' },
  '--dp': { dest: 'dp_size', type: 'int' },
  '--ep-size': { dest: 'ep_size', type: 'int' },
  '--max-prefill-tokens': { dest: 'max_prefill_tokens', type: 'int' },
  '--max-queued-requests': { dest: 'max_queued_requests', type: 'int' },
  '--schedule-conservativeness': { dest: 'schedule_conservativeness', type: 'float' },
  '--stream-interval': { dest: 'stream_interval', type: 'int' },
  '--cpu-offload-gb': { dest: 'cpu_offload_gb', type: 'int' },
  '--torch-compile-max-bs': { dest: 'torch_compile_max_bs', type: 'int' },
  '--dist-timeout': { dest: 'dist_timeout', type: 'int' },
  '--nccl-port': { dest: 'nccl_port', type: 'int' },
  '--log-requests-level': { dest: 'log_requests_level', type: 'int' },
  '--mamba-ssm-dtype': { dest: 'mamba_ssm_dtype', type: 'str' },
  '--moe-runner-backend': { dest: 'moe_runner_backend', type: 'str' },
  '--fp4-gemm-backend': { dest: 'fp4_gemm_backend', type: 'str' },
  '--speculative-draft-model-revision': { dest: 'speculative_draft_model_revision', type: 'str' },
  '--disable-radix-cache': { dest: 'disable_radix_cache', type: 'bool' },
  '--disable-custom-all-reduce': { dest: 'disable_custom_all_reduce', type: 'bool' },
  '--disable-overlap-schedule': { dest: 'disable_overlap_schedule', type: 'bool' },
  '--enable-torch-compile': { dest: 'enable_torch_compile', type: 'bool' },
  '--enable-ep-moe': { dest: 'enable_ep_moe', type: 'bool' },
  '--enable-dp-attention': { dest: 'enable_dp_attention', type: 'bool' },
  '--enable-mixed-chunk': { dest: 'enable_mixed_chunk', type: 'bool' },
  '--enable-p2p-check': { dest: 'enable_p2p_check', type: 'bool' },
  '--enable-cache-report': { dest: 'enable_cache_report', type: 'bool' },
  '--allow-auto-truncate': { dest: 'allow_auto_truncate', type: 'bool' },
  '--show-time-cost': { dest: 'show_time_cost', type: 'bool' },
  '--sim-profile': { dest: 'sim_profile', type: 'str' },
  '--sim-time-scale': { dest: 'sim_time_scale', type: 'float' },
  '--sim-fault': { dest: 'sim_fault', type: 'str', append: true },
  '--sim-hold-memory': { dest: 'sim_hold_memory', type: 'bool' },
  '--sim-seed': { dest: 'sim_seed', type: 'int' },
};

/** Flags that must be present, as argparse names them. SGLang requires --model-path; the simulator defaults it from the profile. */
const REQUIRED: { dest: string; name: string }[] = [];

/** Parsed flags keyed by ServerArgs field name. */
export type ParsedArgs = Record<string, string | number | boolean | string[]>;

/** argparse wraps usage at the terminal width minus 2; without a terminal (systemd) that is 80 - 2. */
const USAGE_WIDTH = 78;
/** argparse's prog for `python -m sglang.launch_server`. */
export const PROG = 'launch_server.py';

// The usage block argparse prints before an error (shortened to the flags the simulator knows).
export function renderUsage(): string {
  const seen = new Set<string>();
  const parts = ['[-h]'];
  for (const [flag, spec] of Object.entries(FLAGS)) {
    if (seen.has(spec.dest)) continue;
    seen.add(spec.dest);
    const meta =
      spec.type === 'bool' ? '' : ` ${spec.choices ? `{${spec.choices.join(',')}}` : spec.dest.toUpperCase()}`;
    parts.push(`[${flag}${meta}]`);
  }
  const lines: string[] = [];
  let line = `usage: ${PROG}`;
  for (const p of parts) {
    if (line.length + p.length + 1 > USAGE_WIDTH) {
      lines.push(line);
      line = ' '.repeat(`usage: ${PROG}`.length);
    }
    line += ` ${p}`;
  }
  lines.push(line);
  return lines.join('\n');
}

// Convert one value as argparse's type= would, or return its error text.
function convertValue(flag: string, spec: FlagSpec, raw: string): string | number | { error: string } {
  if (spec.type === 'int') {
    if (!/^[-+]?\d+$/.test(raw.trim())) return { error: `argument ${flag}: invalid int value: '${raw}'` };
    return parseInt(raw, 10);
  }
  if (spec.type === 'float') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) return { error: `argument ${flag}: invalid float value: '${raw}'` };
    return n;
  }
  if (spec.choices && !spec.choices.includes(raw)) {
    return {
      error: `argument ${flag}: invalid choice: '${raw}' (choose from ${spec.choices.map((c) => `'${c}'`).join(', ')})`,
    };
  }
  return raw;
}

// A flag as typed → its full spelling: exact, or an unambiguous prefix (argparse's allow_abbrev); null when unknown.
function resolveFlag(typed: string): string | null | { error: string } {
  if (FLAGS[typed]) return typed;
  if (!typed.startsWith('--') || typed.length < 3) return null;
  const hits = Object.keys(FLAGS).filter((f) => f.startsWith(typed));
  if (hits.length === 1) return hits[0];
  if (hits.length > 1) return { error: `ambiguous option: ${typed} could match ${hits.join(', ')}` };
  return null;
}

// Parse an argv like argparse: `--flag value` and `--flag=value`; an error carries argparse's exact message.
export function parseSglangArgs(argv: string[]): { ok: true; args: ParsedArgs } | { ok: false; error: string } {
  const args: ParsedArgs = {};
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    const eq = tok.startsWith('--') ? tok.indexOf('=') : -1;
    const match = resolveFlag(eq > 0 ? tok.slice(0, eq) : tok);
    if (match === null) {
      unknown.push(tok);
      continue;
    }
    if (typeof match === 'object') return { ok: false, error: match.error };
    const flag = match;
    const spec = FLAGS[flag];
    if (spec.type === 'bool') {
      if (eq > 0) return { ok: false, error: `argument ${flag}: ignored explicit argument '${tok.slice(eq + 1)}'` };
      args[spec.dest] = true;
      continue;
    }
    const raw = eq > 0 ? tok.slice(eq + 1) : argv[++i];
    if (raw === undefined || (eq < 0 && raw.startsWith('--')))
      return { ok: false, error: `argument ${flag}: expected one argument` };
    const value = convertValue(flag, spec, raw);
    if (typeof value === 'object') return { ok: false, error: value.error };
    if (spec.append) args[spec.dest] = [...((args[spec.dest] as string[] | undefined) ?? []), String(value)];
    else args[spec.dest] = value;
  }
  const missing = REQUIRED.filter((r) => args[r.dest] === undefined).map((r) => r.name);
  if (missing.length) return { ok: false, error: `the following arguments are required: ${missing.join(', ')}` };
  if (unknown.length) return { ok: false, error: `unrecognized arguments: ${unknown.join(' ')}` };
  return { ok: true, args };
}

// The full stderr text of an argparse failure (exit status 2).
export function renderArgError(error: string): string {
  return `${renderUsage()}\n${PROG}: error: ${error}\n`;
}
