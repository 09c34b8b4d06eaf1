// startSim in-process: the HTTP surface (OpenAI, native, info, metrics) against a real loopback server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from './server.js';
import { expectedAcceptLength } from './model.js';
import { loadProfile } from './profiles-io.js';
import { resolveSettings } from './settings.js';

let sim: SimHandle;
let log = '';
let base = '';
const post = (path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

// Read an SSE body into its parsed events.
async function readSse(r: Response): Promise<unknown[]> {
  const text = await r.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => (e === 'data: [DONE]' ? '[DONE]' : JSON.parse(e.slice(6))));
}

beforeAll(async () => {
  sim = startSim(
    [
      '--port',
      '0',
      '--speculative-algorithm',
      'EAGLE',
      '--speculative-num-steps',
      '3',
      '--speculative-eagle-topk',
      '1',
      '--decode-log-interval',
      '10',
    ],
    {
      sink: (t) => {
        log += t;
      },
      env: { SPECTUNE_SIM_TIME_SCALE: '0.01' },
    },
  );
  base = `http://127.0.0.1:${await sim.listening}`;
  await sim.ready;
});
afterAll(async () => {
  await sim.close();
  expect(await sim.exited).toEqual({ kind: 'exit', code: 0 });
});

describe('OpenAI-compatible API', () => {
  it('non-streaming chat: content, finish_reason and usage agree', async () => {
    const j = await (
      await post('/v1/chat/completions', {
        model: 'x',
        messages: [{ role: 'user', content: 'Hello there, how are you?' }],
        max_tokens: 40,
        ignore_eos: true,
      })
    ).json();
    expect(j.object).toBe('chat.completion');
    expect(j.choices[0].finish_reason).toBe('length');
    expect(j.usage.completion_tokens).toBe(40);
    expect(j.usage.total_tokens).toBe(j.usage.prompt_tokens + 40);
    expect(j.choices[0].message.content.trim().split(' ')).toHaveLength(40);
  });

  it('streaming completions: bursts of accepted tokens, finish chunk, usage only when asked, then [DONE]', async () => {
    const withUsage = await readSse(
      await post('/v1/completions', {
        prompt: 'x',
        max_tokens: 60,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const without = await readSse(
      await post('/v1/completions', { prompt: 'x', max_tokens: 60, ignore_eos: true, stream: true }),
    );
    expect(withUsage.at(-1)).toBe('[DONE]');
    expect((withUsage.at(-2) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(60);
    expect(without.some((e) => typeof e === 'object' && (e as { usage: unknown }).usage)).toBe(false);
    const texts = (without.slice(0, -2) as { choices: { text: string }[] }[]).map(
      (e) => e.choices[0].text.trim().split(' ').length,
    );
    expect(texts.reduce((a, b) => a + b, 0)).toBe(60);
    expect(Math.max(...texts)).toBeGreaterThan(1);
  });

  it('min_tokens holds off the natural stop; the user field becomes the request id in the log', async () => {
    const j = await (
      await post('/v1/chat/completions', {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 600,
        min_tokens: 500,
        user: 'bench-user-7',
      })
    ).json();
    expect(j.usage.completion_tokens).toBe(500);
    expect(j.choices[0].finish_reason).toBe('stop');
    expect(log).toContain("Finish: obj=GenerateReqInput(rid='bench-user-7')");
  });

  it('a malformed body is a 400', async () => {
    const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{nope' });
    expect(r.status).toBe(400);
  });
});

describe('native and info endpoints', () => {
  it('/generate keeps the rid, streaming and not', async () => {
    const j = await (
      await post('/generate', {
        text: 'hi',
        rid: 'bench-42',
        sampling_params: { max_new_tokens: 12, ignore_eos: true },
      })
    ).json();
    expect(j.meta_info).toMatchObject({
      id: 'bench-42',
      completion_tokens: 12,
      finish_reason: { type: 'length', length: 12 },
    });
    const events = await readSse(
      await post('/generate', {
        text: 'hi',
        rid: 'bench-43',
        stream: true,
        sampling_params: { max_new_tokens: 9, ignore_eos: true },
      }),
    );
    const last = events.at(-2) as { text: string; meta_info: { id: string; completion_tokens: number } };
    expect(last.meta_info).toMatchObject({ id: 'bench-43', completion_tokens: 9 });
    expect(last.text.trim().split(' ')).toHaveLength(9);
  });

  it('/get_server_info reports settings, capacity and the lifetime accept length', async () => {
    const j = await (await fetch(`${base}/get_server_info`)).json();
    const profile = loadProfile();
    const expected = expectedAcceptLength(
      profile,
      resolveSettings(profile, { speculative_algorithm: 'EAGLE', speculative_num_steps: 3, speculative_eagle_topk: 1 }),
    );
    expect(j).toMatchObject({
      simulated: true,
      max_running_requests: 17,
      speculative_num_steps: 3,
      speculative_num_draft_tokens: 4,
    });
    expect(Math.abs(j.internal_states[0].avg_spec_accept_length / expected - 1)).toBeLessThan(0.1);
    expect(log).toContain(
      "Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please use '/server_info' instead.",
    );
  });

  it('/v1/models, /get_model_info and /metrics', async () => {
    const models = await (await fetch(`${base}/v1/models`)).json();
    expect(models.data[0]).toMatchObject({ id: 'Qwen/Qwen3.5-122B-A10B-FP8', max_model_len: 262144 });
    expect((await (await fetch(`${base}/get_model_info`)).json()).simulated).toBe(true);
    const m = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'sglang:spec_accept_length',
      'sglang:gen_throughput',
      'sglang:num_running_reqs',
      'sglang:num_queue_reqs',
      'sglang:token_usage',
    ]) {
      expect(m).toMatch(new RegExp(`^${name}\\{[^}]*\\} [\\d.e+-]+$`, 'm'));
    }
    expect(m).toMatch(/^sglang:generation_tokens_total\{[^}]*\} [1-9]\d*$/m);
    expect(log).toMatch(
      /Decode batch, #running-req: \d+, #token: \d+, token usage: [\d.]+, accept len: [\d.]+, accept rate: [\d.]+, cuda graph: True, gen throughput \(token\/s\): [\d.]+, #queue-req: \d+, /,
    );
  });
});
