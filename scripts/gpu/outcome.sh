# How the GPU recipe's scripts turn exit codes into outcomes (sourced by campaign.sh and device-run.sh; tested by
# test/unit/gpu-scripts.test.ts). Exit codes of campaign.sh and of one phase:
#   0  done
#   1  failed (a build, a model, a bench or a tune failed; see progress.log)
#   2  bad input (an unknown phase, a missing VOCAB or llama.cpp source): one line says what to set
#   3  stopped at the deadline (DEADLINE_EPOCH) with its results saved: a tune stopped by Ctrl-C (safe stop, its
#      completed trials in store.db) or a phase deferred; running the same phases again resumes them
# device-run.sh exits 0 on 0 and 3 (with a line saying which) and with the campaign's code on a failure.

# The code of a `timeout -s INT -k 45 ... spectune tune --json > TUNE_JSON` run (RC), as a phase outcome.
tune_outcome() {
  local rc=$1 json=$2
  if [ "$rc" -eq 0 ]; then echo 0; return; fi
  # 124: timeout sent Ctrl-C at the deadline; the tune then printed its interrupted campaign and exited 130.
  if [ "$rc" -eq 124 ] && node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.exit(d.status==="interrupted"?0:1)' "$json" 2>/dev/null; then
    echo 3; return
  fi
  echo 1
}

# Merge a phase's outcome into the run's: a failure (1, 2) outranks a deadline stop (3), which outranks done (0).
merge_outcome() {
  local cur=$1 new=$2
  rank() { case $1 in 0) echo 0 ;; 3) echo 1 ;; *) echo 2 ;; esac; }
  if [ "$(rank "$new")" -gt "$(rank "$cur")" ]; then echo "$new"; else echo "$cur"; fi
}

# device-run.sh's last line and exit code for the campaign's merged outcome RC (run N).
device_outcome() {
  local rc=$1 n=$2
  case $rc in
    0) echo "device-run $n: done"; return 0 ;;
    3) echo "device-run $n: stopped at its deadline with results saved (results-$n.tar.gz); run the same phases again to resume"; return 0 ;;
    *) echo "device-run $n: FAILED (campaign exit $rc; see log-$n.txt)"; return "$rc" ;;
  esac
}

# The vocab GGUF the models phase copies its tokenizer from; one line naming VOCAB when it is missing.
require_vocab() {
  [ -f "$1" ] && return 0
  echo "VOCAB: no vocab GGUF at ${1:-(empty)}: set VOCAB=/path/to/ggml-vocab-llama-spm.gguf (models/ of the source scripts/llamacpp/unpack-llama-src.sh unpacks, or /var/lib/spectune-llama/vocab/ after scripts/llamacpp/build-llama-server.sh)" >&2
  return 2
}

# The llama.cpp source tree the CUDA build compiles; one line naming LLAMA_SRC when it is missing.
require_llama_src() {
  [ -f "$1/CMakeLists.txt" ] && return 0
  echo "LLAMA_SRC: no llama.cpp source at ${1:-(empty)}: run scripts/llamacpp/unpack-llama-src.sh DIR and set LLAMA_SRC=DIR/llama.cpp (or LLAMA_SERVER=an existing CUDA llama-server)" >&2
  return 2
}
