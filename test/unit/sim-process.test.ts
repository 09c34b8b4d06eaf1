// The real `spectune sim` process driven over loopback HTTP: flags, readiness, queueing, failures, drain, faults.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { ensureBuilt, FAST, freePort, sleep, spawnSim, streamChat, type SimProc } from './sim-helpers.js';

/** Real processes on a shared, busy machine: start-up plus streaming can take far longer than a unit test. */
vi.setConfig({ testTimeout: 120_000 });

const running: SimProc[] = [];
function sim(args: string[], env: NodeJS.ProcessEnv = {}): SimProc {
  const p = spawnSim(args, env);
  running.push(p);
  return p;
}
const STEPS = (n: number) => [
  '--speculative-algorithm',
  'EAGLE',
  '--speculative-num-steps',
  String(n),
  '--speculative-eagle-topk',
  '1',
];
const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;

beforeAll(() => ensureBuilt(), 180_000);
afterEach(() => {
  for (const p of running.splice(0)) p.stop();
});

describe('flags', () => {
  it('an unknown flag exits 2 with argparse usage and error', async () => {
    const p = sim(['--port', '0', '--bogus']);
    expect((await p.exit).code).toBe(2);
    expect(p.out()).toMatch(/^usage: launch_server\.py \[-h\]/);
    expect(p.out()).toContain('launch_server.py: error: unrecognized arguments: --bogus');
  });

  it('a bad value exits 2 naming the flag, for both --flag value and --flag=value', async () => {
    const a = sim(['--speculative-num-steps', 'abc']);
    const b = sim(['--mem-fraction-static=high']);
    expect((await a.exit).code).toBe(2);
    expect((await b.exit).code).toBe(2);
    expect(a.out()).toContain("launch_server.py: error: argument --speculative-num-steps: invalid int value: 'abc'");
    expect(b.out()).toContain("launch_server.py: error: argument --mem-fraction-static: invalid float value: 'high'");
  });

  it("topk=1 forces draft tokens to steps+1 with SGLang's warning, visible in /server_info", async () => {
    const p = sim(['--port=0', '--sim-time-scale', FAST, ...STEPS(2), '--speculative-num-draft-tokens', '8']);
    await p.waitFor(/ready to roll/);
    expect(p.out()).toContain(
      'speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1',
    );
    const info = await (await fetch(url(await p.port(), '/server_info'))).json();
    expect(info).toMatchObject({
      simulated: true,
      speculative_num_steps: 2,
      speculative_eagle_topk: 1,
      speculative_num_draft_tokens: 3,
      max_running_requests: 21,
    });
    expect(p.out().split('\n')[0]).toContain('spectune sim: SIMULATED SGLang-compatible engine (no GPU)');
  });
});

describe('start-up', () => {
  it('health is 503 after uvicorn starts and 200 only after the ready line', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', '0.05', ...STEPS(3)]);
    const port = await p.port();
    expect(p.out()).not.toContain('ready to roll');
    expect((await fetch(url(port, '/health'))).status).toBe(503);
    expect((await fetch(url(port, '/health_generate'))).status).toBe(503);
    await p.waitFor(/The server is fired up and ready to roll!/);
    expect((await fetch(url(port, '/health'))).status).toBe(200);
    const out = p.out();
    const order = [
      'Load weight end.',
      'KV Cache is allocated.',
      'Capture cuda graph end.',
      'max_total_num_tokens=',
      'Application startup complete.',
      '"POST /generate HTTP/1.1" 200 OK',
      'The server is fired up and ready to roll!',
    ].map((s) => out.indexOf(s));
    expect(order.every((v, i) => v >= 0 && (i === 0 || v > order[i - 1]))).toBe(true);
    expect(out).toMatch(
      /max_total_num_tokens=\d+, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=17, context_len=262144, available_gpu_mem=[\d.]+ GB/,
    );
  });

  it('steps=10 fails with the Not enough memory traceback and exits 1', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', FAST, ...STEPS(10)]);
    expect(await p.exit).toEqual({ code: 1, signal: null });
    const out = p.out();
    expect(out).toMatch(/TP0\] Scheduler hit an exception: Traceback \(most recent call last\):/);
    expect(out).toContain('managers/tp_worker.py", line 258, in __init__\n    self._init_model_runner()');
    expect(out).toContain('in _init_model_runner');
    expect(out).toContain('\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n');
    expect(out).toContain('Received sigquit from a child process. It usually means the child failed.');
    expect(out).not.toContain('ready to roll');
  });

  it("a port already in use gives uvicorn's errno 98 error and exit 1", async () => {
    const blocker = createServer();
    const port = await new Promise<number>((r) =>
      blocker.listen(0, '127.0.0.1', () => r((blocker.address() as { port: number }).port)),
    );
    try {
      const p = sim(['--port', String(port), '--sim-time-scale', FAST]);
      expect((await p.exit).code).toBe(1);
      expect(p.out()).toContain(
        `ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', ${port}): address already in use`,
      );
    } finally {
      blocker.close();
    }
  });
});

describe('signals and memory', () => {
  it('SIGTERM before the warm-up kills the process by the signal (no handler yet, as in SGLang)', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', '0.05']);
    await p.waitFor(/Load weight begin/);
    process.kill(p.pid, 'SIGTERM');
    expect(await p.exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(p.out()).not.toContain('SIGTERM received');
  });

  it('--sim-hold-memory holds real host memory in proportion to the simulated load', async () => {
    const rss = (pid: number) =>
      Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
    const held = sim(['--port', '0', '--sim-time-scale', FAST, '--sim-hold-memory']);
    const plain = sim(['--port', '0', '--sim-time-scale', FAST]);
    await Promise.all([held.waitFor(/ready to roll/), plain.waitFor(/ready to roll/)]);
    expect(rss(held.pid) - rss(plain.pid)).toBeGreaterThan(100);
  });
});

describe('serving', () => {
  it('requests beyond max_running_requests queue and run when a slot frees', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', FAST, ...STEPS(3), '--max-running-requests', '2']);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    const reqs = [1, 2, 3, 4].map((i) => streamChat(port, { max_tokens: 120, ignore_eos: true, rid: `bench-${i}` }));
    let metrics = '';
    for (let i = 0; i < 100 && !/sglang:num_running_reqs\{[^}]*\} 2\n/.test(metrics); i++) {
      await sleep(20);
      metrics = await (await fetch(url(port, '/metrics'))).text();
    }
    expect(metrics).toMatch(/sglang:num_running_reqs\{[^}]*\} 2\n/);
    expect(metrics).toMatch(/sglang:num_queue_reqs\{[^}]*\} 2\n/);
    const res = await Promise.all(reqs);
    expect(res.every((r) => r.completionTokens === 120)).toBe(true);
    expect(Math.min(res[2].ttftMs, res[3].ttftMs)).toBeGreaterThan(Math.max(res[0].ttftMs, res[1].ttftMs) + 300);
    for (const i of [1, 2, 3, 4]) expect(p.out()).toContain(`Finish: obj=GenerateReqInput(rid='bench-${i}')`);
  });

  it('SIGTERM drains in-flight requests at their real pace, answers 503, then SIGKILLs itself', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', '0.05', ...STEPS(3)]);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    const reqs = ['bench-27', 'bench-28', 'bench-29'].map((rid) =>
      streamChat(port, { max_tokens: 400, ignore_eos: true, rid }),
    );
    await sleep(200);
    process.kill(p.pid, 'SIGTERM');
    await p.waitFor(/SIGTERM received\. signum=None frame=None\. Draining requests and shutting down\.\.\./);
    expect((await fetch(url(port, '/health'))).status).toBe(503);
    await p.waitFor(
      /Remaining number of requests 3\. Remaining requests remaining_rids=\['bench-27', 'bench-28', 'bench-29'\]\./,
    );
    const res = await Promise.all(reqs);
    expect(res.map((r) => r.completionTokens)).toEqual([400, 400, 400]);
    expect(await p.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.out()).toMatch(
      /Gracefully exiting\.\.\. Remaining number of requests 0\. Remaining requests remaining_rids=\[\]\.\n$/,
    );
  });

  it('--api-key is enforced (401) except on /health', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', FAST, '--api-key', 'sekret']);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    expect((await fetch(url(port, '/v1/models'))).status).toBe(401);
    expect((await fetch(url(port, '/v1/models'), { headers: { authorization: 'Bearer sekret' } })).status).toBe(200);
    expect((await fetch(url(port, '/health'))).status).toBe(200);
    expect(p.out()).not.toContain('sekret');
  });
});

describe('faults', () => {
  it('crash-after=N: CUDA illegal memory access, SIGQUIT line, whole tree SIGKILLed', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', FAST, '--sim-fault', 'crash-after=1']);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    await streamChat(port, { max_tokens: 10, ignore_eos: true, rid: 'bench-1' });
    expect(await p.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.out()).toContain('RuntimeError: CUDA error: an illegal memory access was encountered');
    expect(p.out()).toContain('SIGQUIT received. signum=None, frame=None. It usually means one child failed.');
  });

  it('cuda-oom-batch=N: torch.OutOfMemoryError when the batch reaches N', async () => {
    const p = sim(['--port', '0', '--sim-time-scale', FAST, '--sim-fault=cuda-oom-batch=2']);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    await Promise.allSettled(
      [1, 2].map((i) => streamChat(port, { max_tokens: 50, ignore_eos: true, rid: `bench-${i}` })),
    );
    expect(await p.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.out()).toMatch(/\ntorch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ GiB/);
  });

  it('hang-after=N: health fails, the watchdog fires, then the tree is killed', async () => {
    const p = sim([
      '--port',
      '0',
      '--sim-time-scale',
      FAST,
      '--sim-fault',
      'hang-after=1',
      '--watchdog-timeout',
      '100',
    ]);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    await streamChat(port, { max_tokens: 5, ignore_eos: true, rid: 'bench-1' });
    expect((await fetch(url(port, '/health'))).status).toBe(503);
    await p.waitFor(/Watchdog timeout \(self\.watchdog_timeout=100\)/);
    expect(await p.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.out()).toContain(
      "Health check failed. Server couldn't get a response from detokenizer for last 20 seconds.",
    );
  });

  it("SIGTERM after a failed health check exits at once without draining (SGLang's UnHealthy path)", async () => {
    const p = sim([
      '--port',
      '0',
      '--sim-time-scale',
      FAST,
      '--sim-fault',
      'hang-after=1',
      '--watchdog-timeout',
      '100000',
    ]);
    await p.waitFor(/ready to roll/);
    const port = await p.port();
    await streamChat(port, { max_tokens: 5, ignore_eos: true, rid: 'bench-1' });
    const stuck = streamChat(port, { max_tokens: 5, ignore_eos: true, rid: 'bench-2' }).catch(() => null);
    expect((await fetch(url(port, '/health'))).status).toBe(503);
    process.kill(p.pid, 'SIGTERM');
    await p.waitFor(/Signal SIGTERM received while health check failed\. Force exiting\./);
    expect(await p.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await stuck).toBeNull();
  });

  it('multi-node: rank 1 joins rank 0 over TCP and aborts with the NCCL watchdog when rank 0 dies', async () => {
    const dist = `127.0.0.1:${await freePort()}`;
    const common = ['--nnodes', '2', '--dist-init-addr', dist, '--sim-time-scale', '0.005'];
    const r1 = sim([...common, '--node-rank', '1']);
    const r0 = sim([...common, '--node-rank', '0', '--port', '0']);
    await r0.waitFor(/ready to roll/);
    expect(r1.out()).toContain('Init torch distributed ends.');
    r0.stop();
    await r1.waitFor(
      /Watchdog caught collective operation timeout: WorkNCCL\(.*\) ran for \d+ milliseconds before timing out\./,
    );
    expect((await r1.exit).signal).toBe('SIGABRT');
    expect(r1.out()).toContain('[Rank 1] To avoid data inconsistency, we are taking the entire process down.');
  });
});
