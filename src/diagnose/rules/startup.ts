// Start-up family: the port is taken (port_in_use), the flags are wrong (bad_config). The model that cannot be read
// (model_load_error) is in model-load.ts.
import type { DiagnosisRule } from '../types.js';

const FREE_PORT = {
  text: 'another process owns the port (often a previous instance that did not exit): `ss -ltnp` to find it, or change --port',
  setting: 'port',
  direction: 'set' as const,
};

/** Rules for failures before the engine serves anything. */
export const STARTUP_RULES: DiagnosisRule[] = [
  {
    id: 'uvicorn.address_in_use',
    class: 'port_in_use',
    engines: ['sglang', 'vllm'],
    confidence: 'high',
    title: 'The HTTP port is already in use',
    patterns: [
      /\[Errno (?:98|48|10048)\] error while attempting to bind on address \((?<address>[^)]*)\)/,
      /OSError: \[Errno 98\] Address already in use/,
    ],
    remediation: [FREE_PORT],
  },
  {
    id: 'net.address_in_use',
    class: 'port_in_use',
    confidence: 'high',
    detail: 'address_in_use',
    title: 'A port the engine needs (HTTP, metrics, dist-init or KV transfer) is already in use',
    patterns: [/\bEADDRINUSE\b/, /[Aa]ddress already in use/],
    remediation: [
      FREE_PORT,
      {
        text: 'for the dist-init / NCCL / KV-transfer ports: a previous instance may still hold them; wait for it to exit or pick other ports',
      },
    ],
  },
  {
    id: 'llamacpp.bind_failed',
    class: 'port_in_use',
    engines: ['llamacpp'],
    confidence: 'medium',
    title: 'llama-server could not bind its HTTP socket (port taken, or an address this host does not have)',
    patterns: [/couldn't bind HTTP server socket(?:, hostname: (?<hostname>[^,]+), port: (?<port>\d+))?/],
    remediation: [FREE_PORT],
  },
  {
    id: 'python.argparse_error',
    class: 'bad_config',
    engines: ['sglang', 'vllm'],
    confidence: 'high',
    title: 'The engine rejected its command-line flags',
    patterns: [
      /: error: (?:unrecognized arguments: (?<unrecognized>.+)|argument (?<argument>-[\w-]+(?:\/-[\w-]+)*): (?<problem>.+)|the following arguments are required: (?<required>.+))$/,
    ],
    remediation: [
      { text: 'fix the flag named in the error (spectune apply validates flags against the engine version)' },
    ],
  },
  {
    id: 'config.validation_error',
    class: 'bad_config',
    engines: ['sglang', 'vllm'],
    confidence: 'high',
    title: 'The engine rejected its configuration',
    patterns: [
      /(?:pydantic_core\._pydantic_core\.)?ValidationError: (?<count>\d+) validation errors? for (?<config>\w+)(?!.*does not recognize this architecture)/,
    ],
    remediation: [{ text: 'fix the configuration value named in the validation error' }],
  },
  {
    id: 'sglang.server_args_check',
    class: 'bad_config',
    engines: ['sglang'],
    confidence: 'medium',
    fatal: false,
    refines: ['unknown'],
    title: 'SGLang rejected its server arguments (error raised in server_args.py)',
    patterns: [/File "[^"]*server_args\.py", line \d+, in (?<check>\w+)$/],
    remediation: [{ text: 'the check in server_args.py names the conflicting flags; change one of them' }],
  },
  {
    id: 'llamacpp.invalid_argument',
    class: 'bad_config',
    engines: ['llamacpp'],
    confidence: 'high',
    title: 'llama-server rejected its command-line flags',
    patterns: [
      /error while handling argument "(?<argument>[^"]+)": the argument has been removed\. use (?<replacement>--[\w-]+)/,
      /error: invalid argument: (?<argument>\S+)/,
      /error while handling argument "(?<argument>[^"]+)"/,
    ],
    remediation: [
      {
        text: 'fix the flag named in the error; a removed flag names its replacement (`llama-server --help` of this build lists the valid ones)',
      },
    ],
  },
  {
    id: 'config.parallel_divisibility',
    class: 'bad_config',
    confidence: 'high',
    detail: 'parallel_size',
    title: 'The model cannot be split over this many GPUs',
    patterns: [
      /(?:Total number of attention heads|number of (?:attention |key.value )?heads) \((?<heads>\d+)\) must be divisible by tensor parallel size \((?<tp>\d+)\)/i,
      /must be divisible by (?:the )?(?:tensor|pipeline) parallel size/i,
    ],
    remediation: [
      {
        text: 'choose a tensor-parallel size that divides the number of attention heads (and KV heads)',
        setting: 'tensor_parallel_size',
        direction: 'set',
      },
    ],
  },
  {
    id: 'config.assert_divisible',
    class: 'bad_config',
    confidence: 'medium',
    detail: 'parallel_size',
    title: 'A divisibility check of the configuration failed (usually heads or experts vs the parallel size)',
    patterns: [/^AssertionError: (?<a>\d+) is not divisible by (?<b>\d+)$/],
    remediation: [
      {
        text: "choose parallel sizes that divide the model's heads / experts",
        setting: 'tensor_parallel_size',
        direction: 'set',
      },
    ],
  },
  {
    id: 'config.gpu_capability',
    class: 'bad_config',
    confidence: 'high',
    detail: 'unsupported_on_this_gpu',
    title: 'A chosen dtype or quantization needs a newer GPU than this one',
    patterns: [
      /Bfloat16 is only supported on GPUs with compute capability of at least (?<need>[\d.]+)/,
      /The quantization method (?<quantization>\S+) is not supported for the current GPU/,
    ],
    remediation: [
      {
        text: 'pick a dtype / quantization this GPU supports (e.g. --dtype half on compute capability < 8.0)',
        setting: 'dtype',
        direction: 'set',
      },
    ],
  },
  {
    id: 'config.lora_rank',
    class: 'bad_config',
    engines: ['vllm'],
    confidence: 'high',
    detail: 'lora_rank',
    title: 'A LoRA adapter has a higher rank than --max-lora-rank',
    patterns: [/LoRA rank (?<rank>\d+) is greater than max_lora_rank (?<max_lora_rank>\d+)/],
    remediation: [
      { text: "raise --max-lora-rank to the adapter's rank", setting: 'max_lora_rank', direction: 'increase' },
    ],
  },
];
