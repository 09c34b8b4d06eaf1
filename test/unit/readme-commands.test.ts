// README vs reality: every `spectune ...` command the README shows parses (its flags exist), and every one that
// needs no service host runs for real here — diagnose on the seed's files, bench against the real simulator, the
// demo, and report on the demo's store. The host commands run in test/e2e/readme-commands.test.ts.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, ROOT, runCli } from './cli-run.js';
import { judgeRun, needsHost, PENDING_VERBS, readReadmeCommands, type ReadmeCommand } from './readme-commands.js';
import { spawnSim, type SimProc } from './sim-helpers.js';

const KNOWN = ['demo', 'diagnose', 'bench', 'tune', 'report', 'status', 'apply', 'rollback', 'logs', 'sim'];
const COMMANDS = readReadmeCommands();
const FIXTURE = join(ROOT, 'test/fixtures/journal/sglang/seed1-stop-timeout');
/** The README's file names mapped onto the seed-1 fixture. */
const FILES: Record<string, string> = {
  'journal.txt': 'journal.txt',
  'journal.json': 'journal.jsonl',
  'state.txt': 'state.txt',
  'show.txt': 'state.txt',
  'actions.jsonl': 'actions.jsonl',
};

const label = (c: ReadmeCommand): string => `spectune ${c.argv.join(' ')}`;

beforeAll(() => ensureCliBuilt(), 180_000);

describe('README commands', () => {
  it('are found, and each verb is a spectune command (init/doctor: once merged)', () => {
    const verbs = new Set(COMMANDS.map((c) => c.argv[0]));
    for (const v of ['demo', 'diagnose', 'bench', 'tune', 'report', 'status', 'apply', 'rollback', 'logs'])
      expect(verbs).toContain(v);
    for (const v of verbs) expect(KNOWN.includes(v) || PENDING_VERBS.has(v), `README verb ${v}`).toBe(true);
  });

  it.each(COMMANDS.filter((c) => KNOWN.includes(c.argv[0]) && c.argv[0] !== 'sim').map((c) => [label(c), c] as const))(
    '%s: every flag exists',
    async (_l, c) => {
      // parseFlags checks every flag before --help is looked at: exit 0 means the command line parses.
      const r = await runCli([...c.argv, '--help']);
      expect(r.stderr, r.stderr).toBe('');
      expect(r.code).toBe(0);
    },
  );
});

describe('README commands that need no service host, run for real', () => {
  let work: string;
  let sim: SimProc | null = null;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'spectune-readme-'));
    for (const [name, src] of Object.entries(FILES)) copyFileSync(join(FIXTURE, src), join(work, name));
  });
  afterAll(() => {
    sim?.stop();
  });

  const local = COMMANDS.filter((c) => !needsHost(c) && KNOWN.includes(c.argv[0]));

  it.each(local.filter((c) => c.argv[0] === 'diagnose').map((c) => [label(c), c] as const))('%s', async (_l, c) => {
    // `journalctl -u X -o json |` becomes the seed's journal on stdin.
    const r = c.pipedFrom
      ? await runCli(c.argv, { cwd: work, stdinText: readFileSync(join(FIXTURE, 'journal.jsonl'), 'utf8') })
      : await runCli(c.argv, { cwd: work });
    expect(judgeRun(r), r.stderr).toBeNull();
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/stop_timeout/);
  });

  it.each(local.filter((c) => c.argv[0] === 'bench').map((c) => [label(c), c] as const))(
    '%s (against spectune sim; sizes shrunk)',
    async (_l, c) => {
      sim = spawnSim(['--port', '0', '--sim-time-scale', '0.001', '--sim-profile', 'qwen3-8b-1gpu']);
      const url = `http://127.0.0.1:${await sim.port()}`;
      const argv = c.argv.map((a) => a.replace(/^http:\/\/gpu1:30000$/, url));
      // The README's sizes (64 requests of 256 tokens at each level) take minutes on a simulated model; 4 x 16 keep every flag.
      const shrunk = argv.map((a, i) =>
        argv[i - 1] === '--requests' ? '4' : argv[i - 1] === '--output-tokens' ? '16' : a,
      );
      const r = await runCli(shrunk, { timeoutMs: 120_000 });
      expect(judgeRun(r), r.stderr).toBeNull();
      const doc = JSON.parse(r.stdout) as { runs: { concurrency: number }[]; skipped: { concurrency: number }[] };
      expect([...doc.runs, ...doc.skipped].map((x) => x.concurrency)).toEqual([1, 16, 64]);
    },
    180_000,
  );

  it("npx spectune demo, then the README's report commands on its store", async () => {
    const demo = local.find((c) => c.argv[0] === 'demo');
    expect(demo?.argv).toEqual(['demo']);
    const r = await runCli(demo!.argv, { cwd: work, timeoutMs: 400_000 });
    expect(judgeRun(r), r.stderr.slice(-2000)).toBeNull();
    expect(r.code).toBe(0);
    const md = /report:\s+(\S+spectune-demo\.md)/.exec(r.stdout)?.[1];
    expect(md, r.stdout).toBeTruthy();
    copyFileSync(join(dirname(md!), 'spectune-demo.db'), join(work, 'spectune.db'));
    for (const c of local.filter((x) => x.argv[0] === 'report')) {
      const rep = await runCli(c.argv, { cwd: work });
      expect(judgeRun(rep), `${label(c)}: ${rep.stderr}`).toBeNull();
      expect(rep.code).toBe(0);
      if (c.argv.includes('--json'))
        expect((JSON.parse(rep.stdout) as { simulated?: boolean; best: unknown }).best).toBeTruthy();
    }
    expect(readFileSync(join(work, 'report.html'), 'utf8')).toMatch(/^<!doctype html>/);
  }, 420_000);
});

describe('the npm package', () => {
  it('holds the files the README, --help and error hints point to', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = new Set((JSON.parse(out) as { files: { path: string }[] }[])[0].files.map((f) => f.path));
    for (const f of [
      'README.md',
      'docs/sim.md',
      'examples/spectune.yaml',
      'examples/demo.yaml',
      'schema/spectune.schema.json',
      'bench/accuracy.md',
      'bench/search-vs-grid.md',
      'native/stream-reader.c',
    ]) {
      expect(files, f).toContain(f);
    }
    // Every relative link of the README that is not a test or a source file ships too.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const [, link] of readme.matchAll(/\]\(([^)#:]+)\)/g)) {
      if (!/^(test|src)\//.test(link)) expect(files, `README link ${link}`).toContain(link);
    }
  });
});
