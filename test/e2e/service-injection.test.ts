// Injection attempts on a real test host: hostile unit names are refused before any connection; hostile flag
// values reach the engine as one verbatim argument; nothing of them ever runs (canary files stay absent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSimUnit, removeSimUnit, runCli, sh, waitHealthy, type SimUnit } from './service-helpers.js';

const CANARY_DIR = '/tmp/spectune-svc-e2e-canary';
// A value that would create canary files if any shell, systemd specifier or variable expansion touched it.
const HOSTILE_VALUE = `x; touch ${CANARY_DIR}/a $(touch ${CANARY_DIR}/b) \`touch ${CANARY_DIR}/c\` "q" 's' %n %% \\ \${HOME} $HOME | tee ${CANARY_DIR}/d && touch ${CANARY_DIR}/e`;
const HOSTILE_UNITS = [
  `x;touch ${CANARY_DIR}/u1`,
  `$(touch ${CANARY_DIR}/u2).service`,
  `\`touch ${CANARY_DIR}/u3\``,
  '--now',
  '-H evil.service',
  'a b.service',
  '../../../etc/passwd',
  'x\nExecStart=/bin/sh',
  'x.service;id',
];

// The canary files that exist on the host (none, unless something was injected).
async function canaries(u: SimUnit): Promise<string> {
  return sh(u.host, ['find', CANARY_DIR, '-type', 'f']);
}

// The engine process's argv, read from /proc (NUL-separated: the exact arguments it received).
async function engineArgv(u: SimUnit): Promise<string[]> {
  const pid = (await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit])).trim();
  return (await sh(u.host, ['cat', `/proc/${pid}/cmdline`])).split('\0');
}

describe('injection attempts are refused or quoted', () => {
  let u: SimUnit;
  beforeAll(async () => {
    u = await installSimUnit('inject', 31403);
    await sh(u.host, ['rm', '-rf', CANARY_DIR]);
    await sh(u.host, ['mkdir', '-p', CANARY_DIR]);
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it.each(HOSTILE_UNITS)('refuses the unit name %j with one line and no connection', async (unit) => {
    // An unresolvable --host proves it: the refusal comes before any SSH attempt (else this would be E_SSH_*).
    for (const cmd of ['status', 'apply', 'rollback', 'logs']) {
      const extra = cmd === 'apply' ? ['--set', 'speculative_num_steps=4'] : [];
      const r = await runCli([
        cmd,
        '--host',
        'root@nonexistent.invalid',
        `--unit=${unit}`,
        '--endpoint',
        'http://127.0.0.1:1',
        ...extra,
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^spectune: refusing unit name /);
    }
    expect(await canaries(u)).toBe('');
  });

  it('passes a hostile flag value to the engine as one verbatim argument and runs none of it', async () => {
    const r = await runCli(['apply', ...u.flags, '--set', `speculative_draft_model_path=${HOSTILE_VALUE}`, '--json'], {
      SPECTUNE_ACTION_LOG: `${u.actionLog}`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'ready',
      config: { speculative_draft_model_path: HOSTILE_VALUE },
    });
    const argv = await engineArgv(u);
    expect(argv[argv.indexOf('--speculative-draft-model-path') + 1]).toBe(HOSTILE_VALUE);
    expect(await canaries(u)).toBe('');
    const st = await runCli(['status', ...u.flags]);
    expect(st.stdout).toContain(`speculative_draft_model_path=${HOSTILE_VALUE}`);
  });

  it('refuses a value with a line break (it would add directives to the drop-in) and changes nothing', async () => {
    const before = await sh(u.host, ['cat', `/etc/systemd/system/${u.unit}.d/90-spectune.conf`]);
    const r = await runCli([
      'apply',
      ...u.flags,
      '--set',
      'speculative_draft_model_path=a\nExecStartPre=/bin/touch /tmp/x',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/line break/);
    expect(await sh(u.host, ['cat', `/etc/systemd/system/${u.unit}.d/90-spectune.conf`])).toBe(before);
  });

  it('keeps a hostile --since an argument of journalctl', async () => {
    const r = await runCli(['logs', ...u.flags, '--since', `$(touch ${CANARY_DIR}/s1); touch ${CANARY_DIR}/s2`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(await canaries(u)).toBe('');
  });
});
