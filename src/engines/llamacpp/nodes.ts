// llama.cpp across nodes: llama-server --rpc offloads layers to rpc-server peers, which take no engine flags.
import { flagValue } from '../flag-value.js';
import type { HeadNode, MultiNode } from '../types.js';

/** llama-server with --rpc: this unit is the only one spectune tunes. */
function readLlamaHead(argv: readonly string[]): HeadNode | null {
  const rpc = flagValue(argv, ['--rpc']);
  if (!rpc) return null;
  const peers = rpc
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    peers,
    note: `llama-server offloads layers to rpc-server on ${peers.join(', ')}: those take no engine flags, so spectune changes this unit alone (restart the rpc-server units yourself if they change)`,
  };
}

/** llama.cpp's multi-node form (no ranks). */
export const LLAMACPP_MULTI_NODE: MultiNode = { readHeadNode: readLlamaHead };
