#!/bin/bash
# Pack what a GPU machine without network needs to run scripts/gpu/campaign.sh from this worktree (see device-run.sh):
#   DEST/spectune.tar.xz   dist/, bin/, package.json, profiles/, prompts/, schema/, scripts/, native/build, the
#                          real-gpu-* fixture scripts, and the production node_modules (better-sqlite3, yaml, zod, ...)
#   DEST/node.xz           this machine's node binary (runs as is on Ubuntu 24.04 x86-64)
#   DEST/llama-src.tar.xz  the llama.cpp source bundled in node-llama-cpp@3.21.1, without .git, build/, models/ and media/
#   DEST/vocab.gguf        its models/ggml-vocab-llama-spm.gguf (the tokenizer the generated models copy)
# Usage: scripts/gpu/make-bundle.sh DEST [LLAMA_SRC_PARENT]   (run `npm run build` first)
set -euo pipefail
dest=$1; src_parent=${2:-/var/lib/spectune-llama/build}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dest"
cd "$repo"
mods=(better-sqlite3 bindings file-uri-to-path yaml zod)
tar -chf - --exclude='node_modules/better-sqlite3/deps' --exclude='node_modules/better-sqlite3/src' \
  --exclude='*/obj.target' --exclude='*/obj' --exclude='*.a' \
  dist bin package.json profiles prompts schema scripts native/build/stream_reader.node \
  test/fixtures/journal/*/real-gpu-*/produce.* $(for m in "${mods[@]}"; do echo "node_modules/$m"; done) \
  | xz -T2 -6 > "$dest/spectune.tar.xz"
[ -f "$dest/node.xz" ] || xz -T2 -6 -c "$(command -v node)" > "$dest/node.xz"
if [ ! -f "$dest/llama-src.tar.xz" ]; then
  (cd "$src_parent" && tar --exclude='llama.cpp/.git' --exclude='llama.cpp/build' --exclude='llama.cpp/models' --exclude='llama.cpp/media' \
    -cf - llama.cpp | xz -T2 -6 > "$dest/llama-src.tar.xz")
fi
cp "${VOCAB:-/var/lib/spectune-llama/vocab/ggml-vocab-llama-spm.gguf}" "$dest/vocab.gguf"
cp "$repo/scripts/gpu/device-run.sh" "$dest/device-run.sh"
ls -la "$dest"
