// The simulator's logs are accepted by `spectune diagnose` as the real engine's: each failure mode gets its class.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:net';
import { diagnoseLogs } from '../../src/diagnose/index.js';
import { ensureBuilt, FAST, freePort, sleep, spawnSim, streamChat, type SimProc } from './sim-helpers.js';

/** Real processes on a shared, busy machine: start-up plus streaming can take far longer than a unit test. */
vi.setConfig({ testTimeout: 120_000 });

const STEPS = (n: number) => [
  '--speculative-algorithm',
  'EAGLE',
  '--speculative-num-steps',
  String(n),
  '--speculative-eagle-topk',
  '1',
];

// Run one scenario against a fresh sim process and return its captured stdout once it died.
async function capture(args: string[], drive: (p: SimProc) => Promise<void> = async () => undefined): Promise<string> {
  const p = spawnSim(args);
  try {
    await drive(p);
    await p.exit;
    return p.out();
  } finally {
    p.stop();
  }
}

const diagnose = (log: string) =>
  diagnoseLogs([{ name: 'sglang.log', content: log }], { engine: 'sglang' }).verdict.class;

beforeAll(() => ensureBuilt(), 180_000);

describe.concurrent("spectune diagnose on the simulator's logs", () => {
  it('steps=10 start-up failure → kv_cache_oom', async () => {
    const log = await capture(['--port', '0', '--sim-time-scale', FAST, ...STEPS(10)]);
    expect(diagnose(log)).toBe('kv_cache_oom');
  });

  it('batch-size CUDA OOM → cuda_oom', async () => {
    const log = await capture(
      ['--port', '0', '--sim-time-scale', FAST, '--sim-fault', 'cuda-oom-batch=2'],
      async (p) => {
        await p.waitFor(/ready to roll/);
        const port = await p.port();
        await Promise.allSettled(
          [1, 2].map((i) => streamChat(port, { max_tokens: 40, ignore_eos: true, rid: `bench-${i}` })),
        );
      },
    );
    expect(diagnose(log)).toBe('cuda_oom');
  });

  it('illegal memory access after N requests → cuda_error', async () => {
    const log = await capture(['--port', '0', '--sim-time-scale', FAST, '--sim-fault', 'crash-after=1'], async (p) => {
      await p.waitFor(/ready to roll/);
      const port = await p.port();
      await streamChat(port, { max_tokens: 8, ignore_eos: true, rid: 'bench-1' }).catch(() => undefined);
    });
    expect(diagnose(log)).toBe('cuda_error');
  });

  it('scheduler hang → watchdog → distributed_error', async () => {
    const log = await capture(
      ['--port', '0', '--sim-time-scale', FAST, '--sim-fault', 'hang-after=1', '--watchdog-timeout', '60'],
      async (p) => {
        await p.waitFor(/ready to roll/);
        const port = await p.port();
        await streamChat(port, { max_tokens: 8, ignore_eos: true, rid: 'bench-1' }).catch(() => undefined);
      },
    );
    expect(diagnose(log)).toBe('distributed_error');
  });

  it('port already in use → port_in_use', async () => {
    const blocker = createServer();
    const port = await new Promise<number>((r) =>
      blocker.listen(0, '127.0.0.1', () => r((blocker.address() as { port: number }).port)),
    );
    try {
      expect(diagnose(await capture(['--port', String(port), '--sim-time-scale', FAST]))).toBe('port_in_use');
    } finally {
      blocker.close();
    }
  });

  it('unknown flag → bad_config', async () => {
    expect(diagnose(await capture(['--bogus-flag', '1']))).toBe('bad_config');
  });

  it('rank 1 after rank 0 died → distributed_error', async () => {
    const dist = `127.0.0.1:${await freePort()}`;
    const common = ['--nnodes', '2', '--dist-init-addr', dist, '--sim-time-scale', '0.005'];
    const r0 = spawnSim([...common, '--node-rank', '0', '--port', '0']);
    try {
      const log = await capture([...common, '--node-rank', '1'], async () => {
        await r0.waitFor(/ready to roll/);
        r0.stop();
      });
      expect(diagnose(log)).toBe('distributed_error');
    } finally {
      r0.stop();
    }
  });

  it('SIGTERM with requests in flight, drained → clean_stop', async () => {
    const log = await capture(['--port', '0', '--sim-time-scale', '0.05', ...STEPS(3)], async (p) => {
      await p.waitFor(/ready to roll/);
      const port = await p.port();
      const req = streamChat(port, { max_tokens: 200, ignore_eos: true, rid: 'bench-27' });
      await sleep(100);
      process.kill(p.pid, 'SIGTERM');
      await req;
    });
    expect(log).toContain("remaining_rids=['bench-27']");
    expect(diagnose(log)).toBe('clean_stop');
  });
});
