// `spectune doctor`: preflight checks of a target, each PASS/WARN/FAIL with the fix; exit 1 when any FAILs.
import { runDoctor } from '../../app/doctor.js';
import { ToolError } from '../../errors.js';
import { formatChecks, summarizeChecks } from '../../onboard/index.js';
import { redactText, redactValue } from '../../redact.js';
import { numberFlag, parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';

const USAGE = `usage: spectune doctor [-c spectune.yaml | --host user@host --unit NAME [--engine E]] [--itl-ms N] [--json]
  Checks, changing nothing anywhere: SSH (host key checking on), systemctl and journal rights, rights to write
  the drop-in (test -w), engine health and version, TimeoutStopSec against the longest request, start-up time
  from the journal, disk for the local store, clock skew between the hosts of a two-host target, and, as you,
  the local state tune/apply/rollback write (action logs, the ssh control directory).
  -c FILE        the config to check (default: ./spectune.yaml when --unit is not given)
  --host/--unit/--engine/--endpoint  check one unit without a config (engine default: read from ExecStart)
  --ssh-config FILE, --sudo          as for every command
  --itl-ms N     your measured inter-token latency (p99 from \`spectune bench\`); default: a conservative 200 ms
  --json         {"ok", "checks": [{"id", "subject", "status", "summary", "fix", "facts"}]}
  Exit 0 when nothing FAILs (WARNs allowed), 1 otherwise.
example:
  spectune doctor -c spectune.yaml
  spectune doctor --host root@gpu1 --unit sglang-qwen --itl-ms 45`;
const FLAGS = {
  config: { type: 'string', short: 'c' },
  host: { type: 'string' },
  'ssh-config': { type: 'string' },
  sudo: { type: 'boolean' },
  unit: { type: 'string' },
  engine: { type: 'string' },
  endpoint: { type: 'string' },
  'itl-ms': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Entry point of `spectune doctor`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const itlMs = values['itl-ms'] === undefined ? undefined : numberFlag('itl-ms', values['itl-ms'], NaN);
  if (itlMs !== undefined && !(itlMs > 0))
    throw new ToolError('E_USAGE', `--itl-ms: expected a positive number of milliseconds, got "${values['itl-ms']}"`, {
      hint: 'e.g. --itl-ms 45 (p99 ITL from `spectune bench`)',
    });
  const r = await runDoctor(
    {
      config: values.config,
      host: values.host,
      sshConfig: values['ssh-config'],
      sudo: values.sudo === true,
      unit: values.unit,
      engine: values.engine,
      endpoint: values.endpoint,
      itlMs,
    },
    io.env,
  );
  const s = summarizeChecks(r.checks);
  io.stdout.write(
    values.json
      ? `${JSON.stringify(redactValue({ ok: s.fail === 0, source: r.source, summary: s, checks: r.checks }), null, 2)}\n`
      : redactText(formatChecks(r.checks)),
  );
  return r.exitCode === 0 ? EXIT.ok : EXIT.failure;
};
