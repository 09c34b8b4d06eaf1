// The guard of the host-changing commands (apply, rollback, fold, tune) against splitting a multi-node group, on
// scripted hosts whose `systemctl cat` shows SGLang's two-node launch line: part of the group is refused (one line,
// the fix), --rank N warns that the ranks will differ, the whole group and one-node units pass. Reads only.
import { describe, expect, it } from 'vitest';
import { guardGroupChange } from '../../src/app/group-guard.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import { FakeHost } from '../fakes/fake-host.js';

const UNIT = 'sglang-qwen.service';

// A host whose unit runs rank `rank` of an `nnodes`-node SGLang group (SGLang's documented two-node line).
function hostOf(name: string, rank: number, nnodes = 2): FakeHost {
  const exec = `python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-405B-Instruct --tp 16 --dist-init-addr 172.16.4.52:20000 --nnodes ${nnodes} --node-rank ${rank}`;
  return new FakeHost(name).on(['systemctl', 'cat'], {
    stdout: `# /etc/systemd/system/${UNIT}\n[Service]\nExecStart=${exec}\n`,
  });
}

describe('group guard', () => {
  it('refuses to change rank 0 of a two-node group alone, naming the rank left behind and the fix; changes nothing', async () => {
    const h = hostOf('root@th1', 0);
    const err = await guardGroupChange([{ host: h, unit: UNIT, rank: 0 }], 'sglang', 'apply', {
      rankPicked: false,
      rankFlag: true,
      onEvent: () => {},
    }).then(
      () => null,
      (e: Error & { code?: string; hint?: string }) => e,
    );
    expect(err?.code).toBe('E_USAGE');
    expect(err?.message).toBe(
      `apply would change only rank 0 (root@th1 ${UNIT}) of a 2-node group: rank 1 keeps its config, so the ranks will differ: refused, nothing was changed`,
    );
    expect(err?.hint).toContain('or pass --rank 0 to change this rank alone on purpose');
    expect(h.calls.every((c) => c.kind === 'exec' && c.argv[1] === 'cat')).toBe(true);
    const tune = await guardGroupChange([{ host: h, unit: UNIT, rank: 0 }], 'sglang', 'tune', {
      rankPicked: false,
      rankFlag: false,
      onEvent: () => {},
    }).catch((e: Error & { hint?: string }) => e.hint);
    expect(tune).not.toContain('--rank');
  });

  it('with --rank N it warns that the ranks will differ; the whole group and a one-node unit pass silently', async () => {
    const events: SpectuneEvent[] = [];
    await guardGroupChange([{ host: hostOf('root@th2', 1), unit: UNIT, rank: 1 }], 'sglang', 'rollback', {
      rankPicked: true,
      rankFlag: true,
      onEvent: (e) => events.push(e),
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'log',
      level: 'warn',
      message: expect.stringContaining(
        '--rank 1: rollback changes only rank 1 (root@th2 sglang-qwen.service) of a 2-node group: the ranks will differ',
      ),
    });
    await guardGroupChange(
      [
        { host: hostOf('a', 0), unit: UNIT, rank: 0 },
        { host: hostOf('b', 1), unit: UNIT, rank: 1 },
      ],
      'sglang',
      'apply',
      { rankPicked: false, rankFlag: true, onEvent: (e) => events.push(e) },
    );
    await guardGroupChange([{ host: hostOf('a', 0, 1), unit: UNIT, rank: 0 }], 'sglang', 'apply', {
      rankPicked: false,
      rankFlag: true,
      onEvent: (e) => events.push(e),
    });
    expect(events).toHaveLength(1);
  });
});
