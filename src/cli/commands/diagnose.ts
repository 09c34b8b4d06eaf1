// `spectune diagnose`: explain why an inference service died, with evidence (human report or --json).
import { runDiagnose } from '../../app/diagnose.js';
import { runSlurmDiagnose } from '../../app/diagnose-slurm.js';
import { resolveTarget, type RankTarget } from '../../app/service-target.js';
import { renderDiagnosis } from '../../diagnose/index.js';
import { ENGINE_NAMES } from '../../engines/index.js';
import type { EngineName } from '../../engines/types.js';
import { ToolError } from '../../errors.js';
import { redactValue } from '../../redact.js';
import { parseFlags } from '../args.js';
import type { Command } from '../io.js';

const USAGE = `usage: spectune diagnose [FILE...|-] [--state FILE] [--actions FILE] [--kernel FILE] [--engine ${ENGINE_NAMES.join('|')}] [--unit U] [--json]
       spectune diagnose --unit U [--host user@host] [--since "10 min ago"] [--json]
       spectune diagnose -c spectune.yaml [--rank N] [--since "10 min ago"]
       spectune diagnose --host user@rank0 --host user@rank1 --unit U [--rank N]
       spectune diagnose --slurm-job ID [--host user@login] [--output FILE] [--engine E] [--json]
  FILE            journalctl -o json export, journalctl text (short, short-iso, short-precise) or plain engine
                  output; one per node; - or a pipe: stdin
  --state FILE    \`systemctl show UNIT\` output    --actions FILE  spectune's action log (JSON lines): yours
                  are ~/.local/state/spectune/actions.jsonl (apply/rollback) and <store>.actions/campaign-N.jsonl (tune)
  --kernel FILE   kernel log lines (OOM killer)    --engine E      (default: detected from the log)
  --unit U        live: read the unit's journal, state and kernel log (on --host, default this machine)
  --since TIME    live window start (default "10 min ago")          --ssh-config FILE
  -c FILE         live, with the units, hosts and engine of spectune.yaml's target: every rank's journal, one
                  verdict for the group, host and rank on every evidence line, a worker's abort linked to the
                  rank that ended first; --host given once more per rank does the same without a config
  --rank N        of a group: rank N's own verdict (the other ranks' journals still read for the link)
  --slurm-job ID  a Slurm job: sacct + scontrol + its output file, read on the login host (--host, default this
                  machine); --output FILE when scontrol has forgotten the job (%j = job id)
  --json          the diagnosis as JSON (default: text)
examples:
  spectune diagnose --host root@gpu1 --unit sglang-qwen.service --since "10 min ago"
  journalctl -u sglang-qwen -o json | spectune diagnose --json -`;

// --rank N of a group: a number 0..ranks-1; without a group it is refused.
function readRank(raw: string, ranks: RankTarget[] | undefined): number {
  if (!ranks)
    throw new ToolError(
      'E_USAGE',
      '--rank: needs a group: -c spectune.yaml with several target.hosts, or --host once per rank',
      { hint: 'e.g. spectune diagnose -c spectune.yaml --rank 1' },
    );
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n < ranks.length))
    throw new ToolError(
      'E_USAGE',
      `--rank: expected 0..${ranks.length - 1} (the group has ${ranks.length} ranks), got "${raw}"`,
      { hint: 'e.g. --rank 1 for the first worker; leave it out for the group' },
    );
  return n;
}

// Parse flags, run the diagnosis, print it; exit 0 whenever a diagnosis was produced.
export const run: Command = async (argv, io) => {
  const { values, positionals: files } = parseFlags(
    argv,
    {
      json: { type: 'boolean' },
      state: { type: 'string' },
      actions: { type: 'string' },
      kernel: { type: 'string' },
      engine: { type: 'string' },
      unit: { type: 'string' },
      host: { type: 'string', multiple: true },
      since: { type: 'string' },
      rank: { type: 'string' },
      'ssh-config': { type: 'string' },
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      'slurm-job': { type: 'string' },
      output: { type: 'string' },
    },
    USAGE,
    true,
  );
  const positionals = files as string[];
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const hosts = values.host ?? [];
  let ranks: RankTarget[] | undefined;
  let host = hosts.length === 1 ? hosts[0] : undefined;
  if (values.config) {
    const t = await resolveTarget(
      { config: values.config, host, unit: values.unit, engine: values.engine, 'ssh-config': values['ssh-config'] },
      io.env,
    );
    Object.assign(values, { unit: t.unit, engine: t.engine, 'ssh-config': t.sshConfig });
    host = t.target;
    if (t.ranks.length > 1) ranks = t.ranks;
  }
  if (hosts.length > 1) {
    if (values.config)
      throw new ToolError('E_USAGE', '--host once per rank goes without -c (the config names the ranks)', {
        hint: 'e.g. spectune diagnose -c spectune.yaml, or --host root@gpu1 --host root@gpu2 --unit sglang-qwen',
      });
    if (!values.unit)
      throw new ToolError('E_USAGE', '--host per rank needs --unit', {
        hint: 'e.g. spectune diagnose --host root@gpu1 --host root@gpu2 --unit sglang-qwen',
      });
    ranks = hosts.map((target, rank) => ({ target, unit: values.unit!, rank }));
  }
  const pick = values.rank === undefined ? undefined : readRank(values.rank, ranks);
  if (values.engine && !(ENGINE_NAMES as string[]).includes(values.engine))
    throw new ToolError('E_USAGE', `--engine: expected one of ${ENGINE_NAMES.join(', ')}, got "${values.engine}"`);
  if (values['slurm-job'] !== undefined) {
    if (positionals.length || values.unit)
      throw new ToolError('E_USAGE', '--slurm-job reads the job from Slurm: give no log files and no --unit', {
        hint: 'e.g. spectune diagnose --slurm-job 1234 --host user@login',
      });
    const d = await runSlurmDiagnose({
      jobId: values['slurm-job'],
      host,
      sshConfig: values['ssh-config'],
      engine: values.engine as EngineName | undefined,
      output: values.output,
    });
    io.stdout.write(values.json ? `${JSON.stringify(redactValue(d), null, 2)}\n` : renderDiagnosis(d));
    return 0;
  }
  if (values.output)
    throw new ToolError('E_USAGE', '--output goes with --slurm-job', {
      hint: 'e.g. spectune diagnose --slurm-job 1234 --output /shared/spectune-%j.out',
    });
  if (host && !values.unit)
    throw new ToolError('E_USAGE', '--host needs --unit', {
      hint: 'e.g. spectune diagnose --host root@gpu1 --unit sglang-qwen.service',
    });
  const stdinUsable = io.stdin && !io.stdin.isTTY;
  if (!positionals.length && !values.unit && !stdinUsable)
    throw new ToolError('E_USAGE', 'nothing to diagnose: give log files, pipe a journal on stdin, or --unit', {
      hint: 'e.g. spectune diagnose journal.txt, or journalctl -u UNIT -o json | spectune diagnose -',
    });
  const d = await runDiagnose({
    files: positionals,
    stdin: positionals.includes('-') || (!positionals.length && !values.unit && stdinUsable) ? io.stdin : undefined,
    stateFile: values.state,
    actionsFile: values.actions,
    kernelFile: values.kernel,
    engine: values.engine as EngineName | undefined,
    unit: values.unit,
    host,
    since: values.since,
    sshConfig: values['ssh-config'],
    ranks,
    pick,
  });
  io.stdout.write(values.json ? `${JSON.stringify(redactValue(d), null, 2)}\n` : renderDiagnosis(d));
  return 0;
};
