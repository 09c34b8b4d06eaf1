// CUDA family: graph capture failures (cuda_graph_capture_failure) and device faults (cuda_error).
import type { DiagnosisRule } from '../types.js';

/** Rules for CUDA graphs and CUDA/driver errors. */
export const CUDA_RULES: DiagnosisRule[] = [
  {
    id: 'sglang.cuda_graph_capture_failed',
    class: 'cuda_graph_capture_failure',
    engines: ['sglang'],
    confidence: 'high',
    title: 'SGLang failed to capture CUDA graphs',
    patterns: [
      /Capture cuda graph failed: ?(?<inner>.*)/,
      /CUDA graph capture failed/,
      /Breakable CUDA graph failed/,
      /disable [Cc][Uu][Dd][Aa] graph by --disable-cuda-graph/,
    ],
    remediation: [
      { text: 'capture graphs for fewer batch sizes', setting: 'cuda_graph_max_bs', direction: 'decrease' },
      {
        text: 'or lower --mem-fraction-static so the graphs fit beside the KV pool',
        setting: 'mem_fraction_static',
        direction: 'decrease',
      },
      {
        text: 'last resort: --disable-cuda-graph (large performance loss)',
        setting: 'disable_cuda_graph',
        direction: 'set',
        value: true,
      },
    ],
  },
  {
    id: 'vllm.capture_model_failed',
    class: 'cuda_graph_capture_failure',
    engines: ['vllm'],
    confidence: 'medium',
    fatal: false,
    refines: ['cuda_oom', 'cuda_error', 'unknown'],
    title: 'vLLM failed while capturing CUDA graphs (error raised under capture_model)',
    patterns: [
      /File "[^"]*(?:gpu_)?model_runner\.py", line \d+, in (?<phase>capture_model|_capture_cudagraphs|capture)$/,
    ],
    remediation: [
      {
        text: 'capture fewer sizes: lower --max-num-seqs or set compilation_config.cudagraph_mode',
        setting: 'max_num_seqs',
        direction: 'decrease',
      },
      {
        text: 'or lower --gpu-memory-utilization to leave room for the graphs',
        setting: 'gpu_memory_utilization',
        direction: 'decrease',
      },
      { text: 'last resort: --enforce-eager', setting: 'enforce_eager', direction: 'set', value: true },
    ],
  },
  {
    id: 'capture.in_progress',
    class: 'cuda_graph_capture_failure',
    confidence: 'medium',
    fatal: false,
    refines: ['cuda_oom', 'cuda_error', 'unknown'],
    detail: 'error_during_capture',
    title: 'The engine was capturing CUDA graphs when it failed (capture began and never finished)',
    patterns: [
      /Capturing CUDA graphs? \(/,
      /Capturing batches \(/,
      /Capture cuda graph begin/,
      /Capturing cudagraphs? for/,
    ],
    clearedBy: [/Graph capturing finished in/, /Capture cuda graph end/],
    remediation: [
      {
        text: 'capture fewer graph sizes (vLLM --max-num-seqs / cudagraph capture sizes, SGLang --cuda-graph-max-bs) or leave more memory beside the KV pool',
        setting: 'cuda_graph_max_bs',
        direction: 'decrease',
      },
      {
        text: 'last resort: run eager (vLLM --enforce-eager, SGLang --disable-cuda-graph)',
        setting: 'disable_cuda_graph',
        direction: 'set',
        value: true,
      },
    ],
  },
  {
    id: 'sglang.capture_registered_nothing',
    class: 'cuda_graph_capture_failure',
    engines: ['sglang'],
    confidence: 'medium',
    detail: 'no_graph_captured',
    title:
      'SGLang left CUDA-graph capture with no graph captured (an error inside capture, hidden by the custom all-reduce)',
    patterns: [/Registering 0 cuda graph addresses/],
    clearedBy: [/Capture cuda graph end/],
    remediation: [
      {
        text: 'capture failed at its first batch size and the error may be hidden: rerun with --disable-custom-all-reduce to see it, then lower --cuda-graph-max-bs or --mem-fraction-static',
        setting: 'disable_custom_all_reduce',
        direction: 'set',
        value: true,
      },
    ],
  },
  {
    id: 'cuda.stream_capture_unsupported',
    class: 'cuda_graph_capture_failure',
    confidence: 'high',
    detail: 'capture_unsupported_op',
    priority: -1,
    title: 'An operation that CUDA graphs cannot record ran during capture',
    patterns: [
      /cudaErrorStreamCaptureUnsupported|operation not permitted when stream is capturing|cudaErrorStreamCaptureInvalidated/,
    ],
    remediation: [
      {
        text: 'an op in the captured path is not graph-safe with these settings: disable the feature that adds it (custom all-reduce, a kernel backend) or run eager',
        setting: 'disable_cuda_graph',
        direction: 'set',
        value: true,
      },
    ],
  },
  {
    id: 'cuda.illegal_memory_access',
    class: 'cuda_error',
    confidence: 'medium',
    detail: 'illegal_memory_access',
    title:
      'A CUDA kernel accessed an illegal address (a symptom: kernel bug, a feature combination, or memory pressure)',
    patterns: [
      /CUDA error: an illegal memory access was encountered/,
      /^RuntimeError: an illegal memory access was encountered/,
      /cudaErrorIllegalAddress/,
    ],
    remediation: [
      {
        text: 'usually a kernel bug with this setting combination: rerun with CUDA_LAUNCH_BLOCKING=1 and report it; check `journalctl -k` for Xid 31/13',
      },
    ],
  },
  {
    // Captured on an H200 (test/fixtures/journal/llamacpp/real-gpu-cuda-no-device): with no GPU visible to CUDA
    // (CUDA_VISIBLE_DEVICES naming a GPU the host lacks), `--device CUDA0` is then rejected as an invalid flag value.
    id: 'llamacpp.cuda_init_failed',
    class: 'cuda_error',
    engines: ['llamacpp'],
    confidence: 'high',
    fatal: false,
    refines: ['bad_config'],
    title: 'CUDA could not be initialised, so the GPU named on the command line does not exist',
    patterns: [/ggml_cuda_init: failed to initialize CUDA: (?<cuda_error>.+)/],
    remediation: [
      {
        text: 'CUDA sees no usable GPU: check CUDA_VISIBLE_DEVICES in the unit (Environment=) against `nvidia-smi -L`, and the driver (`nvidia-smi`, `journalctl -k | grep NVRM`)',
      },
    ],
  },
  {
    id: 'cuda.runtime_error',
    class: 'cuda_error',
    confidence: 'high',
    title: 'A CUDA runtime error',
    patterns: [
      /CUDA [Ee]rror: (?!out of memory|an illegal memory access)(?<cuda_error>[^.\n]+)/,
      /RuntimeError: No CUDA GPUs are available|no CUDA-capable device is detected|CUDA driver initialization failed/,
      /no kernel image is available for execution on the device/,
      /CUDA driver version is insufficient for CUDA runtime version/,
      /Cuda error (?![^\s']*custom_all_reduce)[^\s']*:\d+ '(?<cuda_failed>[^']+)'/,
    ],
    remediation: [
      {
        text: 'check the driver and the GPU (`nvidia-smi`, `journalctl -k | grep NVRM`) before changing engine settings',
      },
    ],
  },
  {
    id: 'gpu.unsupported_compute_capability',
    class: 'cuda_error',
    confidence: 'high',
    detail: 'unsupported_gpu',
    priority: 30,
    title: 'The engine does not run on this GPU generation at all',
    patterns: [/GPUs with compute capability below (?<need>[\d.]+) are not supported/],
    remediation: [
      {
        text: 'this GPU is older than the engine supports: use a newer GPU, or an engine build (llama.cpp) that supports it',
      },
    ],
  },
  {
    id: 'vllm.custom_all_reduce_error',
    class: 'cuda_error',
    confidence: 'medium',
    detail: 'custom_all_reduce',
    title: 'A CUDA call failed in the custom all-reduce kernels (peer access / IPC between GPUs)',
    patterns: [/Cuda error [^\s']*custom_all_reduce[^\s']*:\d+ '(?<cuda_error>[^']+)'/],
    remediation: [
      {
        text: 'disable the custom all-reduce (vLLM/SGLang --disable-custom-all-reduce) to fall back to NCCL; check GPU peer access (nvidia-smi topo -m)',
        setting: 'disable_custom_all_reduce',
        direction: 'set',
        value: true,
      },
    ],
  },

  {
    id: 'nvidia.xid',
    class: 'cuda_error',
    confidence: 'medium',
    title: 'The NVIDIA driver reported an Xid error',
    patterns: [
      /NVRM: Xid \(PCI:(?<pci>[0-9a-fA-F:.]+)\): (?<xid>\d+),/,
      /NVRM: GPU at (?<pci>\S+) has fallen off the bus/,
    ],
    remediation: [
      {
        text: 'a driver/hardware event (see NVIDIA Xid catalog): reset or drain the GPU; 79 = fallen off the bus, 48/94/95 = ECC',
      },
    ],
  },
];
