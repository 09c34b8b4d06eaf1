#!/bin/bash
# slurm-up.sh - boot the spectune Slurm test cluster: a real Slurm 22.05 (Debian bookworm) on three test hosts
# of its own, booted like th1..th3 (systemd-nspawn, overlay over a cached debootstrapped rootfs) but on one bridge
# so that the nodes reach each other:
#   sl1  login + controller: slurmctld, slurmdbd + MariaDB (so sacct works), and slurmd (a compute node too)
#   sl2, sl3  slurmd
# One munge key, memory requests enforced (see SLURM_MEM_ENFORCE), KillWait 5 s, MinJobAge 1 h.
# Writes $SPECTUNE_SLURM_ENV (default /var/lib/spectune-testhost/slurm.env) and slurm.json next to it.
# Leftovers of a previous run are torn down first. Never touches th1..th3 (own base dir, own cgroups/netns names).
# Env: SPECTUNE_SLURM_DIR (/var/lib/spectune-slurm), SPECTUNE_SLURM_ENV, SLURM_REUSE=1 (keep a cluster that answers),
#      SLURM_SUBNET (10.250.90: this machine .1, node N at .1N), SLURM_NODE_NAMES ("sl1 sl2 sl3"), SLURM_BRIDGE
#      (br-st-slurm; names, bridge, subnet and dirs set apart let a second cluster run beside), SLURM_MEM_ENFORCE (cgroup: OUT_OF_MEMORY via the
#      node's memory cgroup | overmemorykill: FAILED via jobacct polling), SLURM_NODE_MEM_MB (3000 per node),
#      TESTHOST_MIRROR, TESTHOST_REBUILD (see build-rootfs.sh).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
export SPECTUNE_TESTHOST_DIR=${SPECTUNE_SLURM_DIR:-/var/lib/spectune-slurm}
SL_ENV_FILE=${SPECTUNE_SLURM_ENV:-/var/lib/spectune-testhost/slurm.env}
unset SPECTUNE_TESTHOSTS_ENV   # th1..th3's env file is not ours to write or delete
source "$HERE/slurm-common.sh"
th_check_base
for n in "${SL_NAMES[@]}"; do th_check_name "$n"; done
[[ "$SL_BRIDGE" =~ ^[a-z][a-z0-9-]{0,14}$ ]] || th_die "SLURM_BRIDGE '$SL_BRIDGE' must match ^[a-z][a-z0-9-]{0,14}\$"
[[ "$SL_SUBNET" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || th_die "SLURM_SUBNET '$SL_SUBNET' must be three octets, e.g. 10.250.90"
T_START=$(th_now)


ssh_sl() { ssh -F "$TH_SSHDIR/config" "$@"; }

cluster_answers() {
    [ -s "$SL_ENV_FILE" ] && [ -s "$TH_SSHDIR/config" ] \
        && [ "$(ssh_sl -o ConnectTimeout=2 "${SL_NAMES[0]}" "sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle'" 2>/dev/null)" = "${#SL_NAMES[@]}" ]
}

# The bridge on this machine: the nodes' segment, this machine at .1 (so node IPs are routable from here).
setup_bridge() {
    ip link add "$SL_BRIDGE" type bridge
    ip addr add "$SL_HOST_IP/24" dev "$SL_BRIDGE"
    ip link set "$SL_BRIDGE" up
}

boot_all() {
    local i=0 n pids=() failed=0 layer extra=""
    install -d -m 1777 "$SL_SHARED_DIR"
    for n in "${SL_NAMES[@]}"; do i=$((i + 1)); extra+="$(sl_ip "$i")"$'\t'"$n"$'\n'; done
    i=0
    for n in "${SL_NAMES[@]}"; do
        i=$((i + 1)); layer=$SL_LAYER_COMMON
        [ "$i" = 1 ] || layer=$SL_LAYER_COMPUTE:$SL_LAYER_COMMON
        TESTHOST_MEMCG=1 TESTHOST_MEMCG_LIMIT=$SL_HOST_MEM_LIMIT TESTHOST_BRIDGE=$SL_BRIDGE TESTHOST_IP=$(sl_ip "$i") \
            TESTHOST_HOST_IP=$SL_HOST_IP TESTHOST_PREFIXLEN=24 TESTHOST_LAYER=$layer \
            TESTHOST_EXTRA_BINDS="--bind=$SL_SHARED_DIR:$SL_SHARED" \
            TESTHOST_EXTRA_HOSTS="$(printf '%s' "$extra" | grep -v $'\t'"$n\$")" \
            "$HERE/up-host.sh" "$n" "$((SL_INDEX_BASE + i))" & pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    [ $failed = 0 ] || th_die "at least one Slurm node failed to boot"
}

# Slurm is ready when every node is idle in sinfo and the cluster is registered in slurmdbd (sacct works).
wait_for_slurm() {
    local t0 out="" want=${#SL_NAMES[@]} login=${SL_NAMES[0]} deadline=$((SECONDS + SL_READY_TIMEOUT))
    t0=$(th_now)
    while [ $SECONDS -lt $deadline ]; do
        out=$(ssh_sl "$login" "sinfo -h -N -o '%N %T' | sort -u | grep -c ' idle\$'; sacctmgr -n -P list cluster format=cluster" 2>/dev/null | tr '\n' ' ' || true)
        [ "$out" = "$want $SL_CLUSTER " ] && break
        sleep 0.5
    done
    [ "$out" = "$want $SL_CLUSTER " ] || {
        ssh_sl "$login" 'sinfo -N; systemctl --no-pager --failed; tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmdbd.log' >&2 || true
        th_die "Slurm not ready after ${SL_READY_TIMEOUT}s (idle nodes + cluster: '$out', want '$want $SL_CLUSTER')"
    }
    th_log "Slurm ready: $want idle nodes, cluster $SL_CLUSTER in slurmdbd, after $(th_elapsed "$t0")s"
}

# slurm.env for shell scripts, slurm.json for the tests (test/e2e/helpers/slurmcluster.ts).
write_cluster_files() {
    local i=0 n up env json="" pids=""
    env="# written by scripts/testhost/slurm-up.sh at $(date -u +%FT%TZ)
SPECTUNE_SLURM_LOGIN=${SL_NAMES[0]}
SPECTUNE_SLURM_SSH_CONFIG=$TH_SSHDIR/config
SPECTUNE_SLURM_SSH_KEY=$TH_SSHDIR/id_ed25519
SPECTUNE_SLURM_KNOWN_HOSTS=$TH_SSHDIR/known_hosts
SPECTUNE_SLURM_NODES=\"${SL_NAMES[*]}\"
SPECTUNE_SLURM_PARTITION=$SL_PARTITION
SPECTUNE_SLURM_CLUSTER=$SL_CLUSTER
SPECTUNE_SLURM_KILLWAIT=$SL_KILLWAIT
SPECTUNE_SLURM_MIN_JOB_AGE=$SL_MIN_JOB_AGE
SPECTUNE_SLURM_NODE_MEM_MB=$SL_NODE_MEM_MB
SPECTUNE_SLURM_NODE_CPUS=$SL_NODE_CPUS
SPECTUNE_SLURM_MEM_ENFORCE=$SL_MEM_ENFORCE
SPECTUNE_SLURM_HOST_IP=$SL_HOST_IP
SPECTUNE_SLURM_SHARED=$SL_SHARED
SPECTUNE_SLURM_SHARED_LOCAL=$SL_SHARED_DIR
SPECTUNE_SLURM_JSON=$SL_JSON_FILE
"
    for n in "${SL_NAMES[@]}"; do
        i=$((i + 1)); th_names "$n"; up=${n^^}
        env+=$(source "$TH_DIR/host.env"; printf '%s_IP=%s\n%s_PID=%s' "$up" "$IP" "$up" "$PID")$'\n'
        json+=$(source "$TH_DIR/host.env"; printf '%s{"name":"%s","ip":"%s","pid":%s}' "${json:+,}" "$n" "$IP" "$PID")
        pids+="${pids:+,}$(source "$TH_DIR/host.env"; echo "$PID")"
    done
    mkdir -p "$(dirname "$SL_ENV_FILE")"
    printf '%s' "$env" > "$SL_ENV_FILE.tmp" && mv "$SL_ENV_FILE.tmp" "$SL_ENV_FILE"
    printf '{"login":"%s","sshConfig":"%s","sshKey":"%s","knownHosts":"%s","partition":"%s","cluster":"%s","killWait":%s,"minJobAge":%s,"nodeMemMb":%s,"nodeCpus":%s,"memEnforce":"%s","hostIp":"%s","shared":"%s","sharedLocal":"%s","nodes":[%s]}\n' \
        "${SL_NAMES[0]}" "$TH_SSHDIR/config" "$TH_SSHDIR/id_ed25519" "$TH_SSHDIR/known_hosts" "$SL_PARTITION" "$SL_CLUSTER" \
        "$SL_KILLWAIT" "$SL_MIN_JOB_AGE" "$SL_NODE_MEM_MB" "$SL_NODE_CPUS" "$SL_MEM_ENFORCE" "$SL_HOST_IP" "$SL_SHARED" "$SL_SHARED_DIR" "$json" > "$SL_JSON_FILE.tmp"
    mv "$SL_JSON_FILE.tmp" "$SL_JSON_FILE"
}

if [ "${SLURM_REUSE:-0}" = 1 ] && cluster_answers; then
    th_log "SLURM_REUSE=1 and the Slurm cluster answers: keeping it"; exit 0
fi
trap 'rc=$?; if [ $rc -ne 0 ]; then th_log "slurm-up failed (rc=$rc): tearing down"; "$HERE/slurm-down.sh" || true; fi' EXIT
"$HERE/slurm-down.sh" --quiet-if-clean
T_BUILD=$(th_now)
TESTHOST_PACKAGES=$SL_PACKAGES "$HERE/build-rootfs.sh"
"$HERE/slurm-layers.sh"
th_log "rootfs + Slurm config layers ready in $(th_elapsed "$T_BUILD")s"
# Client side: own key, known_hosts and config with a block per node (the login host is sl1).
th_write_ssh_client_files sl_ip "${SL_NAMES[@]}"
setup_bridge
T_BOOT=$(th_now)
boot_all
th_log "all ${#SL_NAMES[@]} Slurm nodes ssh-ready in $(th_elapsed "$T_BOOT")s"
wait_for_slurm
write_cluster_files
th_log "ready in $(th_elapsed "$T_START")s: ssh -F $TH_SSHDIR/config ${SL_NAMES[0]} sinfo | env: $SL_ENV_FILE | down: $HERE/slurm-down.sh"
