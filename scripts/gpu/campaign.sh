#!/bin/bash
# spectune on a real GPU, end to end: build llama-server with CUDA, generate a good and a poor target/draft pair,
# measure the target without speculation, tune --spec-draft-n-max under spectune's process manager (adaptive and
# grid), capture real GPU failures, and write everything into one results folder.
#
# Usage: scripts/gpu/campaign.sh [PHASE...]     (default: all phases in order)
#   phases: prepare (= build, models and fixtures-torch at once) build models fixtures-torch fixtures-llama nospec
#           good-adaptive good-grid poor-adaptive report
# Environment (all optional):
#   RESULTS      results folder (default ./gpu-results)          WORK   scratch: build, models (default /tmp/spectune-gpu)
#   LLAMA_SRC    unpacked llama.cpp source (default $WORK/llama.cpp: scripts/llamacpp/unpack-llama-src.sh $WORK)
#   LLAMA_SERVER an existing llama-server binary (skips the build)  CUDA_ARCH  e.g. 90 (default: from nvidia-smi)
#   VOCAB        llama-spm vocab GGUF (default $LLAMA_SRC/models/ggml-vocab-llama-spm.gguf); needed by models
#   LAYERS       target layers (default 16: 7.2 GB f16 at 7B width)   POOR_SCALE  dead-layer scale of the poor pair (0.05)
#   REQS         requests per concurrency level (default 12,48,96,192)   FLOORS  constraints, e.g. 16:0.9,64:0.8 (output
#                tok/s at concurrency 16 >= 90 % and at 64 >= 80 % of the target without speculation)
#   TINY=1       a CPU smoke run: small models, -ngl 0, concurrency 1,2, few requests (checks the recipe, not the GPU)
#   SPECTUNE     how to run spectune (default: node <repo>/bin/spectune.js)
#   DEADLINE_EPOCH  stop by this time (epoch s): a phase that cannot start a minute before it is deferred, and a
#                tune still running then is stopped with Ctrl-C (safe stop); the next run resumes it (--resume).
# Phases already done (build, models, fixture logs, nospec.json, a finished tune) are skipped on a re-run.
# Exit: 0 done, 1 failed, 2 bad input (one line names the variable to set), 3 stopped at the deadline with results
# saved (a re-run resumes); see outcome.sh.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/outcome.sh"
RESULTS=$(mkdir -p "${RESULTS:-./gpu-results}" && cd "${RESULTS:-./gpu-results}" && pwd)
WORK=${WORK:-/tmp/spectune-gpu}; mkdir -p "$WORK"
LLAMA_SRC=${LLAMA_SRC:-$WORK/llama.cpp}
VOCAB=${VOCAB:-$LLAMA_SRC/models/ggml-vocab-llama-spm.gguf}
SPECTUNE=${SPECTUNE:-node $REPO/bin/spectune.js}
TINY=${TINY:-0}
if [ "$TINY" = 1 ]; then
  LAYERS=${LAYERS:-2}; SHAPE="--embd 256 --heads 4 --ff 768 --ctx 2048"; NGL=0; CTX=4096; NP=2; CONC=1,2; REQS=2,2
  OUT_TOK=16; IN_TOK=64; VALUES=1,4; START=1; EXTRA="--threads 2"
else
  LAYERS=${LAYERS:-16}; SHAPE="--embd 4096 --heads 32 --ff 11008 --ctx 8192"; NGL=99; CTX=65536; NP=64; CONC=1,4,16,64
  REQS=${REQS:-12,48,96,192}; OUT_TOK=128; IN_TOK=256; VALUES=1,2,4,8,16; START=4; EXTRA=""
fi
MODELS=$WORK/models
LLAMA_SERVER=${LLAMA_SERVER:-$WORK/llama-build/bin/llama-server}
export SPECTUNE_READER_RT=${SPECTUNE_READER_RT:-1}

remaining() { [ -n "${DEADLINE_EPOCH:-}" ] && echo $(( DEADLINE_EPOCH - $(date +%s) )) || echo 999999; }
say() { echo "[campaign $(date -u +%T)] $*" | tee -a "$RESULTS/progress.log" >&2; }
have_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }

# GPU memory in use, sampled every 500 ms for the whole run (joined to trials by time in the summary).
start_gpu_sampler() {
  have_gpu || return 0
  [ -f "$RESULTS/gpu-mem.pid" ] && kill -0 "$(cat "$RESULTS/gpu-mem.pid")" 2>/dev/null && return 0
  ( while :; do echo "$(date +%s.%N | cut -c1-14),$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)"; sleep 0.5; done ) >> "$RESULTS/gpu-mem.csv" &
  echo $! > "$RESULTS/gpu-mem.pid"
}
stop_gpu_sampler() { [ -f "$RESULTS/gpu-mem.pid" ] && kill "$(cat "$RESULTS/gpu-mem.pid")" 2>/dev/null; rm -f "$RESULTS/gpu-mem.pid"; }

phase_build() {
  if [ -x "$LLAMA_SERVER" ]; then say "build: using $LLAMA_SERVER"; return 0; fi
  say "build: llama-server with CUDA from $LLAMA_SRC"
  bash "$HERE/build-llama-cuda.sh" "$LLAMA_SRC" "$WORK/llama-build" ${CUDA_ARCH:-} 2>&1 | tee -a "$RESULTS/build.log" >&2
  cp "$WORK/llama-build/cmake-configure.log" "$RESULTS/cmake-configure.log" 2>/dev/null
  [ -x "$LLAMA_SERVER" ] || { say "build FAILED (see build.log)"; return 1; }
}

phase_models() {
  say "models: ${LAYERS}-layer targets (good, poor scale ${POOR_SCALE:-0.05}) and a 1-layer draft in $MODELS"
  local pids=()
  for kind in good poor draft; do
    node "$HERE/make-pairs.mjs" --out "$MODELS" --vocab "$VOCAB" --layers "$LAYERS" --poor-scale "${POOR_SCALE:-0.05}" $SHAPE --only $kind >> "$RESULTS/models.jsonl" &
    pids+=($!)
  done
  local rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
  say "models: done ($(ls -la "$MODELS" | awk '/gguf$/{printf "%s %.2f GB; ", $NF, $5/1e9}'))"
  return $rc
}

# Each real-gpu-* fixture folder holds the script that produced it; it writes engine.log into the folder given.
# KIND: py (PyTorch failures; need only the GPU) or sh (llama-server failures; need the build and the models).
phase_fixtures() {
  [ "$TINY" = 1 ] && { say "fixtures: skipped in TINY mode (they need a GPU)"; return 0; }
  mkdir -p "$RESULTS/fixtures"
  for f in "$REPO"/test/fixtures/journal/*/real-gpu-*/produce.$1; do
    local name; name=$(basename "$(dirname "$f")"); local out="$RESULTS/fixtures/$name"; mkdir -p "$out"
    [ -s "$out/engine.log" ] && continue
    say "fixture $name"
    LLAMA_SERVER=$LLAMA_SERVER MODELS=$MODELS LAYERS=$LAYERS timeout 120 \
      $( [ "${f##*.}" = py ] && echo python3 || echo bash ) "$f" "$out" > "$out/produce.out" 2>&1
    echo "exit $?" >> "$out/produce.out"
  done
}

# Wait for llama-server's /health on a port (or for it to die).
wait_health() {
  local port=$1 pid=$2 i
  for i in $(seq 1 600); do
    node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "http://127.0.0.1:$port/health" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}

# The target without speculation: the reference every speculative config is compared with.
phase_nospec() {
  local port=8090 log="$RESULTS/nospec-server.log"
  grep -q '"runs":\[{' "$RESULTS/nospec.json" 2>/dev/null && { say "nospec: done before"; return 0; }
  say "nospec: target without a draft, bench at concurrency $CONC"
  "$LLAMA_SERVER" -m "$MODELS/target-${LAYERS}L-good.gguf" -ngl $NGL -c $CTX -np $NP $EXTRA --host 127.0.0.1 --port $port --metrics > "$log" 2>&1 &
  local pid=$!
  if ! wait_health $port $pid; then say "nospec: server did not become healthy (see nospec-server.log)"; kill $pid 2>/dev/null; return 1; fi
  have_gpu && echo "nospec,$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)" >> "$RESULTS/gpu-mem-configs.csv"
  $SPECTUNE bench --url "http://127.0.0.1:$port" --engine llamacpp --concurrency "$CONC" --requests "$REQS" \
    --input-tokens $IN_TOK --output-tokens $OUT_TOK --warmup 2 --json > "$RESULTS/nospec.json" 2> "$RESULTS/nospec-bench.log"
  local rc=$?
  kill $pid; wait $pid 2>/dev/null
  say "nospec: $(node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(d.runs.map(r=>`c=${r.concurrency} ${r.outputTokensPerSec} tok/s`).join(", "))' "$RESULTS/nospec.json" 2>/dev/null)"
  return $rc
}

# One tuning campaign: NAME PAIR STRATEGY PORT METRICS
run_tune() {
  local name=$1 pair=$2 strategy=$3 port=$4 metrics=$5 dir="$RESULTS/$1"
  mkdir -p "$dir"
  local floor=(); [ -f "$RESULTS/nospec.json" ] && floor=(--nospec "$RESULTS/nospec.json" --floors "${FLOORS:-16:0.9,64:0.8}")
  local envs=(); [ -n "${LD_LIBRARY_PATH:-}" ] && envs=(--env "LD_LIBRARY_PATH=$LD_LIBRARY_PATH")
  node "$HERE/write-campaign.mjs" --dir "$dir" --name "$name" --server "$LLAMA_SERVER" --target "$MODELS/target-${LAYERS}L-$pair.gguf" \
    --draft "$MODELS/draft-1L.gguf" --port "$port" --strategy "$strategy" --values "$VALUES" --start "$START" --ngl $NGL --ctx $CTX \
    --parallel $NP --concurrency "$CONC" --requests "$REQS" --input-tokens $IN_TOK --output-tokens $OUT_TOK --metrics "$metrics" \
    ${EXTRA:+--threads 2} "${floor[@]}" "${envs[@]}" >> "$RESULTS/progress.log"
  local resume=()
  if grep -q '"status":"done"\|"status":"no-winner"' "$dir/tune.json" 2>/dev/null; then say "tune $name: done before"; return 0; fi
  [ -f "$dir/store.db" ] && resume=(--resume)
  say "tune $name: $pair pair, $strategy search over spec_draft_n_max $VALUES (start $START) ${resume[*]}, results in $dir"
  local t0; t0=$(date +%s)
  (cd "$dir" && SPECTUNE_ACTION_LOG="$dir/actions.jsonl" timeout -s INT -k 45 "$(remaining)" $SPECTUNE tune -c spectune.yaml --json "${resume[@]}" > tune.json 2>> tune.ndjson)
  local rc=$?
  say "tune $name: exit $rc after $(( $(date +%s) - t0 )) s: $(tail -c 400 "$dir/tune.json" | tr -d '\n' | cut -c1-300)"
  cp "$dir/procman/procman/journal.jsonl" "$dir/journal.jsonl" 2>/dev/null
  local outcome; outcome=$(tune_outcome $rc "$dir/tune.json")
  [ "$outcome" = 3 ] && say "tune $name: stopped at its deadline with results saved ($dir/store.db); run this phase again to resume it"
  return "$outcome"
}

phase_report() {
  for d in "$RESULTS"/*/store.db; do
    local dir; dir=$(dirname "$d")
    $SPECTUNE report --db "$d" --html "$dir/report.html" --md "$dir/report.md" 2>> "$RESULTS/progress.log" && say "report: $dir/report.html"
  done
  node "$HERE/summarize.mjs" "$RESULTS" > /dev/null 2>> "$RESULTS/progress.log" && say "summary: $RESULTS/summary.md"
}

phases=("$@"); [ ${#phases[@]} -eq 0 ] && phases=(prepare fixtures-llama nospec good-adaptive good-grid poor-adaptive report)
# Inputs the phases need, checked before any phase runs: one line naming what to set.
for ph in "${phases[@]}"; do
  case $ph in
    models|prepare) [ -f "$MODELS/draft-1L.gguf" ] && [ -f "$MODELS/target-${LAYERS}L-good.gguf" ] && [ -f "$MODELS/target-${LAYERS}L-poor.gguf" ] || require_vocab "$VOCAB" || exit 2 ;;
  esac
  case $ph in
    build|prepare) [ -x "$LLAMA_SERVER" ] || require_llama_src "$LLAMA_SRC" || exit 2 ;;
  esac
done
trap stop_gpu_sampler EXIT
start_gpu_sampler
say "start: phases ${phases[*]} (TINY=$TINY, layers $LAYERS, results $RESULTS)"
have_gpu && nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv > "$RESULTS/gpu.csv" 2>/dev/null
status=0
for ph in "${phases[@]}"; do
  if [ "$(remaining)" -lt 60 ] && [ "$ph" != report ]; then say "phase $ph deferred: $(remaining) s left before the deadline"; status=$(merge_outcome $status 3); continue; fi
  r=0
  case $ph in
    build) phase_build || r=1 ;;
    models) phase_models || r=1 ;;
    prepare)
      fx=""; [ "${SKIP_FIXTURES:-0}" = 1 ] || { phase_fixtures py > "$RESULTS/fixtures-torch.log" 2>&1 & fx=$!; }
      phase_models & mp=$!
      phase_build || r=1
      wait $mp || r=1; [ -n "$fx" ] && wait $fx ;;
    fixtures-torch) phase_fixtures py ;;
    fixtures-llama) phase_fixtures sh ;;
    nospec) phase_nospec || r=1 ;;
    good-adaptive) run_tune good-adaptive good adaptive 8081 on; r=$? ;;
    good-grid) run_tune good-grid good grid 8083 on; r=$? ;;
    poor-adaptive) run_tune poor-adaptive poor adaptive 8082 off; r=$? ;;
    report) phase_report ;;
    *) say "unknown phase $ph"; r=2 ;;
  esac
  status=$(merge_outcome $status $r)
done
say "end: status $status"
exit $status
