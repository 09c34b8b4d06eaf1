// A scripted systemd on a FakeHost, stand-in diagnosis and probers: the controller tested without test hosts.
import type { Diagnosis } from '../../src/diagnose/types.js';
import type { EngineMetrics } from '../../src/engines/types.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import { createMemoryActionLog } from '../../src/service/action-log.js';
import type { Collaborators } from '../../src/service/collaborators.js';
import { createServiceController, type ServiceControllerOptions } from '../../src/service/controller.js';
import type { Prober } from '../../src/service/health.js';
import { FakeHost } from '../fakes/fake-host.js';

export const UNIT = 'sim-e2e.service';
export const EXEC =
  '/usr/local/bin/node /opt/spectune/bin/spectune.js sim --model-path Qwen/Qwen3.5-122B-A10B --port 30000 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1';
const UNIT_TEXT = `[Service]\nExecStart=${EXEC}\nRestart=always\nRestartSec=1\n`;
export const DROPIN = `/etc/systemd/system/${UNIT}.d/90-spectune.conf`;

interface FakeUnitState {
  active: string;
  sub: string;
  pid: number;
  restarts: number;
  result?: string;
}

/** A scripted systemd: `step()` advances the unit through a list of states and journal lines. */
export class ScriptedSystemd {
  host = new FakeHost('root@th-fake');
  state: FakeUnitState = { active: 'active', sub: 'running', pid: 10, restarts: 0 };
  journal: { cursor: string; us: number; pid: number; id: string; msg: string }[] = [];
  /** How far the fake host's clock is ahead of this machine's. */
  clockSkewMs = 0;
  private n = 0;
  script: ((s: ScriptedSystemd) => void)[] = [];
  /** Drop-ins that are not spectune's, listed by `systemctl cat` after spectune's (e.g. an operator's 95-operator.conf). */
  foreign: { path: string; text: string }[] = [];

  constructor() {
    const h = this.host;
    h.on(['systemctl', 'show'], () => ({ stdout: this.show() }));
    h.on(['systemctl', 'cat'], () => ({ stdout: this.cat() }));
    h.on(['systemctl', 'daemon-reload'], {});
    h.on(['systemctl', 'restart'], () => {
      this.state = { active: 'activating', sub: 'start', pid: 100, restarts: 0 };
      return {};
    });
    h.on(['systemctl', 'stop'], () => {
      this.state = { active: 'inactive', sub: 'dead', pid: 0, restarts: this.state.restarts };
      return {};
    });
    h.on(['systemctl', 'reset-failed'], {});
    h.on(['rm', '-f', '--'], (argv) => {
      h.files.delete(argv[3]);
      return {};
    });
    h.on(['ls', '-1', '--'], (argv) => {
      const dir = `${argv[3]}/`;
      const names = [...h.files.keys()].filter((p) => p.startsWith(dir)).map((p) => p.slice(dir.length));
      return names.length ? { stdout: `${names.join('\n')}\n` } : { exitCode: 2, stderr: 'No such file or directory' };
    });
    // the unit file's mode, which drop-ins and kept versions take (a unit file as packages install it: 0644)
    h.on(['stat', '-c', '%a', '--'], { stdout: '644\n' });
    h.on(['journalctl', '-k'], { stdout: '' });
    h.on(['date', '+%s%3N'], () => ({ stdout: `${Date.now() + this.clockSkewMs}\n` }));
    h.on(['journalctl', '-n', '0'], { stdout: '-- No entries --\n' });
    h.on(['journalctl', '-u'], (argv) => ({ stdout: this.readJournal(argv) }));
  }

  log(pid: number, msg: string, id = 'node'): void {
    this.n += 1;
    this.journal.push({ cursor: `c${this.n}`, us: (Date.now() + this.clockSkewMs) * 1000, pid, id, msg });
  }

  private show(): string {
    this.script.shift()?.(this);
    const s = this.state;
    return [
      `Id=${UNIT}`,
      'LoadState=loaded',
      `ActiveState=${s.active}`,
      `SubState=${s.sub}`,
      `Result=${s.result ?? 'success'}`,
      `MainPID=${s.pid}`,
      `NRestarts=${s.restarts}`,
      'TimeoutStopUSec=5s',
      'Restart=always',
    ].join('\n');
  }

  private cat(): string {
    const drop = this.host.files.get(DROPIN);
    return `# /etc/systemd/system/${UNIT}\n${UNIT_TEXT}${drop ? `\n# ${DROPIN}\n${drop}` : ''}${this.foreign.map((f) => `\n# ${f.path}\n${f.text}`).join('')}`;
  }

  private readJournal(argv: string[]): string {
    const after = argv.find((a) => a.startsWith('--after-cursor='))?.slice('--after-cursor='.length);
    const start = after
      ? this.journal.findIndex((e) => e.cursor === after) + 1
      : argv.includes('1')
        ? Math.max(0, this.journal.length - 1)
        : 0;
    return this.journal
      .slice(start)
      .map((e) =>
        JSON.stringify({
          __CURSOR: e.cursor,
          __REALTIME_TIMESTAMP: String(e.us),
          _PID: String(e.pid),
          SYSLOG_IDENTIFIER: e.id,
          _HOSTNAME: 'th',
          MESSAGE: e.msg,
          // As journald writes them: PID 1's lines are about the unit (UNIT=), the service's own are from it (_SYSTEMD_UNIT=).
          ...(e.pid === 1
            ? { UNIT, _SYSTEMD_UNIT: 'init.scope', _TRANSPORT: 'journal' }
            : { _SYSTEMD_UNIT: UNIT, _TRANSPORT: 'stdout' }),
        }),
      )
      .join('\n');
  }
}

export const FATAL = 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.';

// Stand-in diagnosis: kv_cache_oom whenever the journal holds the fatal line.
export const collaborators: Collaborators = {
  isFatalLine: (m) => m.includes('RuntimeError:'),
  diagnose: (inputs): Diagnosis => {
    const oom = inputs.some((i) =>
      ('text' in i ? i.text : i.entries.map((e) => e.message).join('\n')).includes('Not enough memory'),
    );
    return {
      verdict: {
        class: oom ? 'kv_cache_oom' : 'unknown',
        cause: null,
        confidence: oom ? 'high' : 'low',
        summary: oom ? 'KV cache does not fit' : '?',
        evidence: [],
        ruledOut: [],
        remediation: [],
      },
      rootException: null,
      timeline: [],
      lifetimes: [],
    };
  },
};

// A prober with a fixed health answer and a queue of metrics answers.
export function prober(healthy: boolean, metrics: (EngineMetrics | null)[] = []): Prober {
  return {
    health: async (url) => ({ ok: healthy, status: healthy ? 200 : 503, error: null, url }),
    metrics: async () => metrics.shift() ?? null,
  };
}

// A controller on the scripted systemd that polls every 5 ms and records its events.
export function controllerFor(
  sd: ScriptedSystemd,
  p: Prober,
  events: SpectuneEvent[] = [],
  more: Partial<ServiceControllerOptions> = {},
) {
  const actionLog = createMemoryActionLog();
  const c = createServiceController({
    host: sd.host,
    unit: UNIT,
    engine: 'sglang',
    endpoint: 'http://10.0.0.2:30000',
    actionLog,
    onEvent: (e) => events.push(e),
    collaborators,
    prober: p,
    pollMs: 5,
    confirmWindowMs: 200,
    ...more,
  });
  return { c, actionLog };
}
