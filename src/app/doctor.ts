// `spectune doctor`: preflight checks before a campaign, each PASS/WARN/FAIL with the fix. It only reads: ssh
// commands that change nothing (systemctl show, journalctl, test -w, date), HTTP GETs, and a statfs here.
import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ToolError } from '../errors.js';
import { splitUrlCredentials } from '../url-credentials.js';
import { ENGINE_NAMES, getEngine } from '../engines/index.js';
import type { EngineName } from '../engines/types.js';
import { openHost } from '../host/open.js';
import type { Host } from '../host/types.js';
import {
  describeUnitFiles,
  judgeApiKey,
  judgeClockSkew,
  judgeDropIn,
  judgeEngine,
  judgeJournal,
  judgeStartup,
  judgeStopTimeout,
  judgeStoreDisk,
  readVersion,
  summarizeChecks,
  type CheckResult,
  type EngineUnit,
  type StopTimeoutFacts,
} from '../onboard/index.js';
import { createHttpProber, joinUrl } from '../service/health.js';
import type { UnitState } from '../service/show.js';
import { catUnit, lastJournalCursor, readClockOffsetMs, showUnit } from '../service/systemd.js';
import { STATE_ROOT } from '../service/unit.js';
import { judgeInForce, viewUnit } from '../service/unit-view.js';
import { judgeGroup, type ListedRank } from '../onboard/group.js';
import { resolveDoctorPlan, type DoctorHost, type DoctorPlan, type DoctorRequest } from './doctor-target.js';
import { readStartup } from './onboard-host.js';
import { resolveHostname } from './service-target.js';
import { doctorLocalPaths } from './local-preflight.js';
import { describeLocalProblem, inspectLocalPaths, type LocalPath, type LocalPathProblem } from '../local-state.js';

const COMMAND_TIMEOUT_MS = 30_000;
const VERSION_TIMEOUT_MS = 3000;
const RIGHTS_FIX =
  'connect as root, or pass --sudo with passwordless sudo for systemctl, journalctl and the drop-in directory';
/** systemctl's answer on a machine (or container) whose PID 1 is not systemd. */
const NO_SYSTEMD = /not been booted with systemd|Failed to connect to bus/;
const JOURNAL_FIX =
  "connect as root, or add the ssh user to the 'systemd-journal' group (usermod -aG systemd-journal USER)";

/** The checks and their totals. */
export interface DoctorOutcome {
  source: string;
  checks: CheckResult[];
  exitCode: 0 | 1;
}

// A check result built here (the judgements live in onboard/checks.ts).
function check(
  id: string,
  subject: string,
  status: CheckResult['status'],
  summary: string,
  fix: string | null = null,
): CheckResult {
  return { id, subject, status, summary, fix };
}

// The ids checked per host after SSH, for SKIP lines when an earlier step failed.
const HOST_CHECKS = ['systemctl', 'journal', 'dropin', 'in-force', 'engine', 'api-key', 'stop-timeout', 'startup'];

// SKIP lines for the checks that could not run.
function skipped(ids: string[], subject: string, why: string): CheckResult[] {
  return ids.map((id) => check(id, subject, 'SKIP', why));
}

// SSH: one harmless command; ssh's own failures (unreachable, auth, host key) become a FAIL with their hint.
async function checkSsh(
  host: Host,
  subject: string,
  local: boolean,
): Promise<{ result: CheckResult; rights: CheckResult | null }> {
  try {
    const r = await host.exec(['systemctl', '--version'], { timeoutMs: COMMAND_TIMEOUT_MS });
    const version = /^systemd (\d+)/.exec(r.stdout)?.[1];
    const how = local
      ? 'this machine (no SSH)'
      : 'reachable over SSH (host key checked: StrictHostKeyChecking stays on)';
    if (r.exitCode !== 0)
      return {
        result: check('ssh', subject, 'PASS', how),
        rights: check(
          'systemctl',
          subject,
          'FAIL',
          'systemctl does not run on this host',
          'spectune tunes systemd units: run the engine under systemd',
        ),
      };
    return { result: check('ssh', subject, 'PASS', `${how}; systemd ${version ?? '?'}`), rights: null };
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    if (e.code === 'E_NO_PERMISSION')
      return {
        result: check('ssh', subject, 'PASS', 'reachable over SSH'),
        rights: check('systemctl', subject, 'FAIL', e.message, e.hint ?? RIGHTS_FIX),
      };
    return { result: check('ssh', subject, 'FAIL', e.message, e.hint ?? null), rights: null };
  }
}

// systemctl show: the unit exists and its state.
async function checkUnit(
  host: Host,
  subject: string,
  unit: string,
): Promise<{ result: CheckResult; state: UnitState | null }> {
  try {
    const s = await showUnit(host, unit);
    const state = `${s.activeState} (${s.subState})${s.mainPid ? `, PID ${s.mainPid}` : ''}`;
    if (s.activeState === 'active')
      return { result: check('systemctl', subject, 'PASS', `systemctl show: ${state}`), state: s };
    return {
      result: check(
        'systemctl',
        subject,
        'WARN',
        `the unit is ${state}: the baseline is measured on the running service`,
        `start it (systemctl start ${unit}); if it fails, \`spectune diagnose --unit ${unit}\` says why`,
      ),
      state: s,
    };
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    const said = e.message.replace(/^.*? failed with exit code \d+: /, 'systemctl show failed: ');
    const fix = NO_SYSTEMD.test(e.message)
      ? 'this host does not run systemd as PID 1: spectune tunes systemd units'
      : (e.hint ?? RIGHTS_FIX);
    return { result: check('systemctl', subject, 'FAIL', said, fix), state: null };
  }
}

// journalctl -u: readable, and not empty.
async function checkJournal(host: Host, subject: string, unit: string): Promise<CheckResult> {
  try {
    const cursor = await lastJournalCursor(host, unit);
    return judgeJournal(subject, { denied: false, records: cursor ? 1 : 0, error: null }, JOURNAL_FIX);
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    return judgeJournal(subject, { denied: e.code === 'E_NO_PERMISSION', records: 0, error: e.message }, JOURNAL_FIX);
  }
}

// May the ssh user (or sudo) write a directory? `test -w`, nothing written.
async function canWrite(host: Host, path: string): Promise<boolean> {
  return (await host.exec(['test', '-w', path], { timeoutMs: COMMAND_TIMEOUT_MS })).exitCode === 0;
}

// The nearest existing directory of a path on the host (what `mkdir -p` would write into).
async function existingDir(host: Host, path: string): Promise<string> {
  for (let p = path; ; p = dirname(p)) {
    if (p === '/' || (await host.exec(['test', '-d', p], { timeoutMs: COMMAND_TIMEOUT_MS })).exitCode === 0) return p;
  }
}

// Rights to deploy: write the drop-in directory and spectune's state directory (test -w only).
async function checkDropIn(host: Host, subject: string, unit: string): Promise<CheckResult> {
  try {
    const unitDir = await existingDir(host, `/etc/systemd/system/${unit}.d`);
    const stateDir = await existingDir(host, `${STATE_ROOT}/${unit}`);
    return judgeDropIn(
      subject,
      {
        unitDir,
        stateDir,
        unitDirWritable: await canWrite(host, unitDir),
        stateDirWritable: await canWrite(host, stateDir),
      },
      RIGHTS_FIX,
    );
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    return check('dropin', subject, 'FAIL', e.message, e.hint ?? RIGHTS_FIX);
  }
}

// What is in force: WARN when spectune's drop-in overrides the unit's own ExecStart (an edit of the unit is then
// ignored), WARN when a later drop-in that is not spectune's overrides spectune's keys; PASS when the unit runs as written.
async function checkInForce(host: Host, subject: string, unit: string): Promise<CheckResult> {
  const files = await catUnit(host, unit).catch(() => null);
  if (!files) return check('in-force', subject, 'SKIP', 'unit files not readable (see the systemctl check)');
  const j = judgeInForce(viewUnit(files), unit);
  return check('in-force', subject, j.status, j.summary, j.fix);
}

// GET a path of the endpoint with a short timeout: status and body, or the network error.
async function getText(url: string, apiKey: string | null): Promise<{ status: number; body: string } | null> {
  try {
    const target = splitUrlCredentials(url, apiKey ? { authorization: `Bearer ${apiKey}` } : {});
    const res = await fetch(target.url, { signal: AbortSignal.timeout(VERSION_TIMEOUT_MS), headers: target.headers });
    return { status: res.status, body: await res.text() };
  } catch {
    return null;
  }
}

// The engine's version from the first probe that answers with one.
async function probeVersion(endpoint: string, engine: EngineName, apiKey: string | null): Promise<string | null> {
  for (const probe of getEngine(engine).versionProbes) {
    const r = await getText(joinUrl(endpoint, probe.path), apiKey);
    const v = r && r.status === 200 ? readVersion(probe, r.body) : null;
    if (v) return v;
  }
  return null;
}

// The unit's engine facts from its ExecStart (null when not readable).
async function readUnitEngine(host: Host, unit: string, engine: EngineName | null): Promise<EngineUnit | null> {
  const files = await catUnit(host, unit).catch(() => null);
  return files ? describeUnitFiles(unit, files, engine ?? undefined) : null;
}

// The key spectune will send, on a path the engine's --api-key protects: a 401/403 is a FAIL naming where the key goes.
async function checkApiKey(
  plan: DoctorPlan,
  endpoint: string,
  subject: string,
  engine: EngineName,
): Promise<CheckResult> {
  const url = joinUrl(endpoint, getEngine(engine).authProbePath);
  const r = await getText(url, plan.apiKey.key);
  return judgeApiKey(subject, {
    url,
    status: r?.status ?? null,
    sent: plan.apiKey.key !== null,
    source: plan.apiKey.source,
    fix: plan.apiKey.fix,
  });
}

// The endpoint of rank0: the plan's, else http://<host>:<the unit's --port>.
async function endpointOf(
  plan: DoctorPlan,
  h: DoctorHost,
  engine: EngineName,
  seen: EngineUnit | null,
): Promise<string> {
  const port = seen?.port ?? getEngine(engine).defaultPort;
  const hostName = await resolveHostname({ target: h.target, sshConfig: plan.sshConfig });
  return (plan.endpoint ?? `http://${hostName.includes(':') ? `[${hostName}]` : hostName}:${port}`).replace(/\/+$/, '');
}

// What the engine reports in flight and its decode rate (rank0; GET /metrics), or null when it does not answer.
async function readLoad(
  plan: DoctorPlan,
  h: DoctorHost,
  engine: EngineName,
  seen: EngineUnit | null,
): Promise<StopTimeoutFacts['load']> {
  const m = await createHttpProber(plan.apiKey.key)
    .metrics(await endpointOf(plan, h, engine, seen), getEngine(engine))
    .catch(() => null);
  if (!m || (m.runningRequests === null && m.queuedRequests === null)) return null;
  return {
    running: m.runningRequests ?? 0,
    queued: m.queuedRequests ?? 0,
    genThroughput: m.genThroughput,
    maxRunning: m.maxRunningRequests,
  };
}

// Engine health and version at the endpoint (rank0), then whether it accepts spectune's key.
async function checkEngine(
  plan: DoctorPlan,
  h: DoctorHost,
  subject: string,
  engine: EngineName,
  seen: EngineUnit | null,
): Promise<CheckResult[]> {
  const endpoint = await endpointOf(plan, h, engine, seen);
  const health = await createHttpProber(plan.apiKey.key).health(joinUrl(endpoint, getEngine(engine).healthPath));
  const version = health.ok ? await probeVersion(endpoint, engine, plan.apiKey.key) : null;
  const result = judgeEngine(subject, {
    engine,
    healthUrl: health.url,
    healthStatus: health.status,
    healthError: health.error,
    version,
    detectedEngine: seen?.engine ?? null,
  });
  if (!health.ok)
    return [result, check('api-key', subject, 'SKIP', 'the engine is not serving (see the engine check)')];
  return [result, await checkApiKey(plan, endpoint, subject, engine)];
}

// Start-up time from the journal against the ready deadline.
async function checkStartup(
  host: Host,
  subject: string,
  unit: string,
  engine: EngineName,
  readyMs: number,
): Promise<CheckResult> {
  try {
    return judgeStartup(subject, await readStartup(host, unit, engine), readyMs);
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    return check(
      'startup',
      subject,
      e.code === 'E_NO_PERMISSION' ? 'SKIP' : 'FAIL',
      e.code === 'E_NO_PERMISSION' ? 'journal not readable (see the journal check)' : e.message,
      e.hint ?? null,
    );
  }
}

// Every check of one host; the clock offset is returned for the skew check. After SSH every check runs on its own
// (a user who may not read the unit may still lack journal rights: both are reported), except what needs the state.
async function checkHost(
  plan: DoctorPlan,
  h: DoctorHost,
): Promise<{ checks: CheckResult[]; offsetMs: number | null; seen?: EngineUnit | null }> {
  const subject = `${h.target ?? 'this machine'} ${h.unit}`;
  const host = await openHost({ target: h.target, sshConfig: plan.sshConfig, sudo: plan.sudo });
  try {
    const ssh = await checkSsh(host, subject, !h.target);
    if (ssh.result.status === 'FAIL')
      return { checks: [ssh.result, ...skipped(HOST_CHECKS, subject, 'no SSH session')], offsetMs: null };
    if (ssh.rights)
      return {
        checks: [ssh.result, ssh.rights, ...skipped(HOST_CHECKS.slice(1), subject, 'systemctl not usable')],
        offsetMs: null,
      };
    const unit = await checkUnit(host, subject, h.unit);
    const journal = await checkJournal(host, subject, h.unit);
    const checks = [
      ssh.result,
      unit.result,
      journal,
      await checkDropIn(host, subject, h.unit),
      await checkInForce(host, subject, h.unit),
    ];
    const seen = await readUnitEngine(host, h.unit, plan.engine);
    const engine = plan.engine ?? seen?.engine ?? null;
    if (!engine) {
      checks.push(
        check(
          'engine',
          subject,
          'FAIL',
          'cannot tell the engine: ExecStart is not readable or runs no SGLang, vLLM or llama-server command (a wrapper script?)',
          `pass --engine ${ENGINE_NAMES.join('|')}, or put the engine command in ExecStart`,
        ),
      );
    } else if (h.role === 'rank0') {
      checks.push(...(await checkEngine(plan, h, subject, engine, seen)));
    }
    const load = engine && h.role === 'rank0' ? await readLoad(plan, h, engine, seen) : null;
    checks.push(
      unit.state
        ? judgeStopTimeout(subject, {
            unit: h.unit,
            timeoutStopMs: unit.state.timeoutStopMs,
            outputTokens: plan.outputTokens,
            itlMs: plan.itlMs,
            load,
          })
        : check('stop-timeout', subject, 'SKIP', 'unit state not readable (see the systemctl check)'),
    );
    if (!engine) checks.push(check('startup', subject, 'SKIP', 'engine unknown (its ready line is engine-specific)'));
    else if (journal.status === 'FAIL')
      checks.push(check('startup', subject, 'SKIP', 'journal not readable (see the journal check)'));
    else checks.push(await checkStartup(host, subject, h.unit, engine, plan.readyTimeoutMs));
    return { checks, offsetMs: await readClockOffsetMs(host), seen };
  } finally {
    await host.close();
  }
}

// Free space and write access where the local store goes (the nearest existing directory; nothing created).
function checkStoreDisk(store: string): CheckResult {
  let dir = dirname(resolve(store));
  while (!existsSync(dir) && dir !== dirname(dir)) dir = dirname(dir);
  let writable = true;
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    writable = false;
  }
  let freeBytes: number | null = null;
  try {
    const s = statfsSync(dir);
    freeBytes = s.bavail * s.bsize;
  } catch {
    freeBytes = null;
  }
  return judgeStoreDisk('this machine', { dir, freeBytes, writable });
}

// The local paths a command writes (action logs, ssh control directory, a local lock), as the user running doctor:
// FAIL naming the first that cannot be written, with its fix; PASS naming where they go.
function judgeLocalState(subject: string, paths: LocalPath[], problems: LocalPathProblem[]): CheckResult {
  const facts = {
    paths: paths.map((p) => ({ what: p.what, path: p.path })),
    problems: problems.map((p) => ({ what: p.what, path: p.path, at: p.at, errno: p.errno })),
  };
  const first = problems[0];
  if (first) {
    const more =
      problems.length > 1
        ? ` (and ${problems.length - 1} more: ${problems
            .slice(1)
            .map((p) => `${p.what} ${p.path}`)
            .join(', ')})`
        : '';
    return {
      ...check(
        'local-state',
        subject,
        'FAIL',
        `${describeLocalProblem(first)}${more}; tune/apply/rollback would refuse to start`,
        first.fix,
      ),
      facts,
    };
  }
  return {
    ...check(
      'local-state',
      subject,
      'PASS',
      `writable by this user: ${paths.map((p) => `${p.what} ${p.path}`).join(', ')}`,
    ),
    facts,
  };
}

// Run every check (hosts one after another, then the clock skew between them and the local store).
export async function runDoctor(req: DoctorRequest, env: NodeJS.ProcessEnv): Promise<DoctorOutcome> {
  const plan = await resolveDoctorPlan(req, env);
  const checks: CheckResult[] = [];
  const offsets: { host: string; offsetMs: number | null }[] = [];
  const listed: ListedRank[] = [];
  for (const [i, h] of plan.hosts.entries()) {
    const r = await checkHost(plan, h);
    checks.push(...r.checks);
    offsets.push({ host: h.target ?? 'this machine', offsetMs: r.offsetMs });
    listed.push({ subject: `${h.target ?? 'this machine'} ${h.unit}`, role: i, nodes: r.seen?.nodes ?? null });
  }
  // A multi-node unit whose group spectune.yaml lists only in part: a change would split the ranks.
  const group = judgeGroup(listed);
  if (group)
    checks.push({
      id: 'group',
      subject: listed.map((l) => l.subject).join(' + '),
      status: group.status,
      summary: group.summary,
      fix: group.fix,
    });
  if (plan.hosts.length > 1) checks.push(judgeClockSkew(offsets));
  checks.push(checkStoreDisk(plan.store));
  const local = doctorLocalPaths({ store: resolve(plan.store), hosts: plan.hosts, sudo: plan.sudo, env });
  checks.push(judgeLocalState('this machine', local, inspectLocalPaths(local)));
  return { source: plan.source, checks, exitCode: summarizeChecks(checks).exitCode };
}
