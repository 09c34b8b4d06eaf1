// Shared pieces of the service-control e2e tests: a sim unit on a real test host, the real CLI as a subprocess,
// and direct SSH access for checks that must not go through the code under test.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openHost } from '../../src/host/open.js';
import type { Host } from '../../src/host/types.js';
import { getTestHost, type TestHost } from './helpers/testhosts.js';
import { waitHealthy as pollHealthy } from './helpers/health.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The unit template (test/fixtures/units/sim.service). */
const TEMPLATE = readFileSync(join(ROOT, 'test/fixtures/units/sim.service'), 'utf8');
/** The service-control tests use th2 (others use th1/th3 more) and ports 31400-31499. */
export const SERVICE_TEST_HOST = 'th2';

/** A sim unit installed for one test. */
export interface SimUnit {
  th: TestHost;
  host: Host;
  unit: string;
  port: number;
  endpoint: string;
  /** --host/--ssh-config/--unit/--endpoint flags for the CLI. */
  flags: string[];
  /** Action log of this test (on this machine). */
  actionLog: string;
}

// The unit file text for a test.
export function renderSimUnit(unit: string, port: number, timeoutStopSec: number, extraArgs = ''): string {
  return TEMPLATE.replaceAll('{{UNIT}}', unit)
    .replaceAll('{{PORT}}', String(port))
    .replaceAll('{{TIMEOUT_STOP_SEC}}', String(timeoutStopSec))
    .replaceAll('{{EXTRA_ARGS}}', extraArgs ? ` ${extraArgs}` : '');
}

// Run a command on the test host, failing the test when it fails.
export async function sh(host: Host, argv: string[]): Promise<string> {
  const r = await host.exec(argv, { timeoutMs: 120_000 });
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} -> ${r.exitCode}: ${r.stderr}`);
  return r.stdout;
}

// Install and start a fresh sim unit (any previous spectune state for it removed first).
export async function installSimUnit(
  name: string,
  port: number,
  opts: { timeoutStopSec?: number; start?: boolean; extraArgs?: string } = {},
): Promise<SimUnit> {
  const th = getTestHost(SERVICE_TEST_HOST);
  const host = await openHost({ target: th.name, sshConfig: th.sshConfig });
  const unit = `spectune-svc-e2e-${name}.service`;
  await removeSimUnit(host, unit);
  await host.writeFile(
    `/etc/systemd/system/${unit}`,
    renderSimUnit(unit, port, opts.timeoutStopSec ?? 30, opts.extraArgs),
  );
  await sh(host, ['systemctl', 'daemon-reload']);
  if (opts.start !== false) await sh(host, ['systemctl', 'start', unit]);
  const endpoint = `http://${th.ip}:${port}`;
  const actionLog = join(mkdtempSync(join(tmpdir(), 'spectune-svc-e2e-')), 'actions.jsonl');
  return {
    th,
    host,
    unit,
    port,
    endpoint,
    actionLog,
    flags: ['--host', th.name, '--ssh-config', th.sshConfig, '--unit', unit, '--endpoint', endpoint],
  };
}

// Stop and remove a unit with its drop-ins and spectune's state for it.
export async function removeSimUnit(host: Host, unit: string): Promise<void> {
  const timer = `spectune-lease-${unit.replace(/\.service$/, '')}`;
  await host.exec(['systemctl', 'stop', `${timer}.timer`, `${timer}.service`], { timeoutMs: 60_000 });
  await host.exec(['systemctl', 'stop', unit], { timeoutMs: 120_000 });
  await host.exec([
    'rm',
    '-rf',
    '--',
    `/etc/systemd/system/${unit}`,
    `/etc/systemd/system/${unit}.d`,
    `/run/systemd/system/${unit}.d`,
    `/run/spectune/${unit}`,
    `/var/lib/spectune/${unit}`,
  ]);
  await host.exec(['systemctl', 'daemon-reload']);
  await host.exec(['systemctl', 'reset-failed', unit]);
}

// Wait until the engine answers its health check (the unit was started by the test itself).
export function waitHealthy(endpoint: string, timeoutMs = 60_000): Promise<void> {
  return pollHealthy(endpoint, timeoutMs);
}

/** What a CLI run printed. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Run the built CLI (bin/spectune.js -> dist) as a subprocess.
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/spectune.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// The unit's journal as short text (read directly, not through spectune).
export async function journalText(host: Host, unit: string, since?: string): Promise<string> {
  return sh(host, [
    'journalctl',
    '-u',
    unit,
    '--no-pager',
    '-o',
    'short-precise',
    ...(since ? [`--since=${since}`] : []),
  ]);
}

// The host's current time for `journalctl --since=@...`, to the microsecond (a whole second would take in lines a
// previous test wrote in the same second).
export async function hostEpoch(host: Host): Promise<string> {
  return `@${(await sh(host, ['date', '+%s.%6N'])).trim()}`;
}
