#!/bin/bash
# Build llama-server with CUDA from the llama.cpp source bundled in node-llama-cpp@3.21.1 (unpacked, without models/
# and .git), as one self-contained binary (static ggml; CUDA runtime libraries from the toolkit).
# Usage: build-llama-cuda.sh SRC_DIR BUILD_DIR [CUDA_ARCH]
#   CUDA_ARCH: e.g. 90 for H100/H200; default from `nvidia-smi --query-gpu=compute_cap` (9.0 -> 90).
# Verified on an NVIDIA H200 (CUDA 13.0, cmake 4.4, ninja, 16 jobs): 481 steps in about 4.5 minutes.
set -euo pipefail
src=$1; build=$2
arch=${3:-${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}}
if [ -x "$build/bin/llama-server" ]; then echo "build-llama-cuda: $build/bin/llama-server exists (delete $build to rebuild)"; exit 0; fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$build"
echo "build-llama-cuda: cmake configure (CUDA arch $arch) $(date -u +%T)"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF > "$build/cmake-configure.log" 2>&1
echo "build-llama-cuda: cmake build llama-server -j$(nproc) $(date -u +%T)"
t0=$(date +%s)
cmake --build "$build" --target llama-server -j"$(nproc)" > "$build/cmake-build.log" 2>&1 || { tail -40 "$build/cmake-build.log"; exit 1; }
echo "build-llama-cuda: built in $(( $(date +%s) - t0 )) s: $("$build/bin/llama-server" --version 2>&1 | grep -m1 version)"
