// Lifecycle family (systemd v252 and kernel): stop timeouts, crash loops, OOM kills, external kills, clean stops.
import type { DiagnosisRule } from '../types.js';

/** Rules read from systemd's and the kernel's own lines, identical for every engine. */
export const LIFECYCLE_RULES: DiagnosisRule[] = [
  {
    id: 'systemd.stop_sigterm_timeout',
    class: 'stop_timeout',
    confidence: 'high',
    title: 'systemd gave up waiting for the service to stop and killed it',
    patterns: [
      /State '(?<state>stop-sigterm|stop-watchdog|stop-post|final-sigterm|final-watchdog)' timed out\. (?<action>Killing|Aborting|Skipping SIGKILL)\./,
      /Stopping timed out\. (?<action>Killing|Terminating)\./,
    ],
    remediation: [
      {
        text: 'give the drain time: raise TimeoutStopSec= above the longest request (SGLang has no drain timeout of its own)',
        unitDirective: 'TimeoutStopSec',
        direction: 'increase',
      },
      {
        text: 'or stop only when the benchmark/clients are done (spectune waits for in-flight requests before a restart)',
      },
    ],
  },
  {
    id: 'systemd.start_limit_hit',
    class: 'crash_loop',
    confidence: 'high',
    title: 'systemd stopped restarting the service: too many starts in StartLimitIntervalSec',
    patterns: [/Start request repeated too quickly\./, /Failed with result 'start-limit-hit'\./],
    remediation: [{ text: 'fix the cause each start dies of, then `systemctl reset-failed` the unit' }],
  },
  {
    id: 'systemd.restart_scheduled',
    class: 'crash_loop',
    confidence: 'low',
    fatal: false,
    title: 'systemd restarted the service after a failure',
    patterns: [
      /Scheduled restart job(?: immediately on client request)?, restart counter is at (?<restart_counter>\d+)\./,
    ],
    remediation: [
      {
        text: 'fix the cause each start dies of; RestartSec= / StartLimitBurst= only change how fast it loops',
        unitDirective: 'RestartSec',
      },
    ],
  },
  {
    id: 'systemd.oom_kill',
    class: 'host_oom_kill',
    confidence: 'high',
    title: 'The kernel OOM killer killed a process of the unit (cgroup v2)',
    patterns: [
      /A process of this unit has been killed by the OOM killer\./,
      /systemd-oomd killed (?:(?<oomd_killed>\d+) process\(es\)|some process\(es\)) in this unit\./,
      /Failed with result 'oom-kill'\./,
    ],
    remediation: [
      {
        text: 'host RAM, not GPU memory, ran out: raise MemoryMax= (if set) or free host memory; loading weights needs RAM too',
        unitDirective: 'MemoryMax',
        direction: 'increase',
      },
      { text: 'or lower the host-RAM users: fewer CPU-side KV/offload buffers, smaller --max-running-requests' },
    ],
  },
  {
    id: 'kernel.oom_killed_process',
    class: 'host_oom_kill',
    confidence: 'high',
    title: 'The kernel OOM killer killed a process',
    patterns: [
      /(?<scope>Out of memory|Memory cgroup out of memory)[^:]*:\s+Kill(?:ed)? process (?<victim_pid>\d+) \((?<victim_comm>[^)]+)\)/,
    ],
    remediation: [
      {
        text: 'host RAM (or the cgroup limit) ran out: raise MemoryMax= / the container limit or add RAM/swap',
        unitDirective: 'MemoryMax',
        direction: 'increase',
      },
    ],
  },
  {
    id: 'kernel.oom_kill_context',
    class: 'host_oom_kill',
    confidence: 'medium',
    fatal: false,
    title: 'Kernel OOM-kill record (which cgroup)',
    patterns: [
      /oom-kill:constraint=(?<constraint>\w+),.*?(?:oom_memcg=(?<oom_memcg>[^,]*),)?task_memcg=(?<task_memcg>[^,]*),task=(?<task>[^,]*),pid=(?<victim_pid>\d+)/,
    ],
    remediation: [],
  },
  {
    id: 'systemd.client_kill',
    class: 'external_kill',
    confidence: 'high',
    title: 'Someone sent the service a signal with `systemctl kill`',
    patterns: [/Sending signal SIG(?<signal>\w+) to process (?<pid>\d+) \((?<comm>[^)]*)\) on client request\./],
    remediation: [
      {
        text: 'find who ran `systemctl kill` (health probe, watchdog script, operator); use `systemctl stop` so the service can drain',
      },
    ],
  },
  {
    id: 'wrapper.health_check_kill',
    class: 'external_kill',
    confidence: 'medium',
    detail: 'wrapper_health_check',
    title: 'A supervising wrapper (llama-swap, a proxy) gave up on the health check and stopped the server',
    patterns: [/health check failed after (?<after>\d+(?:\.\d+)?m?s)/, /initiating graceful stop of upstream process/],
    remediation: [
      {
        text: "the server was stopped from outside, usually while it was still loading: raise the wrapper's health-check / start-up timeout (llama-swap healthCheckTimeout)",
      },
    ],
  },
  {
    id: 'sglang.child_killed',
    class: 'external_kill',
    engines: ['sglang'],
    confidence: 'low',
    title: 'An SGLang child process died by a signal (the HTTP server may live on)',
    patterns: [
      /Child process unexpectedly failed with an exit code (?<wait_status>\d+)\. pid=(?<child_pid>\d+)/,
      /Rank (?<rank>\d+) scheduler is dead\./,
    ],
    remediation: [{ text: 'look for the OOM killer (`journalctl -k`) or whoever killed the child' }],
  },
  {
    id: 'vllm.worker_fatal_signal',
    class: 'external_kill',
    engines: ['vllm'],
    confidence: 'low',
    title: 'A vLLM worker process died of a signal (killed from outside, OOM killer, or a crash)',
    patterns: [/got fatal signal from worker processes, shutting down/],
    remediation: [{ text: 'look for the OOM killer (`journalctl -k`), a segfault, or whoever signalled the worker' }],
  },
  {
    id: 'process.killed_by_signal',
    class: 'external_kill',
    confidence: 'low',
    title: 'The process was killed by a signal (the shell or a supervisor says so)',
    patterns: [/^\s*(?:Error: )?signal: killed$/, /^Killed$/],
    remediation: [
      {
        text: 'find who sent the signal: the kernel OOM killer (`journalctl -k | grep -i "killed process"`) first, then supervisors and scripts',
      },
    ],
  },
  {
    id: 'sglang.drain_complete',
    class: 'clean_stop',
    engines: ['sglang'],
    confidence: 'high',
    fatal: false,
    title: 'SGLang drained every request before exiting',
    patterns: [/Gracefully exiting\.\.\. Remaining number of requests 0\./],
    remediation: [
      {
        text: 'nothing to fix; to stop systemd calling this a failure add SuccessExitStatus=SIGKILL (SGLang SIGKILLs itself after draining)',
        unitDirective: 'SuccessExitStatus',
        direction: 'set',
        value: 'SIGKILL',
      },
    ],
  },
  {
    id: 'systemd.deactivated',
    class: 'clean_stop',
    confidence: 'high',
    fatal: false,
    title: 'systemd saw a clean exit',
    patterns: [/Deactivated successfully\./, /Main process exited, code=exited, status=0\/SUCCESS/],
    remediation: [],
  },
  {
    id: 'engine.clean_shutdown',
    class: 'clean_stop',
    confidence: 'medium',
    fatal: false,
    title: 'The engine shut down on request',
    patterns: [
      /Shutting down FastAPI HTTP server\./,
      /cleaning up before exit\.\.\./,
      /Finished server process \[(?<server_pid>\d+)\]/,
    ],
    remediation: [],
  },
];
