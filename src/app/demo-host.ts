// `spectune demo` runs the real service controller against the `process` manager: this Host answers the
// controller's systemctl/journalctl/ls/rm commands from a ProcessManager, and maps /etc/systemd/system and
// /var/lib/spectune into a private root directory. No root, no systemd; the same code paths as on a real host.
import { link, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { splitExecWords } from '../engines/index.js';
import { ToolError } from '../errors.js';
import type { CommandResult, ExecOptions, Host } from '../host/types.js';
import type { ProcessManager, RestartPolicy, ServiceDef } from '../procman/index.js';
import { effectiveEnvironment, effectiveListValue, parseUnitFile, type UnitFile } from '../service/unit.js';

/** The directory systemd reads units and drop-ins from (mapped under the root). */
const UNIT_DIR = '/etc/systemd/system';

/** A Host over a process manager, rooted in `root`. */
export interface ProcmanHost extends Host {
  /** Define every unit under the root's /etc/systemd/system in the manager (daemon-reload). */
  reload(): Promise<void>;
}

// A result in the execa-like shape the controller expects.
function result(argv: string[], exitCode: number, stdout = '', stderr = ''): CommandResult {
  return {
    host: 'local (process manager)',
    argv,
    exitCode,
    signal: null,
    timedOut: false,
    durationMs: 0,
    stdout,
    stderr,
  };
}

// The last value of a plain directive across the unit and its drop-ins.
function lastValue(files: UnitFile[], key: string): string | undefined {
  let v: string | undefined;
  for (const e of files.flatMap(parseUnitFile)) if (e.section === 'Service' && e.key === key) v = e.value;
  return v;
}

// A seconds directive ("10", "1.5s"); undefined when absent or not understood.
function seconds(v: string | undefined): number | undefined {
  const m = v === undefined ? null : /^(\d+(?:\.\d+)?)s?$/.exec(v.trim());
  return m ? Number(m[1]) : undefined;
}

// Turn a unit (file + drop-ins) into the manager's service definition, as daemon-reload would.
export function toServiceDef(files: UnitFile[]): ServiceDef {
  const exec = effectiveListValue(files, 'Service', 'ExecStart');
  if (!exec) throw new ToolError('E_CONFIG_INVALID', `${files[0]?.path ?? 'unit'}: no ExecStart=`);
  const restart = lastValue(files, 'Restart');
  return {
    description: files.flatMap(parseUnitFile).find((e) => e.section === 'Unit' && e.key === 'Description')?.value,
    argv: splitExecWords(exec.value).words.map((w) => w.value),
    env: effectiveEnvironment(files),
    restart: restart === 'always' || restart === 'on-failure' ? (restart as RestartPolicy) : 'no',
    restartSec: seconds(lastValue(files, 'RestartSec')),
    timeoutStopSec: seconds(lastValue(files, 'TimeoutStopSec')),
  };
}

// The value of a "--flag=value" option in argv.
function optionValue(argv: string[], name: string): string | undefined {
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/** The root-mapped view of the unit directory and the manager behind it. */
interface ShimContext {
  pm: ProcessManager;
  real(path: string): string;
}

// The unit file and its drop-ins, as `systemctl cat` lists them.
async function readUnitFiles(c: ShimContext, unit: string): Promise<UnitFile[]> {
  const files: UnitFile[] = [
    { path: `${UNIT_DIR}/${unit}`, text: await readFile(c.real(`${UNIT_DIR}/${unit}`), 'utf8') },
  ];
  const dir = `${UNIT_DIR}/${unit}.d`;
  const names = (await readdir(c.real(dir)).catch(() => [] as string[])).filter((n) => n.endsWith('.conf')).sort();
  for (const n of names) files.push({ path: `${dir}/${n}`, text: await readFile(c.real(`${dir}/${n}`), 'utf8') });
  return files;
}

// daemon-reload: (re)define every unit of the directory in the manager.
async function reloadUnits(c: ShimContext): Promise<void> {
  for (const n of (await readdir(c.real(UNIT_DIR)).catch(() => [] as string[])).filter((x) => x.endsWith('.service'))) {
    c.pm.define(n, toServiceDef(await readUnitFiles(c, n)));
  }
}

// The systemctl verbs the service controller uses.
async function runSystemctl(c: ShimContext, argv: string[]): Promise<CommandResult> {
  const [, verb] = argv;
  const unit = argv.filter((a, i) => i >= 2 && !a.startsWith('-')).find((a) => a.endsWith('.service')) ?? '';
  if (verb === 'daemon-reload') {
    await reloadUnits(c);
    return result(argv, 0);
  }
  if (verb === 'show') return result(argv, 0, c.pm.showText(unit, argv[argv.indexOf('-p') + 1]?.split(',')));
  if (verb === 'cat') {
    const files = await readUnitFiles(c, unit).catch(() => null);
    if (!files) return result(argv, 1, '', `No files found for ${unit}.\n`);
    return result(argv, 0, files.map((f) => `# ${f.path}\n${f.text}`).join('\n'));
  }
  if (verb === 'reset-failed') {
    c.pm.resetFailed(unit);
    return result(argv, 0);
  }
  if (verb === 'start' || verb === 'stop' || verb === 'restart') {
    await c.pm[verb](unit);
    return result(argv, 0);
  }
  return result(argv, 1, '', `unsupported: systemctl ${verb}\n`);
}

// journalctl -u UNIT -o json [-n N | --after-cursor=C]; the kernel log is not readable here.
function runJournalctl(c: ShimContext, argv: string[]): CommandResult {
  if (argv.includes('-k')) return result(argv, 1, '', 'no kernel log under the process manager\n');
  const unit = argv[argv.indexOf('-u') + 1];
  const page = c.pm.journal(unit, { afterCursor: optionValue(argv, '--after-cursor') ?? null });
  const n = argv.includes('-n') ? Number(argv[argv.indexOf('-n') + 1]) : Infinity;
  const entries = Number.isFinite(n) ? page.entries.slice(-n) : page.entries;
  return result(argv, 0, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
}

// ls and rm on the mapped state directories.
async function runFileCommand(c: ShimContext, argv: string[]): Promise<CommandResult> {
  const path = c.real(argv[argv.length - 1]);
  if (argv[0] === 'rm') {
    await rm(path, { force: true });
    return result(argv, 0);
  }
  return readdir(path).then(
    (n) => result(argv, 0, n.map((x) => `${x}\n`).join('')),
    () => result(argv, 2, '', 'No such file or directory\n'),
  );
}

// `ln -T -- A B` and `mv -T -- A B` on the mapped state directory (the host lock: atomic create, break aside).
async function runLinkOrMove(c: ShimContext, argv: string[]): Promise<CommandResult> {
  const [from, to] = argv.slice(-2).map((p) => c.real(p));
  try {
    if (argv[0] === 'ln') await link(from, to);
    else await rename(from, to);
    return result(argv, 0);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return result(
      argv,
      1,
      '',
      `${argv[0]}: ${code === 'EEXIST' ? 'File exists' : code === 'ENOENT' ? 'No such file or directory' : (e as Error).message}\n`,
    );
  }
}

// Create the Host; `root` holds etc/systemd/system and var/lib/spectune.
export function createProcmanHost(pm: ProcessManager, root: string): ProcmanHost {
  const c: ShimContext = { pm, real: (p) => join(root, p) };
  return {
    name: 'local',
    reload: () => reloadUnits(c),
    whereIs: (p) => c.real(p),
    async exec(argv: string[], _opts?: ExecOptions) {
      if (argv[0] === 'systemctl') return runSystemctl(c, argv);
      if (argv[0] === 'journalctl') return runJournalctl(c, argv);
      if (argv[0] === 'ls' || argv[0] === 'rm') return runFileCommand(c, argv);
      if (argv[0] === 'ln' || argv[0] === 'mv') return runLinkOrMove(c, argv);
      if (argv[0] === 'date') return result(argv, 0, `${Math.floor(Date.now() / 1000)}\n`);
      return result(argv, 127, '', `${argv[0]}: not available under the process manager\n`);
    },
    async readFile(path: string) {
      try {
        return await readFile(c.real(path), 'utf8');
      } catch {
        throw new ToolError('E_FILE_NOT_FOUND', `${path}: no such file`);
      }
    },
    async writeFile(path: string, content: string) {
      await mkdir(dirname(c.real(path)), { recursive: true });
      const tmp = `${c.real(path)}.tmp-${process.pid}`;
      await writeFile(tmp, content);
      await rename(tmp, c.real(path));
    },
    async close() {},
  };
}
