// The Slurm test cluster itself (scripts/testhost/slurm-up.sh): real slurmctld, slurmdbd + MariaDB and three
// slurmd nodes. What the slurm target and its diagnosis rules rely on: idle nodes, jobs on every node that can run
// node, the project and llama-server and serve HTTP to this machine, and sacct/scontrol/job output for each end.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/host/ssh.js';
import { loadSlurmCluster, type SlurmCluster } from './helpers/slurmcluster.js';

const run = promisify(execFile);
const JOBS_SCRIPT = join(import.meta.dirname, '../../scripts/testhost/slurm-jobs.sh');
const LLAMA_SERVER = join(process.env.SPECTUNE_LLAMA_DIR || '/var/lib/spectune-llama', 'bin/llama-server');
let cluster: SlurmCluster;
let login: SshHost;
let out: string;

beforeAll(() => {
  cluster = loadSlurmCluster();
  login = new SshHost(cluster.login, { sshConfig: cluster.sshConfig });
  out = mkdtempSync(join(tmpdir(), 'spectune-slurm-jobs-'));
});
afterAll(async () => {
  await login?.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

// Run a command on the login host; fail with its stderr when it fails.
async function onLogin(argv: string[]): Promise<string> {
  const r = await login.exec(argv);
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} on ${cluster.login}: exit ${r.exitCode}: ${r.stderr}`);
  return r.stdout;
}

// sacct --parsable2 as rows keyed by the header; the first row is the job allocation.
function sacctRows(text: string): Record<string, string>[] {
  const [header, ...rows] = text
    .trim()
    .split('\n')
    .map((l) => l.split('|'));
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}

// What slurm-jobs.sh kept for a case: output file, sacct rows, scontrol show job.
function record(c: string): { out: string; sacct: Record<string, string>[]; scontrol: string } {
  const dir = join(out, c);
  return {
    out: readFileSync(join(dir, 'job.out'), 'utf8'),
    sacct: sacctRows(readFileSync(join(dir, 'sacct.txt'), 'utf8')),
    scontrol: readFileSync(join(dir, 'scontrol.txt'), 'utf8'),
  };
}

const CANCELLED_LINE =
  /^slurmstepd(-\S+)?: error: \*\*\* JOB (\d+) ON (\S+) CANCELLED AT \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d \*\*\*$/m;
const TIME_LIMIT_LINE = /^slurmstepd(-\S+)?: error: \*\*\* JOB \d+ ON \S+ CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*$/m;

describe('Slurm test cluster', () => {
  it('sinfo shows every node idle in the partition, and the cluster is registered in slurmdbd', async () => {
    const names = cluster.nodes.map((n) => n.name);
    expect(names).toHaveLength(3);
    // a job another test just ended may still be completing: give the nodes up to 30 s to be idle again
    let sinfo = '';
    for (let i = 0; i < 60; i++) {
      sinfo = await onLogin(['sinfo', '-h', '-N', '-o', '%N %P %T %c %m']);
      if (names.every((n) => sinfo.includes(`${n} ${cluster.partition}* idle `))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const n of names)
      expect(sinfo).toContain(`${n} ${cluster.partition}* idle ${cluster.nodeCpus} ${cluster.nodeMemMb}`);
    expect((await onLogin(['sacctmgr', '-n', '-P', 'list', 'cluster', 'format=cluster'])).trim()).toBe(cluster.cluster);
    expect(await onLogin(['scontrol', 'show', 'config'])).toMatch(
      new RegExp(`^KillWait\\s+= ${cluster.killWait} sec$`, 'm'),
    );
  });

  it('a job runs on each node and finds node, the project and llama-server there', async () => {
    for (const n of cluster.nodes) {
      const o = await onLogin([
        'srun',
        '-w',
        n.name,
        '-N1',
        '--mem=256M',
        '-t',
        '2',
        'sh',
        '-c',
        'hostname; node -p "require(\'/opt/spectune/package.json\').name"; test ! -x /opt/llama/bin/llama-server || /opt/llama/bin/llama-server --version 2>&1',
      ]);
      const lines = o.trim().split('\n');
      expect(lines.slice(0, 2)).toEqual([n.name, 'spectune']);
      // test-all.sh builds llama-server before booting the hosts; then every node runs it
      if (existsSync(LLAMA_SERVER)) expect(lines.slice(2).join('\n')).toMatch(/^version: \d+/m);
    }
  });

  it("a job's server on its node answers HTTP from this machine, and the node reaches this machine", async () => {
    const node = cluster.nodes[1];
    const port = 18000 + (process.pid % 1000);
    const script = `#!/bin/bash\nexec node -e 'require("http").createServer((q, s) => s.end("job " + process.env.SLURM_JOB_ID + " on " + require("os").hostname())).listen(${port}, "0.0.0.0")'\n`;
    const id = (
      await login.exec(
        ['sbatch', '--parsable', '-w', node.name, '--mem=64M', '-t', '2', '-J', 'spectune-http', '-o', '/dev/null'],
        { input: script },
      )
    ).stdout.trim();
    expect(id).toMatch(/^\d+$/);
    try {
      let body = '';
      for (let i = 0; i < 100 && !body; i++) {
        body = await fetch(`http://${node.ip}:${port}/`).then(
          (r) => r.text(),
          () => '',
        );
        if (!body) await new Promise((r) => setTimeout(r, 200));
      }
      expect(body).toBe(`job ${id} on ${node.name}`);
      const here: Server = createServer((_q, res) => res.end('from-this-machine'));
      await new Promise<void>((r) => here.listen(0, cluster.hostIp, r));
      try {
        const herePort = (here.address() as AddressInfo).port;
        const back = await onLogin([
          'srun',
          '-w',
          node.name,
          '--mem=32M',
          '-t',
          '1',
          'curl',
          '-sS',
          '--max-time',
          '5',
          `http://${cluster.hostIp}:${herePort}/`,
        ]);
        expect(back).toBe('from-this-machine');
      } finally {
        here.close();
      }
    } finally {
      await login.exec(['scancel', id]);
    }
  });

  it('the simulated engine runs as a job, and this machine reaches it on its node', async () => {
    const node = cluster.nodes[2];
    const port = 19000 + (process.pid % 1000);
    const script = `#!/bin/bash\nexec node /opt/spectune/bin/spectune.js sim --host 0.0.0.0 --port ${port} --sim-time-scale 0.01\n`;
    const id = (
      await login.exec(
        [
          'sbatch',
          '--parsable',
          '-w',
          node.name,
          '--mem=512M',
          '-t',
          '2',
          '-J',
          'spectune-sim',
          '-o',
          `${cluster.shared}/spectune-sim-%j.out`,
        ],
        { input: script },
      )
    ).stdout.trim();
    expect(id).toMatch(/^\d+$/);
    try {
      let status = 0;
      for (let i = 0; i < 150 && status !== 200; i++) {
        status = await fetch(`http://${node.ip}:${port}/health`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(200);
      expect(await onLogin(['squeue', '-h', '-j', id, '-o', '%T %N'])).toBe(`RUNNING ${node.name}\n`);
      const info = await fetch(`http://${node.ip}:${port}/get_server_info`).then(
        (r) => r.json() as Promise<Record<string, unknown>>,
      );
      expect(info.port).toBe(port);
    } finally {
      await login.exec(['scancel', id]);
      rmSync(join(cluster.sharedLocal, `spectune-sim-${id}.out`), { force: true });
    }
  });

  // One retry: CI saw this once read a job record named 'allocation' for the completed case's id (the job ran and
  // ended COMPLETED 0:0); the cause is not pinned down and it did not recur in later runs. A second run submits fresh jobs.
  it('sacct, scontrol and the job output tell each way a job ends (slurm-jobs.sh)', { retry: 1 }, async () => {
    await run('bash', [JOBS_SCRIPT, out], { env: process.env, timeout: 240_000 });

    const done = record('completed');
    expect(done.sacct[0]).toMatchObject({ JobName: 'spectune-completed', State: 'COMPLETED', ExitCode: '0:0' });
    expect(done.out).toMatch(/^hello from \S+\nspectune\n$/);

    const oom = record('oom');
    if (cluster.memEnforce === 'cgroup') {
      expect(oom.sacct[0]).toMatchObject({ State: 'OUT_OF_MEMORY', ExitCode: '0:125' });
      expect(oom.out).toMatch(
        /^slurmstepd(-\S+)?: error: Detected 1 oom-kill event\(s\) in StepId=\d+\.batch\. Some of your processes may have been killed by the cgroup out-of-memory handler\.$/m,
      );
    } else {
      expect(oom.sacct[0]).toMatchObject({ State: 'FAILED', ExitCode: '0:9' });
      expect(oom.scontrol).toMatch(/JobState=FAILED Reason=JobLaunchFailure/);
      expect(oom.out).toMatch(/StepId=\d+\.batch exceeded memory limit \(\d+ > 104857600\), being killed/);
    }
    expect(oom.out).not.toContain('still alive');

    const cancel = record('cancel');
    expect(cancel.sacct[0].State).toMatch(/^CANCELLED by \d+$/);
    expect(cancel.scontrol).toMatch(/JobState=CANCELLED /);
    expect(cancel.scontrol).toMatch(/ExitCode=0:15\b/); // died of the SIGTERM
    expect(cancel.out).toMatch(CANCELLED_LINE);
    expect(cancel.out).toContain('SIGTERM: exiting');

    const drain = record('cancel-drain');
    expect(drain.sacct[0].State).toMatch(/^CANCELLED by \d+$/);
    expect(drain.scontrol).toMatch(/ExitCode=0:9\b/); // SIGKILL after KillWait: the stop timeout, Slurm form
    expect(drain.sacct.find((r) => r.JobID.endsWith('.batch'))).toMatchObject({ State: 'CANCELLED', ExitCode: '0:9' });
    expect(drain.out).toMatch(CANCELLED_LINE);
    expect(drain.out).toContain('SIGTERM: draining 16 requests');

    const timeout = record('timeout');
    expect(timeout.sacct[0]).toMatchObject({ State: 'TIMEOUT', Timelimit: '00:01:00' });
    expect(timeout.scontrol).toMatch(/JobState=TIMEOUT Reason=TimeLimit/);
    expect(timeout.out).toMatch(TIME_LIMIT_LINE);

    const two = record('two-node');
    expect(two.sacct[0]).toMatchObject({ State: 'COMPLETED', ExitCode: '0:0' });
    const hosts = two.out.trim().split('\n');
    expect(hosts).toHaveLength(2);
    expect(new Set(hosts).size).toBe(2);
    expect(two.scontrol).toMatch(/NumNodes=2 /);
  });
});
