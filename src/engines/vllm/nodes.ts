// vLLM across nodes: ranks with --master-addr/--master-port, or a head over a Ray cluster.
import { flagValue, intOf } from '../flag-value.js';
import type { HeadNode, MultiNode } from '../types.js';

/** vLLM over Ray (or pipeline parallel across nodes): the other nodes run `ray start`, not vllm serve. */
function readVllmHead(argv: readonly string[]): HeadNode | null {
  const backend = flagValue(argv, ['--distributed-executor-backend']);
  const pp = intOf(flagValue(argv, ['--pipeline-parallel-size', '-pp']));
  if (backend === 'ray' || (pp !== null && pp > 1)) {
    return {
      peers: [],
      note: `vLLM ${backend === 'ray' ? 'on a Ray cluster' : `with --pipeline-parallel-size ${pp} (over Ray across nodes)`}: the other nodes run \`ray start\`, not vllm serve, so spectune changes this unit alone`,
    };
  }
  return null;
}

/** vLLM's multi-node forms. */
export const VLLM_MULTI_NODE: MultiNode = {
  rankFlags: { addrFlags: ['--master-addr'], portFlag: '--master-port' },
  readHeadNode: readVllmHead,
};
