// Start-up family: the port is taken (port_in_use), the flags are wrong (bad_config), the model cannot be read
// (model_load_error).
import type { DiagnosisRule } from '../types.js';

const FREE_PORT = { text: 'another process owns the port (often a previous instance that did not exit): `ss -ltnp` to find it, or change --port', setting: 'port', direction: 'set' as const };

/** Rules for failures before the engine serves anything. */
export const STARTUP_RULES: DiagnosisRule[] = [
  {
    id: 'uvicorn.address_in_use', class: 'port_in_use', engines: ['sglang', 'vllm'], confidence: 'high',
    title: 'The HTTP port is already in use',
    patterns: [
      /\[Errno (?:98|48|10048)\] error while attempting to bind on address \((?<address>[^)]*)\)/,
      /OSError: \[Errno 98\] Address already in use/,
    ],
    remediation: [FREE_PORT],
  },
  {
    id: 'llamacpp.bind_failed', class: 'port_in_use', engines: ['llamacpp'], confidence: 'high',
    title: 'llama-server could not bind its HTTP socket',
    patterns: [/couldn't bind HTTP server socket(?:, hostname: (?<hostname>[^,]+), port: (?<port>\d+))?/],
    remediation: [FREE_PORT],
  },
  {
    id: 'python.argparse_error', class: 'bad_config', engines: ['sglang', 'vllm'], confidence: 'high',
    title: 'The engine rejected its command-line flags',
    patterns: [/: error: (?:unrecognized arguments: (?<unrecognized>.+)|argument (?<argument>-[\w-]+(?:\/-[\w-]+)*): (?<problem>.+)|the following arguments are required: (?<required>.+))$/],
    remediation: [{ text: 'fix the flag named in the error (spectune apply validates flags against the engine version)' }],
  },
  {
    id: 'config.validation_error', class: 'bad_config', engines: ['sglang', 'vllm'], confidence: 'high',
    title: 'The engine rejected its configuration',
    patterns: [/(?:pydantic_core\._pydantic_core\.)?ValidationError: (?<count>\d+) validation errors? for (?<config>\w+)/],
    remediation: [{ text: 'fix the configuration value named in the validation error' }],
  },
  {
    id: 'sglang.server_args_check', class: 'bad_config', engines: ['sglang'], confidence: 'medium', fatal: false, refines: ['unknown'],
    title: 'SGLang rejected its server arguments (error raised in server_args.py)',
    patterns: [/File "[^"]*server_args\.py", line \d+, in (?<check>\w+)$/],
    remediation: [{ text: 'the check in server_args.py names the conflicting flags; change one of them' }],
  },
  {
    id: 'llamacpp.invalid_argument', class: 'bad_config', engines: ['llamacpp'], confidence: 'high',
    title: 'llama-server rejected its command-line flags',
    patterns: [
      /error while handling argument "(?<argument>[^"]+)": the argument has been removed\. use (?<replacement>--[\w-]+)/,
      /error: invalid argument: (?<argument>\S+)/, /error while handling argument "(?<argument>[^"]+)"/,
    ],
    remediation: [{ text: 'fix the flag named in the error; a removed flag names its replacement (`llama-server --help` of this build lists the valid ones)' }],
  },
  {
    id: 'hf.model_files_missing', class: 'model_load_error', engines: ['sglang', 'vllm'], confidence: 'high',
    title: 'The model files could not be found or read',
    patterns: [
      /OSError: (?<model>\S+) does not appear to have a file named (?<file>[^\s.]+\.\w+)/,
      /(?:RepositoryNotFoundError|GatedRepoError|Repository Not Found for url|Access to model (?<model>\S+) is restricted)/,
      /FileNotFoundError: .*?(?<file>[^\s'"]+\.(?:safetensors|json|bin|gguf))/,
      /(?:SafetensorError|Error while deserializing header)/,
      /Cannot find any model weights with `(?<model>[^`]+)`/,
    ],
    remediation: [{ text: 'check --model-path / the model name, that the files are complete, and HF_TOKEN for gated models', setting: 'model_path', direction: 'set' }],
  },
  {
    id: 'llamacpp.model_load_failed', class: 'model_load_error', engines: ['llamacpp'], confidence: 'high',
    title: 'llama.cpp could not load the model file',
    patterns: [
      /llama_model_load: error loading model: (?<detail>.+)/,
      /gguf_init_from_file(?:_impl)?: (?<detail>failed to (?:open|read) .+)/,
      /failed to load model, '(?<model>[^']*)'/,
    ],
    remediation: [{ text: 'check the --model path and that the GGUF file is complete and supported by this build', setting: 'model', direction: 'set' }],
  },
  {
    id: 'llamacpp.exiting_load_error', class: 'model_load_error', engines: ['llamacpp'], confidence: 'low',
    title: 'llama-server gave up during model load (the lines above say why)',
    patterns: [/exiting due to model loading error/, /llama_model_load_from_file_impl: failed to load model/],
    remediation: [{ text: 'read the allocation or load error just above this line' }],
  },
];
