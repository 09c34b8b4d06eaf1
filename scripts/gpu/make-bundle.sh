#!/bin/bash
# Pack what a GPU machine without network needs to run scripts/gpu/campaign.sh from this worktree (see device-run.sh):
#   DEST/spectune.tar.xz   dist/, bin/, package.json, profiles/, prompts/, schema/, scripts/, native/build, the
#                          real-gpu-* fixture scripts, and the production node_modules (better-sqlite3, yaml, zod, ...)
#   DEST/node.xz           this machine's node binary (runs as is on Ubuntu 24.04 x86-64)
#   DEST/llama-src.tar.xz  the llama.cpp source bundled in node-llama-cpp@3.21.1, without .git, build/, models/ and media/
#   DEST/vocab.gguf        its models/ggml-vocab-llama-spm.gguf (the tokenizer the generated models copy; VOCAB overrides)
#   DEST/device-run.sh     the script that runs it there
# Usage: scripts/gpu/make-bundle.sh DEST [LLAMA_SRC]   (run `npm run build` first)
#   LLAMA_SRC: an unpacked llama.cpp tree (scripts/llamacpp/unpack-llama-src.sh); without it the source is unpacked
#   into a temporary folder from node-llama-cpp's tarball (the one build-llama-server.sh caches, else npm pack) and
#   removed after. Files already in DEST (node.xz, llama-src.tar.xz) are kept.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: make-bundle.sh DEST [LLAMA_SRC]" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"; dest=$(cd "$1" && pwd)
[ -d "$repo/dist" ] || { echo "make-bundle: $repo/dist is missing: run npm run build first" >&2; exit 2; }
src=${2:-}; tmp=""
if [ -z "$src" ] && { [ ! -f "$dest/llama-src.tar.xz" ] || [ -z "${VOCAB:-}" ]; }; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-bundle.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
  bash "$repo/scripts/llamacpp/unpack-llama-src.sh" "$tmp" > /dev/null
  src=$tmp/llama.cpp
fi
if [ -n "$src" ] && [ ! -f "$src/CMakeLists.txt" ]; then echo "make-bundle: LLAMA_SRC $src is not a llama.cpp tree (no CMakeLists.txt): give the llama.cpp folder scripts/llamacpp/unpack-llama-src.sh made" >&2; exit 2; fi
vocab=${VOCAB:-$src/models/ggml-vocab-llama-spm.gguf}
[ -f "$vocab" ] || { echo "make-bundle: VOCAB: no vocab GGUF at $vocab: set VOCAB=/path/to/ggml-vocab-llama-spm.gguf" >&2; exit 2; }
cd "$repo"
mods=(better-sqlite3 bindings file-uri-to-path yaml zod)
tar -chf - --exclude='node_modules/better-sqlite3/deps' --exclude='node_modules/better-sqlite3/src' \
  --exclude='*/obj.target' --exclude='*/obj' --exclude='*.a' \
  dist bin package.json profiles prompts schema scripts native/build/stream_reader.node \
  test/fixtures/journal/*/real-gpu-*/produce.* $(for m in "${mods[@]}"; do echo "node_modules/$m"; done) \
  | xz -T2 -6 > "$dest/spectune.tar.xz"
[ -f "$dest/node.xz" ] || xz -T2 -6 -c "$(command -v node)" > "$dest/node.xz"
if [ ! -f "$dest/llama-src.tar.xz" ]; then
  # The archive's top folder is llama.cpp/ whatever the tree's own name (device-run.sh unpacks it into /tmp).
  (cd "$src" && tar --exclude=./.git --exclude=./build --exclude=./models --exclude=./media --transform 's,^\.,llama.cpp,' \
    -cf - . | xz -T2 -6 > "$dest/llama-src.tar.xz.part") && mv "$dest/llama-src.tar.xz.part" "$dest/llama-src.tar.xz"
fi
cp "$vocab" "$dest/vocab.gguf"
cp "$repo/scripts/gpu/device-run.sh" "$dest/device-run.sh"
ls -la "$dest"
