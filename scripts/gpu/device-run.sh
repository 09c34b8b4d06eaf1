#!/bin/bash
# How the committed campaign (docs/gpu/) was run on a leased GPU machine that has no network, no Node and no systemd:
# the repository travels as a bundle (.gpu/ of the checkout: node.xz, llama-src.tar.xz, spectune.tar.xz, made by
# scripts/gpu/make-bundle.sh), is unpacked into /tmp, and campaign.sh runs the phases given. Everything the run
# writes is snapshotted into $OUT every 20 s (results-N.tar.gz, log-N.txt), so a run cut off by its time limit still
# returns what it measured. The CUDA build stays in /tmp/spectune-gpu for a second run on the same (warm) machine; it
# is also returned (llama-server.xz.part-*) so that a fresh machine can skip the build (.gpu/llama-server.xz.part-*).
# A deadline (BUDGET_S, default 500 s after the start) stops the campaign in time for the snapshot; a run on a fresh
# machine restores the last results from .gpu/results-prev.tar.gz and resumes what was interrupted.
# Exit: 0 when every phase is done, and also when the deadline stopped it with its results saved (the last line says
# "stopped at its deadline with results saved": run the same phases again to resume); otherwise campaign.sh's code
# (1 failed, 2 bad input; scripts/gpu/outcome.sh).
# Usage (from the checkout's root): [BUDGET_S=500] bash .gpu/device-run.sh N PHASE...
set -u
export DEADLINE_EPOCH=$(( $(date +%s) + ${BUDGET_S:-500} ))
N=$1; shift
: "${OUT:?OUT must name the folder whose files come back}"
BUNDLE=$(pwd)/.gpu
mkdir -p /tmp/nodebin /tmp/st
[ -x /tmp/nodebin/node ] || { xz -dc "$BUNDLE/node.xz" > /tmp/nodebin/node && chmod +x /tmp/nodebin/node; }
[ -d /tmp/llama.cpp ] || tar -xJf "$BUNDLE/llama-src.tar.xz" -C /tmp
mkdir -p /tmp/llama.cpp/models && cp "$BUNDLE/vocab.gguf" /tmp/llama.cpp/models/ggml-vocab-llama-spm.gguf
rm -rf /tmp/st && mkdir -p /tmp/st && tar -xJf "$BUNDLE/spectune.tar.xz" -C /tmp/st
. /tmp/st/scripts/gpu/outcome.sh
export PATH=/tmp/nodebin:/usr/local/cuda/bin:$PATH RESULTS=/tmp/gpu-results WORK=/tmp/spectune-gpu LLAMA_SRC=/tmp/llama.cpp
export VOCAB=/tmp/llama.cpp/models/ggml-vocab-llama-spm.gguf
[ -d "$RESULTS" ] || { [ -f "$BUNDLE/results-prev.tar.gz" ] && tar -xzf "$BUNDLE/results-prev.tar.gz" -C /tmp && echo "restored results from results-prev.tar.gz"; }
mkdir -p "$WORK/llama-build/bin" "$RESULTS"
if [ ! -x "$WORK/llama-build/bin/llama-server" ] && ls "$BUNDLE"/llama-server.xz.part-* >/dev/null 2>&1; then
  cat "$BUNDLE"/llama-server.xz.part-* | xz -dc > "$WORK/llama-build/bin/llama-server" && chmod +x "$WORK/llama-build/bin/llama-server"
fi
snapshot() { tar -czf "$OUT/results-$N.tar.gz.tmp" -C /tmp gpu-results 2>/dev/null && mv "$OUT/results-$N.tar.gz.tmp" "$OUT/results-$N.tar.gz"; }
save_bin() {
  local bin=$WORK/llama-build/bin/llama-server
  if [ -x "$bin" ] && [ ! -f "$WORK/llama-server.returned" ] && [ ! -f "$BUNDLE/llama-server.xz.part-aa" ]; then
    xz -T0 -6 -c "$bin" | split -b 15m - "$OUT/llama-server.xz.part-" && touch "$WORK/llama-server.returned"
  fi
}
( while :; do sleep 20; snapshot; done ) & snap=$!
echo "device-run $N: $(nvidia-smi -L 2>&1 | head -1); node $(node --version); phases $*"
rc=0
for ph in "$@"; do
  bash /tmp/st/scripts/gpu/campaign.sh "$ph" 2>&1 | tee -a "$OUT/log-$N.txt"
  r=${PIPESTATUS[0]}; rc=$(merge_outcome "$rc" "$r")
  save_bin
done
kill $snap 2>/dev/null; snapshot
ls -la "$OUT"
device_outcome "$rc" "$N" | tee -a "$OUT/log-$N.txt"
exit "${PIPESTATUS[0]}"
