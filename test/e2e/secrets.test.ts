// Secrets never leave the host (issue 11 item 7): a real campaign on a test host whose SIMULATED SGLang unit has an
// API key in ExecStart, tokens in Environment= (unit and drop-in) and an EnvironmentFile, plus bench/diagnose/status/
// logs/report/doctor/apply/rollback with keys in flags, URLs and headers; every artifact (the store dumped table by
// table and raw, reports, the action log, every command's stdout/stderr) is searched for every secret value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module shared with the fault suite (no types)
import { runScenario, scanArtifact } from '../../bench/faults/secrets.mjs';

interface Artifact {
  name: string;
  text: string;
  store?: boolean;
}
interface Scenario {
  secrets: Record<string, string>;
  artifacts: Artifact[];
  host: string;
  skipped?: string;
  engineKeeps: { execStart: boolean; environment: boolean; environmentFile: boolean; authOk: number; authBad: number };
  tune: { code: number; stdout: string; stderr: string };
  runs: { args: string[]; code: number; stdout: string; stderr: string }[];
}

describe('secrets in the unit, the flags and the URLs', () => {
  let sc: Scenario;
  beforeAll(async () => {
    sc = (await runScenario({ host: 'th3' })) as Scenario;
    expect(sc.skipped).toBeUndefined();
  }, 600_000);
  afterAll(() => undefined);

  it('runs the campaign and every command (the artifacts are real)', () => {
    expect(sc.tune.code, sc.tune.stderr.slice(-2000)).toBe(0);
    expect(sc.artifacts.length).toBeGreaterThan(30);
    expect(sc.artifacts.some((a) => a.store && /## trials/.test(a.text))).toBe(true);
    // Every command ran to a result or a coded one-line error, never a crash.
    for (const r of sc.runs) expect([0, 1], r.args.join(' ')).toContain(r.code);
  });

  it('finds no secret value in any artifact', () => {
    const leaks = sc.artifacts
      .map((a) => ({ name: a.name, leaks: scanArtifact(a.text, sc.secrets).leaks as string[] }))
      .filter((x) => x.leaks.length);
    expect(leaks).toEqual([]);
  });

  it('shows the redaction marker where the key was: store, reports, tune --json', () => {
    const store = sc.artifacts
      .filter((a) => a.store)
      .map((a) => a.text)
      .join('\n');
    expect(store).toContain('--api-key ***');
    // The reports' copy-paste blocks put an environment reference where the key was, never a literal *** that breaks the unit.
    for (const f of ['report.md', 'report.html'])
      expect(sc.artifacts.find((a) => a.name.endsWith(f))?.text, f).toContain('--api-key ${API_KEY}');
    expect(sc.tune.stdout).toContain('--api-key ***');
  });

  it('reaches the engine through an endpoint with user info (status and doctor)', () => {
    const status = sc.runs.find((r) => r.args[0] === 'status' && r.args.includes('--json'));
    expect((JSON.parse(status?.stdout ?? '{}') as { health?: { ok: boolean } }).health?.ok).toBe(true);
    const doctor = JSON.parse(sc.runs.find((r) => r.args[0] === 'doctor')?.stdout ?? '{}') as {
      checks: { id: string; status: string }[];
    };
    expect(doctor.checks.find((c) => c.id === 'engine')?.status).toBe('PASS');
  });

  it('leaves the engine its real secrets: the unit keeps them and only the real key is accepted', () => {
    expect(sc.engineKeeps).toEqual({
      execStart: true,
      environment: true,
      environmentFile: true,
      authOk: 200,
      authBad: 401,
    });
  });
});
