// Start-up family: the port is taken (port_in_use), the flags are wrong (bad_config), the model cannot be read
// (model_load_error).
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
  {
    id: 'hf.trust_remote_code',
    class: 'bad_config',
    confidence: 'high',
    detail: 'trust_remote_code',
    title: 'The model needs its own code and --trust-remote-code was not given',
    patterns: [
      /requires you to execute the configuration file in that repo on your local machine/,
      /set the option `trust_remote_code=True` to remove this error/,
    ],
    remediation: [
      {
        text: "add --trust-remote-code (after reviewing the model repository's code)",
        setting: 'trust_remote_code',
        direction: 'set',
        value: true,
      },
    ],
  },
  {
    id: 'llamacpp.v_cache_needs_flash_attn',
    class: 'bad_config',
    engines: ['llamacpp'],
    confidence: 'high',
    detail: 'kv_cache_type',
    title: 'A quantized V cache was asked for without Flash Attention',
    patterns: [
      /V cache quantization requires flash_attn/,
      /quantized V cache was requested, but this requires Flash Attention/,
    ],
    remediation: [
      { text: 'add --flash-attn on, or keep --cache-type-v f16', setting: 'flash_attn', direction: 'set', value: 'on' },
    ],
  },
  {
    id: 'vllm.config_frame',
    class: 'bad_config',
    engines: ['vllm'],
    confidence: 'medium',
    fatal: false,
    refines: ['unknown'],
    title: 'The error was raised while vLLM validated its configuration (config.py / arg_utils.py)',
    patterns: [/File "[^"]*vllm\/(?:config(?:\/\w+)?|engine\/arg_utils)\.py", line \d+, in (?<check>\w+)$/],
    remediation: [{ text: "the check in vLLM's config names the conflicting settings; change one of them" }],
  },
  {
    id: 'hf.unsupported_architecture',
    class: 'model_load_error',
    confidence: 'high',
    detail: 'unsupported_architecture',
    title: 'The engine does not support this model architecture',
    patterns: [
      /Model architectures? \[(?<architectures>[^\]]*)\] (?:are|is) not supported/,
      /unknown model architecture: '(?<architecture>[^']+)'/,
    ],
    remediation: [
      { text: 'use an engine version that supports the architecture (release notes), or a supported checkpoint' },
    ],
  },
  {
    id: 'hf.unrecognized_model_type',
    class: 'dependency_error',
    confidence: 'medium',
    detail: 'transformers_too_old',
    refines: ['bad_config'],
    title:
      "Transformers does not know the checkpoint's model type (transformers older than the model, or an unsupported model)",
    patterns: [/has model type `(?<model_type>[^`]+)` but Transformers does not recognize this architecture/],
    remediation: [
      {
        text: 'upgrade transformers to a version that knows this model type, or check that the model is supported by the engine',
      },
    ],
  },
  {
    id: 'weights.key_error',
    class: 'model_load_error',
    confidence: 'high',
    detail: 'weights_mismatch',
    title:
      'A weight in the checkpoint has no place in the model (or the reverse): the checkpoint does not match the model code',
    patterns: [/^KeyError: '(?<param>[\w.]*(?:weight|bias|scale|absmax|qweight|qzeros|scales|g_idx)[\w.]*)'$/],
    remediation: [
      {
        text: "the checkpoint layout does not match this engine version's model code (quantization format, MoE/EP layout, tied lm_head): use a supported checkpoint or engine version",
      },
    ],
  },
  {
    id: 'lora.target_modules',
    class: 'model_load_error',
    engines: ['vllm'],
    confidence: 'high',
    detail: 'lora_modules',
    title: 'The LoRA adapter targets modules this model (or engine) does not support',
    patterns: [/expected target modules in \[[^\]]*\] but received \[/],
    remediation: [
      {
        text: 'the adapter was trained on modules vLLM cannot apply LoRA to: retrain on the supported target modules or merge the adapter into the weights',
      },
    ],
  },
  {
    id: 'weights.load_frame',
    class: 'model_load_error',
    confidence: 'medium',
    fatal: false,
    refines: ['unknown'],
    title: 'The error was raised while loading the weights (load_weights)',
    patterns: [/File "[^"]*", line \d+, in (?<where>load_weights|load_model|_load_weights|weight_loader)$/],
    remediation: [
      { text: 'the checkpoint does not load with this model code: check its format and the engine version' },
    ],
  },
  {
    id: 'hf.download_failed',
    class: 'model_load_error',
    confidence: 'medium',
    detail: 'download_failed',
    title: 'The model could not be downloaded',
    patterns: [
      /get_repo_files: error: GET failed \((?<status>\d+)\)/,
      /(?:HTTP Error|status code) (?<status>429|401|403)\b.*(?:huggingface|hf\.co)/,
    ],
    remediation: [
      {
        text: 'check the network, HF_TOKEN and the rate limit; pre-download the model and point the server at the local path',
      },
    ],
  },
  {
    id: 'hf.model_files_missing',
    class: 'model_load_error',
    engines: ['sglang', 'vllm'],
    confidence: 'high',
    title: 'The model files could not be found or read',
    patterns: [
      /OSError: (?<model>\S+) does not appear to have a file named (?<file>[^\s.]+\.\w+)/,
      /(?:RepositoryNotFoundError|GatedRepoError|Repository Not Found for url|Access to model (?<model>\S+) is restricted)/,
      /FileNotFoundError: .*?(?<file>[^\s'"]+\.(?:safetensors|json|bin|gguf))/,
      /(?:SafetensorError|Error while deserializing header)/,
      /Cannot find any model weights with `(?<model>[^`]+)`/,
    ],
    remediation: [
      {
        text: 'check --model-path / the model name, that the files are complete, and HF_TOKEN for gated models',
        setting: 'model_path',
        direction: 'set',
      },
    ],
  },
  {
    id: 'llamacpp.model_load_failed',
    class: 'model_load_error',
    engines: ['llamacpp'],
    confidence: 'high',
    title: 'llama.cpp could not load the model file',
    patterns: [
      /llama_model_load: error loading model: (?!unable to allocate|make_cpu_buft_list: no CPU backend)(?<detail>.+)/,
      /gguf_init_from_file(?:_impl)?: (?<detail>failed to (?:open|read) .+)/,
    ],
    remediation: [
      {
        text: 'check the --model path and that the GGUF file is complete and supported by this build',
        setting: 'model',
        direction: 'set',
      },
    ],
  },
  {
    id: 'llamacpp.exiting_load_error',
    class: 'model_load_error',
    engines: ['llamacpp'],
    confidence: 'low',
    title: 'llama-server gave up during model load (the lines above say why)',
    patterns: [
      /exiting due to model loading error/,
      /llama_model_load_from_file_impl: failed to load model/,
      /failed to load model, '(?<model>[^']*)'/,
    ],
    remediation: [{ text: 'read the allocation or load error just above this line' }],
  },
];
