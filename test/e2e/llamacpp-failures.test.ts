// Issue 7's failure proofs with the REAL llama-server under real systemd: a stop timeout (non-streaming request in
// flight, short TimeoutStopSec), a removed flag, a port in use and a missing model, each diagnosed live from the real
// journal by `spectune diagnose --host --unit`, and saved (trimmed, redacted) as fixture folders real-*.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnoseLogs } from '../../src/diagnose/index.js';
import { getTestHost, type TestHost } from './helpers/testhosts.js';
import { captureJournal, writeFixture } from './llamacpp-capture.js';
import {
  LLAMA_TEST_HOST,
  PAIRS,
  completeOnce,
  hostEpoch,
  hostModel,
  installLlamaUnit,
  removeLlamaUnit,
  requireHostLlama,
  requireLlamaFiles,
  serveArgs,
  waitLlamaHealthy,
} from './llamacpp-support.js';
import { runCli, sshRun } from './tune-support.js';

const UNITS = {
  stop: 'spectune-llama-e2e-stop.service',
  flag: 'spectune-llama-e2e-flag.service',
  portA: 'spectune-llama-e2e-port-a.service',
  portB: 'spectune-llama-e2e-port-b.service',
  model: 'spectune-llama-e2e-model.service',
};
const PORTS = { stop: 18191, flag: 18192, shared: 18193, model: 18194 };
/** Short enough that the hung llama-server is killed quickly, long enough to see it hang. */
const TIMEOUT_STOP_SEC = 4;
/** A non-streaming answer far longer than the stop timeout (the 8-layer target decodes ~50 tok/s on two cores). */
const LONG_TOKENS = 1500;

interface VerdictJson {
  class: string;
  cause: string | null;
  summary: string;
  facts?: Record<string, unknown>;
  remediation: { text: string; setting?: string }[];
  evidence: { text: string }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Diagnose a unit live over SSH with the built CLI, as an operator would.
async function diagnoseLive(h: TestHost, unit: string, since: string): Promise<VerdictJson> {
  const d = await runCli(
    [
      'diagnose',
      '--host',
      h.name,
      '--ssh-config',
      h.sshConfig,
      '--unit',
      unit,
      '--engine',
      'llamacpp',
      '--since',
      since,
      '--json',
    ],
    {},
  );
  expect([0, 1], `spectune diagnose failed:\n${d.stderr.slice(-2000)}`).toContain(d.code);
  return (JSON.parse(d.stdout) as { verdict: VerdictJson }).verdict;
}

// Wait until a unit that failed at start-up is no longer active (Restart=no).
async function waitStopped(h: TestHost, unit: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = sshRun(h, `systemctl is-active ${unit}; true`).trim();
    if (state === 'failed' || state === 'inactive') return state;
    if (Date.now() > deadline) throw new Error(`${unit} still ${state} after ${timeoutMs} ms`);
    await sleep(250);
  }
}

// Wait until the unit's journal holds a line: journald stores a service's stdout through its own stream socket, so
// under load the last lines of a dead process can land after PID 1's exit notice (seen once in CI).
async function waitJournalLine(
  h: TestHost,
  unit: string,
  since: string,
  needle: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!sshRun(h, `journalctl -u ${unit} --since '${since}' --no-pager -o cat; true`).includes(needle)) {
    if (Date.now() > deadline) throw new Error(`${unit}: no "${needle}" in the journal after ${timeoutMs} ms`);
    await sleep(250);
  }
}

// Save the real journal as fixture real-<name> and check the fixture alone gives the same class.
function saveFixture(h: TestHost, name: string, unit: string, since: string, expected: Record<string, unknown>): void {
  const cap = captureJournal(h, unit, since);
  writeFixture(name, cap, { unit, ...expected });
  for (const [form, content] of [
    ['journal.txt', cap.text],
    ['journal.jsonl', cap.jsonl],
  ]) {
    const v = diagnoseLogs([{ name: form, content: Buffer.from(content) }], { unit }).verdict;
    expect(v.class, `fixture real-${name} [${form}]: ${v.summary}`).toBe(expected.class);
  }
}

describe('real llama-server failures under systemd, diagnosed from the real journal', () => {
  let host: TestHost;

  beforeAll(() => {
    requireLlamaFiles();
    host = getTestHost(LLAMA_TEST_HOST);
    requireHostLlama(host);
  });
  afterAll(() => {
    if (host) for (const u of Object.values(UNITS)) removeLlamaUnit(host, u);
  });

  it('stop with a non-streaming request in flight: llama-server hangs, systemd kills it, diagnose says stop_timeout', async () => {
    const endpoint = `http://${host.ip}:${PORTS.stop}`;
    installLlamaUnit(host, UNITS.stop, ['-m', hostModel(PAIRS.perfect.target), ...serveArgs(PORTS.stop)], {
      timeoutStopSec: TIMEOUT_STOP_SEC,
    });
    await waitLlamaHealthy(endpoint);
    const since = hostEpoch(host);
    const ac = new AbortController();
    const inflight = completeOnce(endpoint, LONG_TOKENS, ac.signal).catch((e: unknown) => e);
    await sleep(2000);
    sshRun(host, `systemctl stop ${UNITS.stop}`);
    ac.abort();
    await inflight;
    const journal = sshRun(host, `journalctl -u ${UNITS.stop} --no-pager -o short --since=${since}`);
    expect(journal).toMatch(/cleaning up before exit/);
    expect(journal).toMatch(/State 'stop-sigterm' timed out\. Killing\./);
    const v = await diagnoseLive(host, UNITS.stop, since);
    expect(v.class, v.summary).toBe('stop_timeout');
    expect(v.remediation.map((r) => r.text).join('\n')).toMatch(/TimeoutStopSec/);
    saveFixture(host, 'stop-timeout', UNITS.stop, since, {
      class: 'stop_timeout',
      ruledOut: ['host_oom_kill'],
      remediation: ['TimeoutStopSec'],
    });
  });

  it('a removed flag (--draft-max) is a hard start-up error: bad_config naming --spec-draft-n-max', async () => {
    const since = hostEpoch(host);
    const args = [
      '-m',
      hostModel(PAIRS.perfect.target),
      '-md',
      hostModel('draft-1L.gguf'),
      '--spec-type',
      'draft-simple',
      '--draft-max',
      '8',
      ...serveArgs(PORTS.flag),
    ];
    installLlamaUnit(host, UNITS.flag, args);
    await waitStopped(host, UNITS.flag);
    await waitJournalLine(host, UNITS.flag, since, 'error while handling argument');
    const v = await diagnoseLive(host, UNITS.flag, since);
    expect(v.class, v.summary).toBe('bad_config');
    expect(v.facts?.argument).toBe('--draft-max');
    expect(v.facts?.replacement).toBe('--spec-draft-n-max');
    expect(v.evidence.map((e) => e.text).join('\n')).toMatch(/--draft-max.*removed.*--spec-draft-n-max/);
    saveFixture(host, 'removed-flag', UNITS.flag, since, {
      class: 'bad_config',
      facts: { argument: '--draft-max', replacement: '--spec-draft-n-max' },
    });
  });

  it('two units on the same port: the second cannot bind, diagnose says port_in_use with the port', async () => {
    installLlamaUnit(host, UNITS.portA, ['-m', hostModel(PAIRS.perfect.target), ...serveArgs(PORTS.shared)]);
    await waitLlamaHealthy(`http://${host.ip}:${PORTS.shared}`);
    const since = hostEpoch(host);
    installLlamaUnit(host, UNITS.portB, ['-m', hostModel(PAIRS.poor.target), ...serveArgs(PORTS.shared)]);
    await waitStopped(host, UNITS.portB);
    await waitJournalLine(host, UNITS.portB, since, "couldn't bind HTTP server socket");
    const v = await diagnoseLive(host, UNITS.portB, since);
    expect(v.class, v.summary).toBe('port_in_use');
    expect(v.facts?.port).toBe(PORTS.shared);
    saveFixture(host, 'port-in-use', UNITS.portB, since, { class: 'port_in_use', facts: { port: PORTS.shared } });
    removeLlamaUnit(host, UNITS.portA);
  });

  it('a missing model file: model_load_error', async () => {
    const since = hostEpoch(host);
    installLlamaUnit(host, UNITS.model, ['-m', hostModel('no-such-model.gguf'), ...serveArgs(PORTS.model)]);
    await waitStopped(host, UNITS.model);
    await waitJournalLine(host, UNITS.model, since, 'no-such-model.gguf');
    const v = await diagnoseLive(host, UNITS.model, since);
    expect(v.class, v.summary).toBe('model_load_error');
    expect(v.evidence.map((e) => e.text).join('\n')).toContain('no-such-model.gguf');
    saveFixture(host, 'missing-model', UNITS.model, since, {
      class: 'model_load_error',
      evidence: ['no-such-model.gguf'],
    });
  });
});
