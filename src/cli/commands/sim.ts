// `spectune sim`: run the simulated SGLang-compatible engine in the foreground until it exits or dies.
import { isToolError } from '../../errors.js';
import type { Command } from '../io.js';
import { listProfiles, startSim, type SimExit } from '../../sim/index.js';

const HELP = `usage: spectune sim [SGLang launch_server flags] [--sim-profile NAME|FILE] [--sim-time-scale X]
                   [--sim-fault crash-after=N|cuda-oom-batch=N|hang-after=N] [--sim-hold-memory] [--sim-seed N]

A SIMULATED SGLang-compatible inference engine (no GPU) for demos and tests.
  --sim-profile NAME|FILE   the simulated model (default qwen3.5-122b-a10b-2node); profiles: ${'%PROFILES%'}
  --sim-time-scale X        start-up time scale (default 1, real time; or SPECTUNE_SIM_TIME_SCALE); tokens always
                            stream at the model's rate
  --sim-fault F             inject a fault (default none)     --sim-seed N   noise seed
  SGLang's own flags keep SGLang's defaults (--port 30000, --host 127.0.0.1, ...). See docs/sim.md.
examples:
  spectune sim --port 30000 --speculative-algorithm EAGLE --speculative-num-steps 3 --sim-time-scale 0.01
  spectune sim --sim-profile qwen3-8b-1gpu --port 30001 --sim-fault crash-after=5
`;

// Make the real process die the way the simulated engine does (SIGKILL of the whole tree, SIGABRT, ...).
function dieLike(exit: SimExit): number {
  if (exit.kind === 'exit') return exit.code;
  process.removeAllListeners('SIGTERM');
  process.kill(process.pid, exit.signal);
  return 1;
}

// Run the simulator in this process; argparse errors print SGLang's usage text and exit 2.
export const run: Command = async (argv, io) => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(HELP.replace('%PROFILES%', listProfiles().join(', ')));
    return 0;
  }
  let handle: ReturnType<typeof startSim>;
  try {
    handle = startSim(argv, { sink: (t) => io.stdout.write(t), env: io.env });
  } catch (e) {
    if (isToolError(e) && e.code === 'E_SIM_ARGS') {
      io.stderr.write(e.message);
      return 2;
    }
    throw e;
  }
  const onTerm = () => handle.sigterm();
  process.on('SIGTERM', onTerm);
  const exit = await handle.exited;
  process.off('SIGTERM', onTerm);
  return dieLike(exit);
};
