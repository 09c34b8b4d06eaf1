// `spectune init` and `spectune doctor` against real systemd test hosts, on SGLang-, vLLM- and llama-server-like
// units made from the shared launch configs (see init-doctor-support.ts for what each one runs). init must read
// engine, model, port, speculative settings and start-up time and write a config the loader accepts; doctor must
// pass a good unit, WARN on a short TimeoutStopSec, FAIL without journal access or SSH, and change nothing. Docker is
// not on the test hosts: one test puts a stand-in `docker` there that prints the real `docker ps` JSON of a compose service.
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { resolveReferences } from '../../src/engines/index.js';
import { composeArgv, loadLaunchConfigs } from '../unit/engines-launch-configs.helpers.js';
import { waitHealthy } from './helpers/health.js';
import { getTestHost, type TestHost } from './helpers/testhosts.js';
import { installEngineUnit, removeEngineUnit, VLLM_SHIM } from './init-doctor-support.js';
import { LLAMA_TEST_HOST, requireHostLlama, requireLlamaFiles } from './llamacpp-support.js';
import { runCli } from './service-helpers.js';
import { sshRun } from './tune-support.js';

/** A user with our key but no root, no sudo and no systemd-journal group. */
const PLAIN_USER = 'onbnobody';
const UNITS = {
  sglang: { unit: 'spectune-onb-sglang.service', port: 31950, stop: 120 },
  vllm: { unit: 'spectune-onb-vllm.service', port: 31951, stop: 30 },
  rank1: { unit: 'spectune-onb-rank1.service', port: 31953, stop: 120 },
  llama: { unit: 'spectune-onb-llama.service', port: 31952, stop: 120 },
};

/** What `doctor --json` prints. */
interface DoctorJson {
  ok: boolean;
  checks: {
    id: string;
    subject: string;
    status: string;
    summary: string;
    fix: string | null;
    facts?: Record<string, unknown>;
  }[];
}

// The status of each check id (the first one of that id when several hosts are checked).
function statuses(d: DoctorJson): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of d.checks) out[c.id] ??= c.status;
  return out;
}

// The unit's process, restarts and drop-ins: what doctor must leave as it found.
function unitFingerprint(h: TestHost, unit: string): string {
  return sshRun(
    h,
    `systemctl show -p MainPID,NRestarts,ActiveState,DropInPaths ${unit}; ls -d /etc/systemd/system/${unit}.d /var/lib/spectune/${unit} 2>&1; true`,
  );
}

describe('init and doctor on real systemd hosts', () => {
  let th1: TestHost;
  let th2: TestHost;
  let dir: string;
  const ssh = () => ['--ssh-config', th1.sshConfig];

  beforeAll(async () => {
    th1 = getTestHost('th1');
    th2 = getTestHost('th2');
    dir = mkdtempSync(join(tmpdir(), 'spectune-onb-e2e-'));
    installEngineUnit(th1, UNITS.sglang.unit, 'sglang', UNITS.sglang.port, UNITS.sglang.stop);
    installEngineUnit(th1, UNITS.vllm.unit, 'vllm', UNITS.vllm.port, UNITS.vllm.stop);
    installEngineUnit(th2, UNITS.rank1.unit, 'sglang', UNITS.rank1.port, UNITS.rank1.stop);
    sshRun(
      th1,
      `id ${PLAIN_USER} >/dev/null 2>&1 || useradd -m -s /bin/sh ${PLAIN_USER}; install -d -m 700 -o ${PLAIN_USER} /home/${PLAIN_USER}/.ssh; install -m 600 -o ${PLAIN_USER} /root/.ssh/authorized_keys /home/${PLAIN_USER}/.ssh/authorized_keys`,
    );
    await Promise.all([
      waitHealthy(`http://${th1.ip}:${UNITS.sglang.port}`, 120_000),
      waitHealthy(`http://${th1.ip}:${UNITS.vllm.port}`, 120_000),
      waitHealthy(`http://${th2.ip}:${UNITS.rank1.port}`, 120_000),
    ]);
  });
  afterAll(() => {
    if (th1) {
      removeEngineUnit(th1, UNITS.sglang.unit);
      removeEngineUnit(th1, UNITS.vllm.unit);
      sshRun(th1, `rm -rf ${VLLM_SHIM.split('/').slice(0, 3).join('/')}; userdel -r ${PLAIN_USER} 2>/dev/null; true`);
    }
    if (th2) removeEngineUnit(th2, UNITS.rank1.unit);
  });

  it('init with several engine units lists them and asks for --unit (exit 2, nothing written)', async () => {
    const out = join(dir, 'never.yaml');
    const r = await runCli(['init', '--host', th1.name, ...ssh(), '--out', out]);
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^spectune: th1: \d+ engine units are running: .*spectune-onb-sglang\.service \(sglang\).*\(hint: pick one with --unit/,
    );
    expect(lines[0]).toContain('spectune-onb-vllm.service (vllm)');
    expect(existsSync(out)).toBe(false);
  });

  it('init on the SGLang-like unit: engine, model, port, speculative settings, start-up time; a config the loader accepts', async () => {
    const out = join(dir, 'sglang.yaml');
    const r = await runCli(['init', '--host', th1.name, ...ssh(), '--unit', 'spectune-onb-sglang', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^wrote ${out} for spectune-onb-sglang\\.service \\(sglang, tuning speculative_num_steps, start-up \\d+(\\.\\d)? s\\)`,
      ),
    );
    const text = readFileSync(out, 'utf8');
    expect(text).toContain(
      'Found: sglang, model Qwen/Qwen3-14B, port 31950, speculative settings in force: speculative_algorithm=EAGLE speculative_num_steps=3 speculative_eagle_topk=1 speculative_num_draft_tokens=4',
    );
    expect(text).toMatch(/Start-up time: \d+(\.\d)? s \(journal: start line to the ready line/);
    const { config } = await loadConfig(out);
    expect(config.target).toMatchObject({
      engine: 'sglang',
      endpoint: `http://${th1.ip}:31950`,
      hosts: [{ host: 'th1', unit: UNITS.sglang.unit, role: 'rank0' }],
    });
    expect(config.space).toEqual([{ key: 'speculative_num_steps', values: [1, 2, 3, 4, 5, 6] }]);
    // --max-running-requests 1 in the operator's command: one benchmark level.
    expect(config.benchmark.concurrency).toEqual([1]);

    // An existing file is kept unless --force; --dry-run prints the proposal and writes nothing.
    const before = statSync(out).mtimeMs;
    const again = await runCli(['init', '--host', th1.name, ...ssh(), '--unit', 'spectune-onb-sglang', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(
      `spectune: ${out} already exists (hint: pass --force to overwrite it, --out FILE for another file, or --dry-run to print the proposal)`,
    );
    expect(statSync(out).mtimeMs).toBe(before);
    const dry = await runCli([
      'init',
      '--host',
      th1.name,
      ...ssh(),
      '--unit',
      'spectune-onb-sglang',
      '--out',
      join(dir, 'dry.yaml'),
      '--dry-run',
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('speculative_num_steps: { min: 1, max: 6 }');
    expect(existsSync(join(dir, 'dry.yaml'))).toBe(false);
  });

  it("init on the vLLM-like unit reads the dotted --speculative-config form and vLLM's ready line", async () => {
    const r = await runCli(['init', '--host', th1.name, ...ssh(), '--unit', UNITS.vllm.unit, '--dry-run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as {
      chosen: string;
      found: { unit: string; engine: string; model: string; port: number; speculative: object }[];
      startup: { last: { seconds: number; readyLine: string } };
      timeoutStopSec: number;
      space: string[];
      written: null;
    };
    expect(j.chosen).toBe(UNITS.vllm.unit);
    expect(j.found.find((u) => u.unit === UNITS.vllm.unit)).toMatchObject({
      engine: 'vllm',
      model: 'zai-org/GLM-OCR',
      port: 31951,
      speculative: { speculative_method: 'mtp', num_speculative_tokens: 1 },
    });
    expect(j.startup.last.readyLine).toMatch(/Application startup complete\./);
    expect(j.startup.last.seconds).toBeGreaterThan(0);
    expect(j).toMatchObject({ timeoutStopSec: 30, space: ['num_speculative_tokens'], written: null });
  });

  it('init lists a compose container (docker ps) as not tunable and names a wrapper-script unit it cannot read', async () => {
    // No docker on the test hosts: a stand-in CLI prints one line of the real `docker ps --no-trunc --format '{{json .}}'`
    // output for co-sglang-amasu's compose service (its ${VAR:-default} values resolved as compose does).
    const c = loadLaunchConfigs().find((x) => x.id === 'co-sglang-amasu')!;
    const argv = composeArgv(c.text, []).argv.map((a) => resolveReferences(a, {}));
    const row = {
      Command: `"${argv.join(' ')}"`,
      ID: '4f2c1e0a9b7d',
      Image: 'lmsysorg/sglang:qwen38-27b',
      Labels: 'com.docker.compose.project=amasu,com.docker.compose.service=qwen38',
      Names: 'qwen38-sglang',
      Ports: '0.0.0.0:30000->30000/tcp',
      State: 'running',
      Status: 'Up 2 hours',
    };
    const docker = `#!/bin/sh\n# spectune e2e stand-in for docker ps (no docker on the test hosts)\n[ "$1" = ps ] || exit 1\ncat <<'EOF'\n${JSON.stringify(row)}\nEOF\n`;
    const wrapper = 'spectune-onb-wrapper.service';
    sshRun(th2, 'cat > /usr/local/bin/docker && chmod 755 /usr/local/bin/docker', docker);
    sshRun(
      th2,
      `cat > /etc/systemd/system/${wrapper} && systemctl daemon-reload`,
      '[Service]\nExecStart=/opt/serve/run-vllm.sh\n',
    );
    try {
      const r = await runCli(['init', '--host', th2.name, ...ssh(), '--unit', UNITS.rank1.unit, '--dry-run', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as {
        chosen: string;
        found: { unit: string; engine: string; source: string; compose?: string; model: string }[];
      };
      expect(j.chosen).toBe(UNITS.rank1.unit);
      expect(j.found.find((u) => u.source === 'docker')).toMatchObject({
        unit: 'qwen38-sglang',
        engine: 'sglang',
        compose: 'amasu/qwen38',
        model: 'RadixArk/Qwen3.8-27B-NVFP4',
      });
      const container = await runCli(['init', '--host', th2.name, ...ssh(), '--unit', 'qwen38-sglang', '--dry-run']);
      expect(container.code).toBe(1);
      expect(container.stderr).toBe(
        'spectune: qwen38-sglang runs sglang in docker (compose amasu/qwen38): spectune tunes systemd units (hint: run the engine under a systemd unit (ExecStart=docker run ... works), then run init again)\n',
      );
      const wrapped = await runCli(['init', '--host', th2.name, ...ssh(), '--unit', wrapper, '--dry-run']);
      expect(wrapped.code).toBe(1);
      expect(wrapped.stderr).toMatch(
        /^spectune: th2: spectune-onb-wrapper\.service runs no SGLang, vLLM or llama-server command that spectune can read in its ExecStart \(hint: /,
      );
    } finally {
      sshRun(th2, `rm -f /usr/local/bin/docker /etc/systemd/system/${wrapper}; systemctl daemon-reload`);
    }
  });

  it('doctor passes a good two-host SGLang target (clock skew between the ranks checked) and changes nothing', async () => {
    const cfg = join(dir, 'two-host.yaml');
    writeFileSync(
      cfg,
      readFileSync(join(dir, 'sglang.yaml'), 'utf8').replace(
        /hosts:\n {4}- \{ host: th1, unit: spectune-onb-sglang\.service \}/,
        `hosts:\n    - { host: th1, unit: ${UNITS.sglang.unit}, role: rank0 }\n    - { host: th2, unit: ${UNITS.rank1.unit}, role: rank1 }`,
      ),
    );
    const before = [unitFingerprint(th1, UNITS.sglang.unit), unitFingerprint(th2, UNITS.rank1.unit)];
    const r = await runCli(['doctor', '-c', cfg, ...ssh()]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const id of [
      'ssh',
      'systemctl',
      'journal',
      'dropin',
      'in-force',
      'engine',
      'api-key',
      'stop-timeout',
      'startup',
      'clock-skew',
      'store-disk',
      'local-state',
    ]) {
      expect(r.stdout, id).toMatch(new RegExp(`^PASS +${id} `, 'm'));
    }
    expect(r.stdout).not.toMatch(/^(WARN|FAIL)/m);
    expect(r.stdout).toMatch(/^PASS +engine +th1 spectune-onb-sglang\.service: sglang \S+ healthy/m);
    expect(r.stdout).toMatch(/^PASS +stop-timeout +th1 spectune-onb-sglang\.service: TimeoutStopSec 120 s ≥ 100 s/m);
    expect(r.stdout).toMatch(/^PASS +clock-skew +th1 \+ th2: clocks agree within \d+ ms/m);
    // 7 checks per rank (ssh, systemctl, journal, dropin, in-force, stop-timeout, startup), engine and api-key once on
    // rank 0, clock-skew, store-disk and local-state once: 19.
    expect(r.stdout).toMatch(
      /^PASS +in-force +th2 spectune-onb-rank1\.service: no spectune drop-in: the unit runs as written/m,
    );
    expect(r.stdout).toMatch(/^doctor: 19 passed, 0 warnings, 0 failed/m);
    expect([unitFingerprint(th1, UNITS.sglang.unit), unitFingerprint(th2, UNITS.rank1.unit)]).toEqual(before);
  });

  it('doctor WARNs on a short TimeoutStopSec (the seed-1 trap) and names the fix; a measured ITL can clear it', async () => {
    const r = await runCli(['doctor', '--host', th1.name, ...ssh(), '--unit', UNITS.vllm.unit, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as DoctorJson;
    expect(statuses(j)).toMatchObject({
      ssh: 'PASS',
      systemctl: 'PASS',
      journal: 'PASS',
      dropin: 'PASS',
      engine: 'PASS',
      'stop-timeout': 'WARN',
      startup: 'PASS',
    });
    const stop = j.checks.find((c) => c.id === 'stop-timeout')!;
    expect(stop.summary).toMatch(/^TimeoutStopSec 30 s < 100 s needed to drain the longest request/);
    expect(stop.fix).toBe(
      `raise it: \`systemctl edit ${UNITS.vllm.unit}\` → [Service] TimeoutStopSec=100s, or pass --timeout-stop-sec 100 to spectune apply`,
    );
    expect(j.checks.find((c) => c.id === 'engine')!.summary).toMatch(/^vllm \(version not reported\) healthy/);
    const measured = await runCli([
      'doctor',
      '--host',
      th1.name,
      ...ssh(),
      '--unit',
      UNITS.vllm.unit,
      '--itl-ms',
      '20',
      '--json',
    ]);
    expect(statuses(JSON.parse(measured.stdout) as DoctorJson)['stop-timeout']).toBe('PASS');
  });

  it('doctor FAILs for a user without journal or drop-in rights (exit 1) and changes nothing', async () => {
    const before = unitFingerprint(th1, UNITS.sglang.unit);
    const r = await runCli([
      'doctor',
      '--host',
      `${PLAIN_USER}@${th1.name}`,
      ...ssh(),
      '--unit',
      UNITS.sglang.unit,
      '--engine',
      'sglang',
      '--endpoint',
      `http://${th1.ip}:${UNITS.sglang.port}`,
      '--json',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const j = JSON.parse(r.stdout) as DoctorJson;
    expect(statuses(j)).toMatchObject({
      ssh: 'PASS',
      systemctl: 'PASS',
      journal: 'FAIL',
      dropin: 'FAIL',
      engine: 'PASS',
      startup: 'SKIP',
    });
    expect(j.checks.find((c) => c.id === 'journal')!.fix).toMatch(/systemd-journal/);
    expect(j.ok).toBe(false);
    expect(unitFingerprint(th1, UNITS.sglang.unit)).toBe(before);
  });

  it('doctor FAILs an unreachable host in one line per check, with the fix', async () => {
    const r = await runCli(['doctor', '--host', `root@${th1.unusedIp}`, ...ssh(), '--unit', UNITS.sglang.unit]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL +ssh +root@\S+ spectune-onb-sglang\.service: root@\S+: unreachable/m);
    expect(r.stdout).toMatch(/^ +fix: check the address/m);
    expect(r.stdout).toMatch(/^SKIP +journal/m);
  });
});

describe('init and doctor on a real llama-server unit', () => {
  let th3: TestHost;
  beforeAll(async () => {
    requireLlamaFiles();
    th3 = getTestHost(LLAMA_TEST_HOST);
    requireHostLlama(th3);
    installEngineUnit(th3, UNITS.llama.unit, 'llamacpp', UNITS.llama.port, UNITS.llama.stop);
    await waitHealthy(`http://${th3.ip}:${UNITS.llama.port}`, 180_000);
  });
  afterAll(() => {
    if (th3) removeEngineUnit(th3, UNITS.llama.unit);
  });

  it('init on the real llama-server unit reads draft-model speculation and the start-up time', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'spectune-onb-e2e-')), 'llama.yaml');
    const r = await runCli([
      'init',
      '--host',
      th3.name,
      '--ssh-config',
      th3.sshConfig,
      '--unit',
      UNITS.llama.unit,
      '--out',
      out,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as {
      found: { unit: string; engine: string; model: string; port: number; speculative: object }[];
      startup: { last: { seconds: number } };
    };
    expect(j.found.find((u) => u.unit === UNITS.llama.unit)).toMatchObject({
      engine: 'llamacpp',
      model: '/opt/llama/models/target-8L.gguf',
      port: 31952,
      speculative: { model_draft: '/opt/llama/models/draft-1L.gguf', spec_type: 'draft-simple', spec_draft_n_max: 4 },
    });
    expect(j.startup.last.seconds).toBeGreaterThanOrEqual(0);
    const { config } = await loadConfig(out);
    expect(config.space).toEqual([{ key: 'spec_draft_n_max', values: [2, 4, 8, 16] }]);
    // doctor on the config init wrote: every check passes, and the version comes from llama-server's /props.
    const d = await runCli(['doctor', '-c', out, '--ssh-config', th3.sshConfig, '--json']);
    expect(d.code, d.stdout + d.stderr).toBe(0);
    const dj = JSON.parse(d.stdout) as DoctorJson;
    expect(
      dj.checks.filter((c) => c.status !== 'PASS'),
      d.stdout,
    ).toEqual([]);
    expect(dj.checks.find((c) => c.id === 'engine')!.summary).toMatch(/^llamacpp \S+ healthy/);
  });
});
