// CUDA family: graph capture failures (cuda_graph_capture_failure) and device faults (cuda_error).
import type { DiagnosisRule } from '../types.js';

/** Rules for CUDA graphs and CUDA/driver errors. */
export const CUDA_RULES: DiagnosisRule[] = [
  {
    id: 'sglang.cuda_graph_capture_failed', class: 'cuda_graph_capture_failure', engines: ['sglang'], confidence: 'high',
    title: 'SGLang failed to capture CUDA graphs',
    patterns: [/Capture cuda graph failed: ?(?<inner>.*)/, /CUDA graph capture failed/, /Breakable CUDA graph failed/],
    remediation: [
      { text: 'capture graphs for fewer batch sizes', setting: 'cuda_graph_max_bs', direction: 'decrease' },
      { text: 'or lower --mem-fraction-static so the graphs fit beside the KV pool', setting: 'mem_fraction_static', direction: 'decrease' },
      { text: 'last resort: --disable-cuda-graph (large performance loss)', setting: 'disable_cuda_graph', direction: 'set', value: true },
    ],
  },
  {
    id: 'vllm.capture_model_failed', class: 'cuda_graph_capture_failure', engines: ['vllm'], confidence: 'medium', fatal: false,
    refines: ['cuda_oom', 'cuda_error'],
    title: 'vLLM failed while capturing CUDA graphs (error raised under capture_model)',
    patterns: [/File "[^"]*gpu_model_runner\.py", line \d+, in (?<phase>capture_model|_capture_cudagraphs)$/],
    remediation: [
      { text: 'capture fewer sizes: lower --max-num-seqs or set compilation_config.cudagraph_mode', setting: 'max_num_seqs', direction: 'decrease' },
      { text: 'or lower --gpu-memory-utilization to leave room for the graphs', setting: 'gpu_memory_utilization', direction: 'decrease' },
      { text: 'last resort: --enforce-eager', setting: 'enforce_eager', direction: 'set', value: true },
    ],
  },
  {
    id: 'cuda.illegal_memory_access', class: 'cuda_error', confidence: 'high',
    title: 'A CUDA kernel accessed an illegal address',
    patterns: [/CUDA error: an illegal memory access was encountered/],
    remediation: [
      { text: 'usually a kernel bug with this setting combination: rerun with CUDA_LAUNCH_BLOCKING=1 and report it; check `journalctl -k` for Xid 31/13' },
    ],
  },
  {
    // Captured on an H200 (test/fixtures/journal/llamacpp/real-gpu-cuda-no-device): with no GPU visible to CUDA
    // (CUDA_VISIBLE_DEVICES naming a GPU the host lacks), `--device CUDA0` is then rejected as an invalid flag value.
    id: 'llamacpp.cuda_init_failed', class: 'cuda_error', engines: ['llamacpp'], confidence: 'high', fatal: false, refines: ['bad_config'],
    title: 'CUDA could not be initialised, so the GPU named on the command line does not exist',
    patterns: [/ggml_cuda_init: failed to initialize CUDA: (?<cuda_error>.+)/],
    remediation: [
      { text: 'CUDA sees no usable GPU: check CUDA_VISIBLE_DEVICES in the unit (Environment=) against `nvidia-smi -L`, and the driver (`nvidia-smi`, `journalctl -k | grep NVRM`)' },
    ],
  },
  {
    id: 'cuda.runtime_error', class: 'cuda_error', confidence: 'high',
    title: 'A CUDA runtime error',
    patterns: [
      /CUDA error: (?!out of memory)(?<cuda_error>[^.\n]+)/,
      /RuntimeError: No CUDA GPUs are available|no CUDA-capable device is detected|CUDA driver initialization failed/,
    ],
    remediation: [{ text: 'check the driver and the GPU (`nvidia-smi`, `journalctl -k | grep NVRM`) before changing engine settings' }],
  },
  {
    id: 'nvidia.xid', class: 'cuda_error', confidence: 'medium',
    title: 'The NVIDIA driver reported an Xid error',
    patterns: [/NVRM: Xid \(PCI:(?<pci>[0-9a-fA-F:.]+)\): (?<xid>\d+),/, /NVRM: GPU at (?<pci>\S+) has fallen off the bus/],
    remediation: [{ text: 'a driver/hardware event (see NVIDIA Xid catalog): reset or drain the GPU; 79 = fallen off the bus, 48/94/95 = ECC' }],
  },
];
