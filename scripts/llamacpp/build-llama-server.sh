#!/bin/bash
# Build llama.cpp's llama-server (CPU, static, portable x86-64) from the git bundle that ships inside the npm
# package node-llama-cpp@3.21.1, and cache it at /var/lib/spectune-llama/bin/llama-server. Rebuilds only when the
# binary is missing. Also copies the bundle's vocab GGUF (llama-spm) to /var/lib/spectune-llama/vocab/ for the
# model generator (scripts/llamacpp/make-models.mjs). Uses only npm pack and Debian build tools; no install
# scripts run and nothing else is downloaded at build time.
set -euo pipefail
NODE_LLAMA_CPP_VERSION=3.21.1
ROOT=${SPECTUNE_LLAMA_DIR:-/var/lib/spectune-llama}
BIN="$ROOT/bin/llama-server"
VOCAB_DIR="$ROOT/vocab"
WORK="$ROOT/build"
log() { printf '[build-llama-server %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

if [ -x "$BIN" ] && [ -n "$(ls "$VOCAB_DIR"/*.gguf 2>/dev/null)" ]; then
  log "cached: $BIN"; "$BIN" --version 2>&1 | head -n 2; exit 0
fi
for tool in cmake ninja g++ git npm; do
  command -v "$tool" >/dev/null || { echo "missing build tool: $tool (run scripts/install-deps.sh)" >&2; exit 2; }
done

mkdir -p "$ROOT/bin" "$VOCAB_DIR" "$WORK"
cd "$WORK"
if [ ! -f "node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" ]; then
  log "npm pack node-llama-cpp@$NODE_LLAMA_CPP_VERSION"
  npm pack --silent "node-llama-cpp@$NODE_LLAMA_CPP_VERSION" >/dev/null
fi
tar xzf "node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
cat package/llama/llama.cpp.info.json; echo
rm -rf llama.cpp
git -c advice.detachedHead=false clone -q package/llama/gitRelease.bundle llama.cpp

# The vocab GGUF is all the generator needs from the tree; copy it before the (long) build.
vocab=$(ls llama.cpp/models/ggml-vocab-llama-spm.gguf 2>/dev/null || true)
[ -n "$vocab" ] || { echo "vocab GGUF ggml-vocab-llama-spm.gguf not found in the bundle's models/" >&2; exit 3; }
cp "$vocab" "$VOCAB_DIR/"
log "vocab: $VOCAB_DIR/$(basename "$vocab")"

if [ ! -x "$BIN" ]; then
  # LLAMA_USE_PREBUILT_UI=OFF: ON (the default) fetches the web UI from the Hugging Face hub at build time.
  # GGML_NATIVE=OFF: no -march=native, so the cached binary also runs on the CI machine's CPU. Alone it builds
  # for baseline x86-64 (SSE2), which decodes f16 several times slower (measured: 4 tok/s where the reference saw
  # ~100), so the x86-64-v3 kernels (AVX2/FMA/F16C, every x86 CI runner since ~2015) are switched on explicitly.
  # SPECTUNE_LLAMA_CPU_FLAGS overrides them (e.g. "" for a truly generic binary).
  cpu_flags=${SPECTUNE_LLAMA_CPU_FLAGS--DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}
  [ "$(uname -m)" = x86_64 ] || cpu_flags=""
  log "cmake configure ($cpu_flags)"
  # shellcheck disable=SC2086
  cmake -S llama.cpp -B llama.cpp/build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF $cpu_flags -DBUILD_SHARED_LIBS=OFF > cmake-configure.log
  log "cmake build llama-server -j$(nproc) (several minutes)"
  start=$SECONDS
  cmake --build llama.cpp/build --target llama-server -j"$(nproc)" > cmake-build.log
  log "built in $((SECONDS - start))s"
  install -m 0755 llama.cpp/build/bin/llama-server "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
fi
rm -rf llama.cpp package
log "llama-server: $BIN"
"$BIN" --version 2>&1 | head -n 2
