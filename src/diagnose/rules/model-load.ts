// Model-load family (the second half of start-up): the model's code, architecture, weights or adapters cannot be read
// (bad_config, model_load_error).
import type { DiagnosisRule } from '../types.js';

/** Rules for a model that cannot be loaded: remote code, architecture, weight keys, LoRA modules. */
export const MODEL_LOAD_RULES: DiagnosisRule[] = [
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
