// Memory family: the KV pool does not fit (kv_cache_oom) and GPU allocations fail (cuda_oom).
import type { DiagnosisRule } from '../types.js';

/** Rules for GPU memory exhaustion, per engine dialect. */
export const MEMORY_RULES: DiagnosisRule[] = [
  {
    id: 'sglang.kv_pool_not_enough_memory',
    class: 'kv_cache_oom',
    engines: ['sglang'],
    confidence: 'high',
    title: 'SGLang found no room for the KV cache after loading the weights',
    patterns: [
      /Not enough memory\. Please try to increase --mem-fraction-static\.(?: Current value: mem_fraction_static=(?<mem_fraction_static>[\d.]+))?/,
    ],
    remediation: [
      {
        text: 'raise --mem-fraction-static so the KV pool gets memory (e.g. +0.03 at a time)',
        setting: 'mem_fraction_static',
        direction: 'increase',
      },
      {
        text: 'or shrink what sits beside the KV pool: fewer speculative steps (each adds a draft token per request)',
        setting: 'speculative_num_steps',
        direction: 'decrease',
      },
      { text: 'or capture CUDA graphs for fewer batch sizes', setting: 'cuda_graph_max_bs', direction: 'decrease' },
    ],
  },
  {
    id: 'sglang.weights_leave_no_kv',
    class: 'kv_cache_oom',
    engines: ['sglang'],
    confidence: 'high',
    detail: 'no_room_after_weights',
    title: 'SGLang: the weights leave no GPU memory for the KV cache under --mem-fraction-static',
    patterns: [
      /Loaded weights leave no GPU memory for the KV cache(?: under --mem-fraction-static=(?<mem_fraction_static>[\d.]+))?/,
      /Not enough host memory available/,
    ],
    remediation: [
      {
        text: 'raise --mem-fraction-static (the weights alone take more than that share) or shard the model over more GPUs',
        setting: 'mem_fraction_static',
        direction: 'increase',
      },
    ],
  },
  {
    id: 'sglang.prefill_out_of_memory',
    class: 'kv_cache_oom',
    engines: ['sglang'],
    confidence: 'high',
    detail: 'prefill_pool_exhausted',
    title: 'SGLang: a prefill found no room in the KV pool',
    patterns: [/Prefill out of memory\. Try to lower your batch size\./],
    remediation: [
      {
        text: 'lower --chunked-prefill-size / --max-prefill-tokens or --max-running-requests, or give the KV pool more memory',
        setting: 'chunked_prefill_size',
        direction: 'decrease',
      },
    ],
  },
  {
    id: 'vllm.mamba_cache_blocks',
    class: 'kv_cache_oom',
    engines: ['vllm'],
    confidence: 'high',
    detail: 'mamba_cache_blocks',
    title: 'vLLM: max_num_seqs exceeds the Mamba (state) cache blocks that fit',
    patterns: [/max_num_seqs \((?<max_num_seqs>\d+)\) exceeds available Mamba cache blocks \((?<blocks>\d+)\)/],
    remediation: [
      {
        text: 'lower --max-num-seqs below the available blocks or raise --gpu-memory-utilization',
        setting: 'max_num_seqs',
        direction: 'decrease',
      },
    ],
  },
  {
    id: 'vllm.no_kv_cache_blocks',
    class: 'kv_cache_oom',
    engines: ['vllm'],
    confidence: 'high',
    title: 'vLLM has no memory left for KV cache blocks',
    patterns: [/No available memory for the cache blocks/],
    remediation: [
      { text: 'raise --gpu-memory-utilization', setting: 'gpu_memory_utilization', direction: 'increase' },
      { text: 'or lower --max-model-len / --max-num-seqs', setting: 'max_model_len', direction: 'decrease' },
    ],
  },
  {
    id: 'vllm.kv_too_small_for_max_len',
    class: 'kv_cache_oom',
    engines: ['vllm'],
    confidence: 'high',
    title: 'vLLM KV cache cannot hold one request of max_model_len',
    patterns: [
      /To serve at least one request with the models?'s max seq len \((?<max_model_len>\d+)\),(?: \((?<needed_gib>[\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory \((?<available_gib>-?[\d.]+) GiB\)(?:\. Based on the available memory, the estimated maximum model length is (?<estimated_max_len>\d+))?)?/,
      /The model's max seq len \((?<max_model_len>\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((?<kv_tokens>\d+)\)/,
    ],
    remediation: [
      { text: 'lower --max-model-len to what the KV cache can hold', setting: 'max_model_len', direction: 'decrease' },
      { text: 'or raise --gpu-memory-utilization', setting: 'gpu_memory_utilization', direction: 'increase' },
    ],
  },
  {
    id: 'vllm.free_memory_below_utilization',
    class: 'cuda_oom',
    engines: ['vllm'],
    confidence: 'medium',
    detail: 'memory_held_at_startup',
    title: 'Less free GPU memory at start-up than --gpu-memory-utilization asks for',
    patterns: [
      /Free memory on device (?<device>\S*) ?\((?<free_gib>[\d.]+)\/(?<total_gib>[\d.]+) GiB\) on startup is less than(?: desired GPU memory utilization \((?<gpu_memory_utilization>[\d.]+))?/,
    ],
    remediation: [
      {
        text: 'another process holds the GPU (often an orphaned VLLM::EngineCore): find it with nvidia-smi and stop it',
      },
      { text: 'or lower --gpu-memory-utilization', setting: 'gpu_memory_utilization', direction: 'decrease' },
    ],
  },
  {
    id: 'llamacpp.kv_buffer_alloc_failed',
    class: 'kv_cache_oom',
    engines: ['llamacpp'],
    confidence: 'high',
    title: 'llama.cpp could not allocate the KV cache buffer',
    patterns: [/failed to allocate buffer for kv cache/],
    remediation: [
      { text: 'lower --ctx-size (the KV cache grows with it)', setting: 'ctx_size', direction: 'decrease' },
      { text: 'or offload fewer layers to the GPU', setting: 'n_gpu_layers', direction: 'decrease' },
    ],
  },
  {
    // Captured on an H200 (test/fixtures/journal/llamacpp/real-gpu-draft-no-fit): the target loads, the draft's
    // cudaMalloc fails, and llama-server reports "failed to load draft model" — a GPU memory failure, not a bad draft.
    id: 'llamacpp.draft_cuda_oom',
    class: 'cuda_oom',
    engines: ['llamacpp'],
    confidence: 'high',
    fatal: false,
    refines: ['speculative_error'],
    title: 'The draft model did not fit in the GPU memory the target left',
    patterns: [/allocating (?<alloc_mib>[\d.]+) MiB on device (?<device>\d+): cudaMalloc failed: out of memory/],
    remediation: [
      {
        text: 'target and draft do not fit together: offload fewer draft layers (-ngld) or keep the draft on the CPU',
        setting: 'spec_draft_ngl',
        direction: 'decrease',
      },
      {
        text: 'or make room: lower --ctx-size (the target KV cache), or free the GPU memory other processes hold (nvidia-smi)',
        setting: 'ctx_size',
        direction: 'decrease',
      },
    ],
  },
  {
    id: 'llamacpp.cuda_malloc_oom',
    class: 'cuda_oom',
    engines: ['llamacpp'],
    confidence: 'high',
    title: 'llama.cpp cudaMalloc ran out of GPU memory',
    patterns: [
      /allocating (?<alloc_mib>[\d.]+) MiB on device (?<device>\d+): cudaMalloc failed: out of memory/,
      /cudaMalloc failed: out of memory/,
      /failed to allocate compute (?:pp )?buffers/,
      /unable to allocate (?<backend>CUDA|ROCm|Metal|Vulkan|SYCL)\d* buffer/,
    ],
    remediation: [
      { text: 'offload fewer layers to the GPU', setting: 'n_gpu_layers', direction: 'decrease' },
      { text: 'or lower --ctx-size / --batch-size', setting: 'ctx_size', direction: 'decrease' },
    ],
  },
  {
    id: 'sglang.torch_cuda_oom',
    class: 'cuda_oom',
    engines: ['sglang'],
    confidence: 'high',
    title: 'PyTorch could not allocate GPU memory (SGLang)',
    patterns: [
      /(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory)(?:.*?Tried to allocate (?<tried>[\d.]+ [KMG]iB))?/,
      /CUDA error: out of memory/,
      /memory allocation failed with OOM on device (?<device>\d+)/,
    ],
    remediation: [
      {
        text: 'lower --mem-fraction-static to leave room for activations and CUDA graphs',
        setting: 'mem_fraction_static',
        direction: 'decrease',
      },
      {
        text: 'or lower --cuda-graph-max-bs / --max-running-requests',
        setting: 'cuda_graph_max_bs',
        direction: 'decrease',
      },
    ],
  },
  {
    id: 'vllm.torch_cuda_oom',
    class: 'cuda_oom',
    engines: ['vllm'],
    confidence: 'high',
    title: 'PyTorch could not allocate GPU memory (vLLM)',
    patterns: [
      /(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory)(?:.*?Tried to allocate (?<tried>[\d.]+ [KMG]iB))?/,
      /CUDA error: out of memory/,
      /memory allocation failed with OOM on device (?<device>\d+)/,
    ],
    remediation: [
      {
        text: 'lower --gpu-memory-utilization to leave room for activations and CUDA graphs',
        setting: 'gpu_memory_utilization',
        direction: 'decrease',
      },
      { text: 'or lower --max-num-seqs', setting: 'max_num_seqs', direction: 'decrease' },
    ],
  },
  {
    id: 'llamacpp.cuda_error_oom',
    class: 'cuda_oom',
    engines: ['llamacpp'],
    confidence: 'high',
    title: 'llama.cpp hit CUDA out of memory at runtime',
    patterns: [/CUDA error: out of memory/],
    remediation: [
      { text: 'offload fewer layers or lower --ctx-size / --parallel', setting: 'n_gpu_layers', direction: 'decrease' },
    ],
  },
  {
    id: 'vllm.sampler_warmup_frame',
    class: 'cuda_oom',
    engines: ['vllm'],
    confidence: 'medium',
    fatal: false,
    refines: ['unknown'],
    detail: 'sampler_warmup',
    title: 'The error was raised while vLLM warmed up its sampler with max_num_seqs dummy requests (its OOM check)',
    patterns: [
      /File "[^"]*gpu_model_runner\.py", line \d+, in _dummy_sampler_run$/,
      /CUDA out of memory occurred when warming up sampler/,
    ],
    remediation: [
      {
        text: 'lower --max-num-seqs or --gpu-memory-utilization (the sampler warm-up allocates for max_num_seqs requests)',
        setting: 'max_num_seqs',
        direction: 'decrease',
      },
    ],
  },
  {
    id: 'llamacpp.host_memory_projection',
    class: 'host_oom_kill',
    engines: ['llamacpp'],
    confidence: 'medium',
    fatal: false,
    detail: 'host_ram_projection',
    title: 'llama.cpp projected more host memory than the machine has',
    patterns: [
      /projected to use (?<projected_mib>\d+) MiB of host memory vs\. (?<total_mib>\d+) MiB of total host memory/,
    ],
    remediation: [
      {
        text: 'the model does not fit in host RAM: offload more layers to the GPU (-ngl), use a smaller quantization or context, or add RAM',
        setting: 'n_gpu_layers',
        direction: 'increase',
      },
    ],
  },
];
