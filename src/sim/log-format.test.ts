import { describe, expect, it } from 'vitest';
import {
  formatCapacityLine,
  formatDecodeBatch,
  formatGracefulExit,
  formatStamp,
  formatAccess,
  formatUvicorn,
  listCaptureBatchSizes,
} from './log-format.js';
import { computeCapacity } from './model.js';
import { loadProfile } from './profiles-io.js';
import { resolveSettings } from './settings.js';
import { renderNotEnoughMemory } from './traceback.js';

// Regexes from the log-signature reference (§9), which the diagnosis rules are written against.
const SGL_CAPACITY = /max_total_num_tokens=(\d+), .*?max_running_requests=(\d+), context_len=(\d+)/;
const SGL_DECODE = /Decode batch[.,]?(?: \[\d+\])?,? #running-req: (\d+), (.*)/;
const SGL_DRAIN =
  /Gracefully exiting\.\.\. Remaining number of requests (\d+)\. Remaining requests remaining_rids=\[(.*)\]\./;

describe('SGLang line formats', () => {
  it('capacity line', () => {
    const p = loadProfile();
    const s = resolveSettings(p, {
      speculative_algorithm: 'EAGLE',
      speculative_num_steps: 2,
      speculative_eagle_topk: 1,
    });
    const c = computeCapacity(p, s);
    if (!c.ok) throw new Error('expected capacity');
    const line = formatCapacityLine(c, s);
    expect(line.match(SGL_CAPACITY)?.slice(2, 4)).toEqual(['21', '262144']);
    expect(line).toMatch(
      /^max_total_num_tokens=\d+, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=21, context_len=262144, available_gpu_mem=\d+\.\d\d GB$/,
    );
  });

  it('decode line splits into key: value pairs', () => {
    const line = formatDecodeBatch({
      running: 3,
      tokens: 900,
      tokenUsage: 0.01,
      acceptLen: 3.456,
      acceptRate: 0.864,
      genThroughput: 612.3,
      queued: 1,
    });
    const m = line.match(SGL_DECODE)!;
    const kv = Object.fromEntries(
      m[2]
        .split(', ')
        .filter(Boolean)
        .map((p) => p.split(': ')),
    );
    expect(m[1]).toBe('3');
    expect(kv).toMatchObject({
      '#token': '900',
      'token usage': '0.01',
      'accept len': '3.46',
      'gen throughput (token/s)': '612.30',
      '#queue-req': '1',
    });
  });

  it('drain line with Python list repr', () => {
    expect(formatGracefulExit(['bench-27', 'bench-28'])).toMatch(SGL_DRAIN);
    expect(formatGracefulExit([])).toBe(
      'Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].',
    );
  });

  it('uvicorn prefix is padded as SGLang configures it', () => {
    expect(formatUvicorn(formatAccess('127.0.0.1:5', 'GET', '/health', 503))).toBe(
      'INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 503 Service Unavailable',
    );
    expect(formatUvicorn('x', 'ERROR')).toBe('ERROR:    x');
  });

  it('timestamp and capture sizes', () => {
    expect(formatStamp(new Date(2026, 2, 9, 22, 28, 48))).toBe('2026-03-09 22:28:48');
    expect(listCaptureBatchSizes(16)).toEqual([1, 2, 4, 8, 12, 16]);
  });

  it('Not enough memory traceback: frames through TpModelWorker, terminal line at column 0, no blank lines', () => {
    const lines = renderNotEnoughMemory().split('\n');
    expect(lines[0]).toBe('Scheduler hit an exception: Traceback (most recent call last):');
    expect(lines).toContain(
      '  File "/root/sglang-main/python/sglang/srt/managers/tp_worker.py", line 258, in __init__',
    );
    expect(lines).toContain(
      '  File "/root/sglang-main/python/sglang/srt/managers/tp_worker.py", line 341, in _init_model_runner',
    );
    expect(lines.at(-1)).toBe('RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.');
    expect(lines.every((l) => l.trim() !== '')).toBe(true);
  });
});
