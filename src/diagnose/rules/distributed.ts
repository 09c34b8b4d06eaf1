// Distributed family: NCCL / torch.distributed failures and hangs between ranks or nodes (distributed_error).
import type { DiagnosisRule } from '../types.js';

const CHECK_FABRIC = {
  text: 'check the peers first (a dead peer makes the others fail with NCCL errors), then the network: NCCL_DEBUG=INFO, NCCL_SOCKET_IFNAME, firewalls',
};

/** Rules for collective-communication failures. */
export const DISTRIBUTED_RULES: DiagnosisRule[] = [
  {
    id: 'nccl.error',
    class: 'distributed_error',
    confidence: 'high',
    engines: ['sglang', 'vllm'],
    detail: 'nccl_error',
    title: 'An NCCL call failed',
    patterns: [
      /NCCL error:? (?<nccl_error>[^\n]{1,200})/,
      /\b(?<nccl_code>ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidUsage|ncclRemoteError)\b/,
      /\b(?<nccl_code>NCCL_ERROR_[A-Z_]+)\b/,
    ],
    remediation: [CHECK_FABRIC],
  },
  {
    id: 'nccl.watchdog_timeout',
    class: 'distributed_error',
    confidence: 'high',
    engines: ['sglang', 'vllm'],
    detail: 'nccl_timeout',
    title: 'A collective operation timed out (ProcessGroupNCCL watchdog)',
    patterns: [
      /Watchdog caught collective operation timeout: WorkNCCL\((?<work>.*?)\) ran for (?<ran_ms>\d+) milliseconds/,
      /NCCL communicator was aborted on rank (?<rank>\d+)/,
      /Some NCCL operations have failed or timed out/,
      /Process group watchdog thread terminated with exception(?!: CUDA error)/,
    ],
    remediation: [
      CHECK_FABRIC,
      { text: 'a hang in one rank stalls all: look for the first rank that stopped logging' },
    ],
  },
  {
    id: 'torch.dist_network_error',
    class: 'distributed_error',
    confidence: 'high',
    engines: ['sglang', 'vllm'],
    detail: 'rendezvous',
    title: 'torch.distributed could not reach its peers',
    patterns: [
      /torch\.distributed\.(?<kind>DistNetworkError|DistBackendError|DistStoreError)(?::\s?(?<detail>.{0,200}))?/,
    ],
    remediation: [
      {
        text: 'check --dist-init-addr / MASTER_ADDR:port reachability and that every node started with the same world size',
      },
    ],
  },
  {
    id: 'gloo.connect_failed',
    class: 'distributed_error',
    confidence: 'high',
    detail: 'rendezvous',
    title: 'Gloo could not connect the ranks (rendezvous / network interface)',
    patterns: [/Gloo connectFullMesh failed/, /\[enforce fail at [^\]]*gloo[^\]]*\]/],
    remediation: [
      {
        text: 'set GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME to the interface the nodes share, and check the dist-init address',
      },
    ],
  },
  {
    id: 'ray.memory_monitor_kill',
    class: 'host_oom_kill',
    confidence: 'high',
    detail: 'ray_memory_monitor',
    title: "Ray's memory monitor killed a worker: host RAM ran low",
    patterns: [
      /killed due to memory pressure \(OOM\)/,
      /Ray killed this worker \(ID: \w+\) because it was the most recently scheduled task/,
    ],
    remediation: [
      {
        text: 'host RAM (not GPU memory) ran out: add RAM, lower CPU-side buffers (swap space, CPU offload), or raise RAY_memory_usage_threshold with care',
      },
    ],
  },
  {
    id: 'sglang.scheduler_watchdog',
    class: 'distributed_error',
    confidence: 'medium',
    engines: ['sglang'],
    detail: 'watchdog',
    title: 'A forward batch made no progress (usually an NCCL or kernel hang)',
    patterns: [/Watchdog timeout \(self\.watchdog_timeout=(?<watchdog_timeout>\d+)/],
    remediation: [
      CHECK_FABRIC,
      {
        text: 'raise --watchdog-timeout only if single batches are legitimately slow',
        setting: 'watchdog_timeout',
        direction: 'increase',
      },
    ],
  },
  {
    id: 'vllm.rpc_execute_model_timeout',
    class: 'distributed_error',
    confidence: 'medium',
    engines: ['vllm'],
    title: 'A vLLM worker did not answer execute_model (a hung rank)',
    patterns: [/RPC call to execute_model timed out/],
    remediation: [CHECK_FABRIC],
  },
];
