#!/bin/bash
# Unpack the llama.cpp source bundled in node-llama-cpp@3.21.1 (llama/gitRelease.bundle, llama.cpp v0.4.0) into
# DEST/llama.cpp: the tree the GPU recipe builds with CUDA (LLAMA_SRC) and whose models/ holds the vocab GGUF the
# generated models copy (VOCAB). Uses the package tarball that build-llama-server.sh caches
# ($SPECTUNE_LLAMA_DIR/build, default /var/lib/spectune-llama/build) when it is there, else `npm pack` into DEST.
# No install scripts run. A tree already there is kept.
# Usage: scripts/llamacpp/unpack-llama-src.sh DEST     (prints LLAMA_SRC=... and VOCAB=... on its last two lines)
set -euo pipefail
NODE_LLAMA_CPP_VERSION=3.21.1
[ $# -eq 1 ] || { echo "usage: unpack-llama-src.sh DEST (the source goes to DEST/llama.cpp)" >&2; exit 2; }
dest=$(mkdir -p "$1" && cd "$1" && pwd)
src=$dest/llama.cpp
tgz_name=node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz
if [ ! -f "$src/CMakeLists.txt" ]; then
  command -v git >/dev/null || { echo "unpack-llama-src: missing tool: git (run scripts/install-deps.sh)" >&2; exit 2; }
  cached=${SPECTUNE_LLAMA_DIR:-/var/lib/spectune-llama}/build/$tgz_name
  if [ -f "$cached" ]; then tgz=$cached
  else
    tgz=$dest/$tgz_name
    [ -f "$tgz" ] || (cd "$dest" && npm pack --silent "node-llama-cpp@$NODE_LLAMA_CPP_VERSION" >/dev/null)
  fi
  tmp=$(mktemp -d "$dest/.unpack.XXXXXX")
  tar -xzf "$tgz" -C "$tmp" package/llama/gitRelease.bundle
  rm -rf "$src.part"
  git -c advice.detachedHead=false clone -q "$tmp/package/llama/gitRelease.bundle" "$src.part"
  rm -rf "$tmp"
  mv "$src.part" "$src"
  echo "unpack-llama-src: unpacked $tgz into $src" >&2
else
  echo "unpack-llama-src: $src is there (delete it to unpack again)" >&2
fi
vocab=$src/models/ggml-vocab-llama-spm.gguf
[ -f "$vocab" ] || { echo "unpack-llama-src: $vocab is missing from the bundle" >&2; exit 3; }
echo "LLAMA_SRC=$src"
echo "VOCAB=$vocab"
