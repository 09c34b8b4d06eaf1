// The sbatch script: every request as a #SBATCH line, the engine exec'd, two ranks through one srun, bad values refused.
import { describe, expect, it } from 'vitest';
import type { ToolError } from '../errors.js';
import { buildSbatchScript, parseSbatchOutput } from './script.js';
import type { TrialJobSpec } from './types.js';

const SPEC: TrialJobSpec = {
  name: 'spectune-c1-t2',
  partition: 'gpu',
  nodes: 1,
  nodelist: 'n2',
  exclude: [],
  gpusPerNode: 1,
  cpusPerTask: 2,
  mem: '800M',
  timeLimitMin: 10,
  command: 'python3 -m sglang.launch_server --model-path /m --port $SPECTUNE_PORT --speculative-num-steps 3',
  rank1Command: null,
  port: 30002,
  output: '/shared/spectune/%j.out',
  chdir: null,
  env: { HF_TOKEN: "it's secret" },
};

describe('sbatch script', () => {
  it('asks for partition, node, GPUs, memory and time, and execs the engine', () => {
    const s = buildSbatchScript(SPEC);
    for (const l of [
      '#SBATCH --job-name=spectune-c1-t2',
      '#SBATCH --partition=gpu',
      '#SBATCH --nodes=1',
      '#SBATCH --nodelist=n2',
      '#SBATCH --gpus-per-node=1',
      '#SBATCH --mem=800M',
      '#SBATCH --time=10',
      '#SBATCH --output=/shared/spectune/%j.out',
    ]) {
      expect(s.split('\n')).toContain(l);
    }
    expect(s).toContain("export HF_TOKEN='it'\\''s secret'");
    expect(s).toMatch(/^exec python3 -m sglang\.launch_server .* --speculative-num-steps 3$/m);
    expect(s).not.toContain('srun');
  });
  it('starts rank 0 and rank 1 of a two-node job with one srun', () => {
    const s = buildSbatchScript({
      ...SPEC,
      nodes: 2,
      nodelist: null,
      rank1Command: 'python3 -m sglang.launch_server --node-rank 1 --dist-init-addr $SPECTUNE_RANK0:5000',
    });
    expect(s).toContain('#SBATCH --nodes=2');
    expect(s).toContain('SPECTUNE_RANK0=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)');
    expect(s).toMatch(
      /^exec srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c '.*\$SLURM_PROCID" = 0 \]; then python3 .*; else python3 .*--node-rank 1.*; fi'$/m,
    );
  });
  it('refuses values that would change the job (one line, names the field)', () => {
    const err = (s: Partial<TrialJobSpec>) => {
      try {
        buildSbatchScript({ ...SPEC, ...s });
        return null;
      } catch (e) {
        return e as ToolError;
      }
    };
    expect(err({ mem: '4 G' })?.message).toMatch(/^target\.slurm\.mem: "4 G" is not a memory request/);
    expect(err({ partition: 'gpu\n#SBATCH --qos=high' })?.code).toBe('E_CONFIG_INVALID');
    expect(err({ nodes: 2, rank1Command: null })?.message).toMatch(/rank1Command/);
    expect(err({ env: { 'A B': 'x' } })?.message).toMatch(/target\.slurm\.env/);
  });
  it('reads the job id sbatch --parsable prints', () => {
    expect(parseSbatchOutput('42\n')).toBe('42');
    expect(parseSbatchOutput('43;cluster\n')).toBe('43');
    expect(() => parseSbatchOutput('sbatch: error: invalid partition')).toThrow(/no job id/);
  });
});
