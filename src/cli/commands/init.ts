// `spectune init --host H`: find the engine unit on a host and write a commented spectune.yaml for it.
import { runInit } from '../../app/init.js';
import type { EngineName } from '../../engines/types.js';
import { formatUnits } from '../../onboard/index.js';
import { redactText, redactValue } from '../../redact.js';
import { parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';

const USAGE = `usage: spectune init [--host user@host] [--unit NAME] [--out FILE] [--force] [--dry-run] [--json]
  Finds the running systemd units (and docker containers) that start SGLang, vLLM or llama-server, reads the
  chosen unit's engine, model, port, speculative settings and start-up time, and writes a commented spectune.yaml.
  Reads the host only; never changes it.
  --host user@host   the GPU host (default: this machine); --ssh-config FILE, --sudo as for every command.
                     A unit of a multi-node group (SGLang/vLLM --nnodes N --node-rank R): give --host once per rank
                     (any order); the other ranks are also looked for at the unit's --dist-init-addr/--master-addr.
                     Every rank is written under target.hosts (role rank0, rank1); a rank not found writes nothing
  --unit NAME        which engine unit, when several run (they are listed)
  --engine E         the engine, when ExecStart runs it through a variable binary
  --out FILE         where to write (default: spectune.yaml); an existing file is kept unless --force
  --dry-run, --stdout  print the proposal, write nothing
  --json             what was found and proposed, as JSON (writes the file unless --dry-run)
example:
  spectune init --host root@gpu1 && spectune doctor
  spectune init --host root@spark1 --host root@spark2      (a two-node SGLang model: rank 0 and rank 1)`;
const FLAGS = {
  host: { type: 'string', multiple: true },
  'ssh-config': { type: 'string' },
  sudo: { type: 'boolean' },
  unit: { type: 'string' },
  engine: { type: 'string' },
  out: { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  stdout: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Entry point of `spectune init`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const dryRun = values['dry-run'] === true || values.stdout === true;
  const r = await runInit({
    host: values.host?.[0],
    moreHosts: values.host?.slice(1),
    sshConfig: values['ssh-config'],
    sudo: values.sudo === true,
    unit: values.unit,
    engine: values.engine as EngineName | undefined,
    out: dryRun ? null : (values.out ?? 'spectune.yaml'),
    force: values.force === true,
  });
  for (const n of r.notes) io.stderr.write(`spectune: note: ${redactText(n)}\n`);
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify(redactValue({ found: r.found, chosen: r.facts.unit.unit, ranks: r.facts.group ?? null, startup: r.facts.startup, timeoutStopSec: r.facts.timeoutStopMs === null ? null : r.facts.timeoutStopMs / 1000, space: r.space, written: r.written, yaml: r.yaml }), null, 2)}\n`,
    );
    return EXIT.ok;
  }
  io.stderr.write(
    `spectune: engine units on ${values.host?.[0] ?? 'this machine'}:\n${redactText(formatUnits(r.found))}\n`,
  );
  if (r.written === null) {
    io.stdout.write(redactText(r.yaml));
    return EXIT.ok;
  }
  const st = r.facts.startup?.last ? `, start-up ${r.facts.startup.last.seconds} s` : '';
  const ranks = r.facts.group
    ? ` on ${r.facts.group.length} ranks (${r.facts.group.map((g) => `rank${g.rank} ${g.host ?? 'this machine'}`).join(', ')})`
    : '';
  io.stdout.write(
    `wrote ${r.written} for ${r.facts.unit.unit}${ranks} (${r.facts.unit.engine}, tuning ${r.space.join(', ')}${st}); next: spectune doctor -c ${r.written}\n`,
  );
  return EXIT.ok;
};
