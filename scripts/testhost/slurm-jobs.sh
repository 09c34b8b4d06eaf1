#!/bin/bash
# slurm-jobs.sh OUTDIR [CASE...] - run real jobs on the Slurm test cluster and keep what Slurm says about each,
# verbatim, in OUTDIR/<case>/: job.sh (the batch script), sbatch.txt (its options), job.out (the job's output file),
# sacct.txt (`sacct --parsable2`), scontrol.txt (`scontrol show job`), slurmctld.log and slurmd.log (the daemons'
# lines about the job, from the login and the batch host). Cases run in parallel; default: all.
#   completed     prints and exits 0                          -> COMPLETED 0:0
#   oom           --mem=100M, touches 600 MB                  -> OUT_OF_MEMORY (cgroup) or FAILED (OverMemoryKill)
#   cancel        a server that dies of SIGTERM, scancel      -> CANCELLED 0:15
#   cancel-drain  a server draining 30 s on SIGTERM, scancel  -> CANCELLED 0:9 (SIGKILL after KillWait)
#   timeout       -t 1, sleeps 300 s                          -> TIMEOUT
#   two-node      --nodes=2, srun hostname                    -> COMPLETED on two nodes
# Used by test/e2e/slurm-cluster.test.ts and, with OUTDIR=test/fixtures/slurm, to refresh the fixtures.
# Env: SPECTUNE_SLURM_ENV (default /var/lib/spectune-testhost/slurm.env, written by slurm-up.sh).
set -euo pipefail
ENV_FILE=${SPECTUNE_SLURM_ENV:-/var/lib/spectune-testhost/slurm.env}
OUT=${1:?usage: slurm-jobs.sh OUTDIR [CASE...]}; shift
[ -s "$ENV_FILE" ] || { echo "slurm-jobs: no $ENV_FILE: boot the cluster with sudo bash scripts/testhost/slurm-up.sh" >&2; exit 1; }
source "$ENV_FILE"
CASES=("$@"); [ ${#CASES[@]} -gt 0 ] || CASES=(completed oom cancel cancel-drain timeout two-node)
RUN=jobs-$(date +%s)-$$
DIR=$SPECTUNE_SLURM_SHARED/spectune-$RUN            # on the nodes
LOCAL=$SPECTUNE_SLURM_SHARED_LOCAL/spectune-$RUN    # the same directory on this machine
SACCT_FORMAT=JobID,JobName,Partition,State,ExitCode,DerivedExitCode,Elapsed,Timelimit,NodeList,ReqMem,MaxRSS,Start,End
log() { printf '[slurm-jobs %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
login() { ssh -F "$SPECTUNE_SLURM_SSH_CONFIG" "$SPECTUNE_SLURM_LOGIN" "$@"; }

# A long-running "server": prints ready, then on SIGTERM either exits at once or drains for 30 s.
server() {
    local on_term=$1
    cat <<EOT
#!/bin/bash
exec node -e '
console.log("server ready on " + require("os").hostname());
process.on("SIGTERM", () => { $on_term });
setInterval(() => {}, 1000);'
EOT
}

# case -> sbatch options (one line) and batch script
opts_of() {
    case "$1" in
        completed) echo "--mem=64M -t 5" ;;
        oom) echo "--mem=100M -t 5" ;;
        cancel|cancel-drain) echo "--mem=64M -t 5" ;;
        timeout) echo "--mem=64M -t 1" ;;
        two-node) echo "--nodes=2 --ntasks-per-node=1 --mem=64M -t 5" ;;
        *) echo "slurm-jobs: unknown case '$1' (cases: completed oom cancel cancel-drain timeout two-node)" >&2; return 1 ;;
    esac
}
script_of() {
    case "$1" in
        completed) printf '#!/bin/bash\necho "hello from $(hostname)"\nnode -p "require(\\"/opt/spectune/package.json\\").name"\n' ;;
        oom) printf '#!/bin/bash\nexec node -e %s\n' "'const a = []; for (let mb = 50; mb <= 600; mb += 50) { a.push(Buffer.alloc(50 * 1024 * 1024, 1)); console.log(\"touched \" + mb + \" MB\"); } setTimeout(() => console.log(\"still alive\"), 5000);'" ;;
        cancel) server 'console.log("SIGTERM: exiting"); process.removeAllListeners("SIGTERM"); process.kill(process.pid, "SIGTERM");' ;;
        cancel-drain) server 'console.log("SIGTERM: draining 16 requests"); setTimeout(() => process.exit(0), 30000);' ;;
        timeout) printf '#!/bin/bash\necho "sleeping 300 s on $(hostname)"\nsleep 300\n' ;;
        two-node) printf '#!/bin/bash\nsrun hostname | sort\n' ;;
    esac
}

terminal='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)'
job_state() { login scontrol show job "$1" -o | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }

# Submit one case, wait for it to end (cancelling where the case says so), keep the record.
run_case() {
    local c=$1 opts id state states batch out=$OUT/$1 t0=$SECONDS
    opts=$(opts_of "$c")
    mkdir -p "$out"
    script_of "$c" > "$out/job.sh"
    echo "sbatch --parsable -J spectune-$c -o $DIR/$c.out $opts" > "$out/sbatch.txt"
    id=$(login sbatch --parsable -J "spectune-$c" -o "$DIR/$c.out" $opts < "$out/job.sh")
    [[ $id =~ ^[0-9]+$ ]] || { log "$c: sbatch answered '$id', not a job id"; return 1; }
    log "$c: job $id"
    if [[ $c == cancel* ]]; then
        for _ in $(seq 120); do grep -q 'server ready' "$LOCAL/$c.out" 2>/dev/null && break; sleep 0.5; done
        grep -q 'server ready' "$LOCAL/$c.out" || { log "$c: job $id never printed ready"; return 1; }
        login scancel "$id"
    fi
    for _ in $(seq 300); do state=$(job_state "$id"); [[ $state =~ $terminal ]] && break; sleep 1; done
    [[ $state =~ $terminal ]] || { log "$c: job $id still $state after 300 s"; return 1; }
    # slurmdbd records the end a moment after slurmctld, and the batch step (cut at KillWait) after the job:
    # wait until sacct has the batch step and nothing in it is still running
    for _ in $(seq 60); do
        states=$(login sacct -n -P -j "$id" -o JobID,State)
        grep -q '^[0-9]*\.batch|' <<< "$states" && ! grep -qE '\|(RUNNING|PENDING|COMPLETING|REQUEUED|RESIZING|SUSPENDED)' <<< "$states" && break
        sleep 0.5
    done
    login sacct -j "$id" --parsable2 --format="$SACCT_FORMAT" > "$out/sacct.txt"
    login scontrol show job "$id" > "$out/scontrol.txt"
    # the daemons' own lines about this job: slurmctld on the login host, slurmd on the batch host
    # (ssh joins its arguments into one remote shell line: the patterns are single-quoted, $id is all digits)
    login "grep -E 'JobId=$id( |\$)' /var/log/slurm/slurmctld.log" > "$out/slurmctld.log" || true
    batch=$(sed -n 's/^ *BatchHost=\(sl[0-9]*\)$/\1/p' "$out/scontrol.txt")
    [ -z "$batch" ] || ssh -F "$SPECTUNE_SLURM_SSH_CONFIG" "$batch" \
        "grep -E '\[$id(\.[a-z0-9]+)?\]|job $id( |\$)' /var/log/slurm/slurmd.log" > "$out/slurmd.log" || true
    cp "$LOCAL/$c.out" "$out/job.out"
    log "$c: job $id $state after $((SECONDS - t0)) s"
}

mkdir -p "$OUT" "$LOCAL"; chmod 1777 "$LOCAL"
pids=()
for c in "${CASES[@]}"; do opts_of "$c" > /dev/null || exit 2; done
for c in "${CASES[@]}"; do run_case "$c" & pids+=($!); done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
rm -rf --one-file-system "$LOCAL"
exit $rc
