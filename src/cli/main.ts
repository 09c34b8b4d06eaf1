import { ToolError } from '../errors.js';
import { nearestName } from './args.js';
import { reportError, EXIT } from './exit.js';
import type { CliIo, Command } from './io.js';

// Commands load lazily so that `spectune sim` does not pay for SQLite and friends.
const COMMANDS: Record<string, { summary: string }> = {
  init: { summary: 'find the engine unit on a host and write a commented spectune.yaml for it' },
  doctor: {
    summary: 'preflight checks (SSH, rights, health, TimeoutStopSec, start-up, disk, clocks), each with the fix',
  },
  demo: { summary: 'run a full tuning campaign on the built-in simulated engine (no GPU, no root)' },
  diagnose: { summary: 'explain why an inference service died, with evidence' },
  bench: { summary: 'streaming benchmark of an OpenAI-compatible endpoint' },
  tune: { summary: 'find the best stable config and leave the service on it' },
  report: { summary: 'Markdown/HTML report of a campaign' },
  status: { summary: 'unit state, engine settings in force, health' },
  apply: { summary: 'deploy one config through a systemd drop-in, restart safely, wait for readiness' },
  rollback: { summary: 'return to the last known-good config and verify it' },
  fold: { summary: "write the config in force into the unit file and remove spectune's drop-in (no restart)" },
  history: { summary: 'the kept drop-in versions of the unit and the `rollback --to N` line of each' },
  logs: { summary: 'journal of the current or a past trial' },
  sim: { summary: 'simulated SGLang-compatible engine (SIMULATOR, for demos and tests)' },
};

// Print the top-level help.
function renderHelp(): string {
  const rows = Object.entries(COMMANDS).map(([k, v]) => `  ${k.padEnd(10)} ${v.summary}`);
  return [
    'usage: spectune <command> [flags]',
    '',
    'commands:',
    ...rows,
    '',
    'Run `spectune <command> --help` for its flags and their defaults.',
    '',
    'examples:',
    '  spectune demo',
    '  spectune bench --url http://127.0.0.1:30000 --concurrency 1,16',
    '  spectune tune -c spectune.yaml --dry-run',
    '',
  ].join('\n');
}

// Entry point of the CLI: everything comes in through arguments, the exit code goes out.
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(renderHelp());
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === '--version') {
    io.stdout.write('spectune 0.1.0\n');
    return EXIT.ok;
  }
  const entry = COMMANDS[name];
  try {
    if (!entry) {
      const near = nearestName(name, Object.keys(COMMANDS));
      throw new ToolError('E_USAGE', `unknown command "${name}"${near ? `; did you mean ${near}?` : ''}`, {
        hint: `one of: ${Object.keys(COMMANDS).join(', ')}`,
      });
    }
    const mod = (await import(`./commands/${name}.js`)) as { run: Command };
    return await mod.run(rest, io);
  } catch (e) {
    return reportError(e, io);
  }
}
