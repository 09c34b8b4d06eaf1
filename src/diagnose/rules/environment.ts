// Environment family: the host's disk (disk_full), the software stack (dependency_error) and the tokenizer or chat
// template the model ships with (tokenizer_error): failures no engine flag fixes.
import type { DiagnosisRule } from '../types.js';

/** Rules for failures of the machine's disk, the installed packages and the model's tokenizer files. */
export const ENVIRONMENT_RULES: DiagnosisRule[] = [
  {
    id: 'os.no_space_left',
    class: 'disk_full',
    confidence: 'high',
    detail: 'no_space_left',
    title: 'A disk is full (No space left on device)',
    patterns: [
      /(?:\[Errno 28\] )?No space left on device(?:: '(?<path>[^']+)')?/,
      /\bENOSPC\b/,
      /Not enough free disk space to download the file/,
    ],
    remediation: [
      {
        text: 'free space where the engine writes (weights download dir HF_HOME / --download-dir, /tmp, kernel caches under ~/.cache): `df -h` names the full one',
      },
      { text: 'in containers, /dev/shm and the overlay root are small by default: raise --shm-size or mount a volume' },
    ],
  },
  {
    id: 'python.import_error',
    class: 'dependency_error',
    confidence: 'high',
    detail: 'import_error',
    title: 'A Python module or symbol could not be imported',
    patterns: [
      /^(?:ImportError|ModuleNotFoundError): (?<detail>.{1,300})/,
      /undefined symbol: (?<symbol>\S+)/,
      /\.so(?:\.\d+)*: cannot open shared object file/,
      /make_cpu_buft_list: no CPU backend found/,
    ],
    remediation: [
      {
        text: "the installed packages do not match: reinstall the engine with the torch / CUDA build it pins (same wheel index), or use the engine's own container image",
      },
    ],
  },

  {
    id: 'python.module_attribute_missing',
    class: 'dependency_error',
    confidence: 'medium',
    detail: 'api_mismatch',
    title: 'A module lacks an attribute the engine calls (installed package versions do not match)',
    patterns: [/^AttributeError: module '(?<module>[\w.]+)' has no attribute '(?<attribute>\w+)'/],
    remediation: [
      {
        text: 'install the versions the engine pins (a kernel library such as deep_gemm, flashinfer or triton is older or newer than expected)',
      },
    ],
  },
  {
    id: 'python.pydantic_major_mismatch',
    class: 'dependency_error',
    confidence: 'high',
    detail: 'pydantic_version',
    title: 'pydantic v1 code met pydantic v2 (or the reverse)',
    patterns: [/'FieldInfo' object has no attribute '(?<attribute>\w+)'/],
    remediation: [
      { text: 'install the pydantic major version the engine (and its dependencies such as outlines / fastapi) pin' },
    ],
  },
  {
    id: 'vllm.chat_warmup_frame',
    class: 'tokenizer_error',
    engines: ['vllm'],
    confidence: 'medium',
    fatal: false,
    refines: ['unknown'],
    title: 'The error was raised while vLLM warmed up its chat endpoint (renders the chat template)',
    patterns: [/File "[^"]*chat_completion\/serving\.py", line \d+, in warmup$/],
    remediation: [
      {
        text: 'check the chat template (--chat-template) and the tokenizer files: the warm-up renders one chat request',
      },
    ],
  },

  {
    id: 'hf.chat_template_missing',
    class: 'tokenizer_error',
    confidence: 'high',
    detail: 'chat_template',
    title: 'The model has no chat template (or it cannot be parsed)',
    patterns: [
      /tokenizer\.chat_template is not set and no template argument was passed/,
      /default chat template is no longer allowed, so you must provide a chat template/,
      /failed to parse chat template|Failed to apply chat template|chat template is not supported/i,
      /chat template comes with this model is not yet supported/,
      /The supplied chat template \(.*\) appears path-like, but doesn't exist/,
      /appears path-like, but doesn't exist!/,
      /what\(\): +Expected [\w ]+ at row \d+, column \d+/,
      /Expected iterable or object type in for loop: got \w+/,
    ],
    remediation: [
      {
        text: 'give the server a chat template (SGLang/vLLM --chat-template FILE, llama-server --chat-template / --jinja) or use the completions API',
      },
    ],
  },
];
