// loadTestHosts() and loadSlurmCluster() must fail with an actionable message when the hosts are not (or no longer) up.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSlurmCluster } from './helpers/slurmcluster.js';
import { loadTestHosts } from './helpers/testhosts.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-testhosts-'));
const env = { SPECTUNE_TESTHOSTS_ENV: join(dir, 'hosts.env') };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadTestHosts', () => {
  it('tells the developer how to boot the hosts when hosts.json is missing', () => {
    expect(() => loadTestHosts(env)).toThrow(/not up .*scripts\/testhost\/up-all\.sh.*scripts\/test-all\.sh/);
  });

  it('refuses a stale hosts.json whose launcher is gone (e.g. after a reboot)', () => {
    const stale = {
      name: 'th1',
      ip: '10.250.77.2',
      hostIp: '10.250.77.1',
      sshConfig: '/x',
      memcg: false,
      unusedIp: '10.250.77.3',
      pid: 2 ** 22 + 1,
    };
    writeFileSync(join(dir, 'hosts.json'), JSON.stringify({ hosts: [stale] }));
    expect(() => loadTestHosts(env)).toThrow(/th1 are not running \(stale/);
  });

  it('returns the hosts when their launchers run', () => {
    const live = {
      name: 'th9',
      ip: '10.250.85.2',
      hostIp: '10.250.85.1',
      sshConfig: '/x',
      memcg: true,
      unusedIp: '10.250.85.3',
      pid: process.pid,
    };
    writeFileSync(join(dir, 'hosts.json'), JSON.stringify({ hosts: [live] }));
    expect(loadTestHosts(env)).toEqual([live]);
  });
});

describe('loadSlurmCluster', () => {
  const slurmEnv = { SPECTUNE_SLURM_ENV: join(dir, 'slurm.env') };
  const cluster = (pid: number) => ({
    login: 'sl1',
    sshConfig: '/x',
    partition: 'cpu',
    killWait: 5,
    nodes: [{ name: 'sl1', ip: '10.250.90.11', pid }],
  });

  it('tells the developer how to boot the cluster when slurm.json is missing', () => {
    expect(() => loadSlurmCluster(slurmEnv)).toThrow(
      /Slurm test cluster is not up .*scripts\/testhost\/slurm-up\.sh.*scripts\/test-all\.sh/,
    );
  });

  it('refuses a stale slurm.json whose node launcher is gone', () => {
    writeFileSync(join(dir, 'slurm.json'), JSON.stringify(cluster(2 ** 22 + 1)));
    expect(() => loadSlurmCluster(slurmEnv)).toThrow(/nodes sl1 are not running \(stale/);
  });

  it('returns the cluster when its node launchers run', () => {
    writeFileSync(join(dir, 'slurm.json'), JSON.stringify(cluster(process.pid)));
    expect(loadSlurmCluster(slurmEnv)).toMatchObject({
      login: 'sl1',
      killWait: 5,
      nodes: [{ name: 'sl1', pid: process.pid }],
    });
  });
});
