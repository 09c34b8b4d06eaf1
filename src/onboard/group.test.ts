// The pure group parts of init, doctor and the host-changing commands: which multi-node form a launch line uses
// (SGLang, vLLM, llama.cpp), assembling the ranks init found, doctor's judgement and the coverage of a command.
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { describeCommand, proposeConfig } from './index.js';
import { assembleGroup, initAddrHost, judgeCoverage, judgeGroup, readNodeGroup, type FoundRank } from './group.js';

// SGLang's documented two-node launch lines (docs.sglang.io, "Multi-Node Deployment", Llama 3.1 405B on two nodes).
const SGLANG_RANK = (rank: number) =>
  `python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-405B-Instruct --tp 16 --dist-init-addr 172.16.4.52:20000 --nnodes 2 --node-rank ${rank}`;

// A rank as init would find it on a host.
function found(host: string, exec: string, unit = 'sglang.service'): FoundRank {
  const u = describeCommand(unit, 'systemd', exec, {})!;
  return {
    host,
    unit,
    group: {
      form: 'ranks',
      count: u.nodes!.count,
      rank: u.nodes!.rank,
      initAddr: u.nodes!.initAddr ?? null,
      flags: u.nodes!.flags!,
    },
  };
}

describe('reading a multi-node launch line', () => {
  it('reads SGLang --nnodes/--node-rank/--dist-init-addr into the unit (rank 1 of 2, rank0 at the init address)', () => {
    const u = describeCommand('sglang.service', 'systemd', SGLANG_RANK(1), {})!;
    expect(u.nodes).toEqual({
      count: 2,
      rank: 1,
      initAddr: '172.16.4.52:20000',
      flags: '--nnodes 2 --node-rank 1 --dist-init-addr 172.16.4.52:20000',
    });
    expect(initAddrHost(u.nodes!.initAddr!)).toBe('172.16.4.52');
    expect(initAddrHost('[fd00::1]:20000')).toBe('fd00::1');
    expect(
      describeCommand('one.service', 'systemd', 'python3 -m sglang.launch_server --model-path m --tp 8', {})!.nodes,
    ).toBeNull();
  });

  it('reads the rank through Environment= and the --flag=value form; --nnodes 1 is one node', () => {
    expect(
      readNodeGroup('sglang', ['python3', '-m', 'sglang.launch_server', '--nnodes=2', '--node-rank', '${RANK}'], {
        RANK: '1',
      }),
    ).toMatchObject({ form: 'ranks', count: 2, rank: 1, initAddr: null });
    expect(readNodeGroup('sglang', ['sglang', 'serve', '--nnodes', '1', '--node-rank', '0'])).toBeNull();
  });

  it("reads vLLM's multiprocessing form (--nnodes/--node-rank/--master-addr/--master-port) and its Ray form", () => {
    expect(
      readNodeGroup('vllm', [
        'vllm',
        'serve',
        'm',
        '--tensor-parallel-size',
        '8',
        '--nnodes',
        '2',
        '--node-rank',
        '1',
        '--master-addr',
        '10.0.0.5',
        '--master-port',
        '29501',
        '--headless',
      ]),
    ).toEqual({
      form: 'ranks',
      count: 2,
      rank: 1,
      initAddr: '10.0.0.5:29501',
      flags: '--nnodes 2 --node-rank 1 --master-addr 10.0.0.5',
    });
    const ray = readNodeGroup('vllm', [
      'vllm',
      'serve',
      'm',
      '--tensor-parallel-size',
      '8',
      '--pipeline_parallel_size',
      '2',
    ]);
    expect(ray).toMatchObject({ form: 'head' });
    expect(ray && 'note' in ray ? ray.note : '').toContain('ray start');
    expect(readNodeGroup('vllm', ['vllm', 'serve', 'm', '--tensor-parallel-size', '2'])).toBeNull();
  });

  it("reads llama.cpp's --rpc workers as peers that take no engine flags", () => {
    const g = readNodeGroup('llamacpp', [
      'llama-server',
      '-m',
      'model.gguf',
      '--rpc',
      '192.168.1.2:50052,192.168.1.3:50052',
      '-ngl',
      '99',
    ]);
    expect(g).toMatchObject({ form: 'head', peers: ['192.168.1.2:50052', '192.168.1.3:50052'] });
    const u = describeCommand('llama.service', 'systemd', 'llama-server -m /m.gguf --rpc 192.168.1.2:50052', {})!;
    expect(u.nodes).toBeNull();
    expect(u.headNote).toContain('rpc-server on 192.168.1.2:50052');
  });
});

describe('assembling the group init found', () => {
  it('orders the ranks found on the hosts given (any order) and counts one rank each', () => {
    const g = assembleGroup(found('root@th2', SGLANG_RANK(1)), [
      found('root@th1', SGLANG_RANK(0)),
      found('root@th3', SGLANG_RANK(1)),
    ]);
    expect(g.status).toBe('complete');
    expect(g.ranks.map((r) => [r.group.rank, r.host])).toEqual([
      [0, 'root@th1'],
      [1, 'root@th2'],
    ]);
  });

  it('says in one line which rank is missing and to pass --host per rank', () => {
    const g = assembleGroup(found('root@th1', SGLANG_RANK(0)), []);
    expect(g.status).toBe('incomplete');
    if (g.status !== 'incomplete') return;
    expect(g.message).toBe(
      'root@th1 sglang.service is rank 0 of 2 nodes (--nnodes 2 --node-rank 0 --dist-init-addr 172.16.4.52:20000): rank 1 not found on the hosts given or at the init address 172.16.4.52',
    );
    expect(g.message).not.toContain('\n');
    expect(g.hint).toBe('pass --host once per rank, e.g. spectune init --host root@th1 --host HOST_OF_RANK1');
  });

  it('refuses a group larger than spectune.yaml holds (two ranks)', () => {
    const g = assembleGroup(found('h', SGLANG_RANK(0).replace('--nnodes 2', '--nnodes 4')), []);
    expect(g).toMatchObject({ status: 'incomplete' });
    expect(g.status === 'incomplete' && g.message).toContain('2 ranks at most');
  });

  it('writes every rank under target.hosts with its role, the endpoint on rank0', () => {
    const u = describeCommand('sglang.service', 'systemd', `${SGLANG_RANK(0)} --port 30000`, {})!;
    const group = [
      { host: 'root@th1', unit: 'sglang.service', rank: 0 },
      { host: 'root@th2', unit: 'sglang.service', rank: 1 },
    ];
    const { yaml } = proposeConfig({
      host: 'root@th1',
      endpointHost: '10.0.0.2',
      unit: u,
      startup: null,
      timeoutStopMs: 90_000,
      others: [],
      generatedAt: 'T',
      group,
    });
    const doc = parseYaml(yaml) as { target: { hosts: unknown[]; endpoint: string } };
    expect(doc.target.hosts).toEqual([
      { host: 'root@th1', unit: 'sglang.service', role: 'rank0' },
      { host: 'root@th2', unit: 'sglang.service', role: 'rank1' },
    ]);
    expect(doc.target.endpoint).toBe('http://10.0.0.2:30000');
    expect(yaml).toContain(
      '# Multi-node group (--nnodes 2 --node-rank 0 --dist-init-addr 172.16.4.52:20000): rank0 root@th1 sglang.service, rank1 root@th2 sglang.service',
    );
  });
});

describe('doctor and the host-changing commands on a group', () => {
  const nodes = (rank: number) => ({ count: 2, rank, flags: `--nnodes 2 --node-rank ${rank}` });

  it('FAILs a multi-node unit whose group spectune.yaml lists in part, and a role that is not its --node-rank', () => {
    const one = judgeGroup([{ subject: 'th1 sglang.service', role: 0, nodes: nodes(0) }]);
    expect(one).toMatchObject({ status: 'FAIL' });
    expect(one?.summary).toContain('lists 1 of its 2 ranks');
    expect(one?.fix).toContain('spectune init --host HOST0 --host HOST1');
    expect(
      judgeGroup([
        { subject: 'a', role: 0, nodes: nodes(1) },
        { subject: 'b', role: 1, nodes: nodes(0) },
      ])?.status,
    ).toBe('FAIL');
    expect(
      judgeGroup([
        { subject: 'a', role: 0, nodes: nodes(0) },
        { subject: 'b', role: 1, nodes: nodes(1) },
      ])?.status,
    ).toBe('PASS');
    expect(judgeGroup([{ subject: 'a', role: 0, nodes: null }])).toBeNull();
  });

  it('judges a command that changes part of a group as partial, naming the ranks that keep their config', () => {
    expect(judgeCoverage(1, [{ rank: 0, name: 'th1 u' }], 'apply')).toEqual({ status: 'whole' });
    expect(
      judgeCoverage(
        2,
        [
          { rank: 0, name: 'th1 u' },
          { rank: 1, name: 'th2 u' },
        ],
        'apply',
      ),
    ).toEqual({ status: 'whole' });
    const c = judgeCoverage(2, [{ rank: 1, name: 'th2 u' }], 'rollback');
    expect(c).toMatchObject({ status: 'partial', changed: [1], others: [0] });
    expect(c.status === 'partial' && c.message).toBe(
      'rollback would change only rank 1 (th2 u) of a 2-node group: rank 0 keeps its config, so the ranks will differ',
    );
  });
});
