#!/bin/bash
# up-host.sh NAME INDEX - boot one test host from the shared rootfs (build-rootfs.sh must have run): its own
# overlay upper dir, network namespace + veth (/29), cgroups, host key; then wait until ssh answers.
# Env: TESTHOST_MEMCG=1 (own writable memory cgroup, so MemoryMax= is enforced), TESTHOST_MEMCG_LIMIT (4G),
#      TESTHOST_BOOT_TIMEOUT (90 s), TESTHOST_SSH_CONFIG (the ssh config with a block for NAME; default the shared
#      one up-all.sh writes), TESTHOST_KEEP_DISK=1 (boot again on the overlay upper dir and network kept from the
#      last boot: what reboot-host.sh does; the host must be down but not torn down).
#      Used by slurm-up.sh (defaults keep th1..th3 as they are): TESTHOST_BRIDGE (attach the veth to this bridge
#      instead of a /29 of its own), TESTHOST_IP/TESTHOST_HOST_IP/TESTHOST_PREFIXLEN (addresses on that bridge),
#      TESTHOST_LAYER (a directory stacked over the shared rootfs: extra packages), TESTHOST_EXTRA_HOSTS
#      (lines appended to /etc/hosts), TESTHOST_EXTRA_BINDS (more nspawn --bind/--bind-ro arguments).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/common.sh"
th_check_base
NAME=${1:?usage: up-host.sh NAME INDEX}; INDEX=${2:?usage: up-host.sh NAME INDEX}
th_check_name "$NAME"; [[ "$INDEX" =~ ^[1-9][0-9]?$ ]] || th_die "INDEX must be 1..99"
th_names "$NAME"
SUBNET=$(th_subnet "$INDEX"); HOST_IP=${TESTHOST_HOST_IP:-$SUBNET.1}; CT_IP=${TESTHOST_IP:-$SUBNET.2}
PREFIXLEN=${TESTHOST_PREFIXLEN:-$TH_PREFIXLEN}; BRIDGE=${TESTHOST_BRIDGE:-}
LOWER=$TH_ROOTFS; [ -z "${TESTHOST_LAYER:-}" ] || LOWER=$TESTHOST_LAYER:$TH_ROOTFS
MEMCG=${TESTHOST_MEMCG:-0}; MEMCG_LIMIT=${TESTHOST_MEMCG_LIMIT:-4G}
BOOT_TIMEOUT=${TESTHOST_BOOT_TIMEOUT:-90}
SSH_CONFIG=${TESTHOST_SSH_CONFIG:-$TH_SSHDIR/config}
KEEP_DISK=${TESTHOST_KEEP_DISK:-0}
log() { th_log "$NAME: $*"; }
[ -f "$TH_ROOTFS/.spectune-testhost-built" ] || th_die "no rootfs: run build-rootfs.sh first"

trap 'rc=$?; if [ $rc -ne 0 ]; then log "boot failed (rc=$rc), tearing down"; "$HERE/down-host.sh" "$NAME" || true; fi' EXIT
if [ "$KEEP_DISK" = 1 ]; then
    [ -d "$TH_DIR/upper" ] || th_die "TESTHOST_KEEP_DISK=1: $NAME has no disk to keep ($TH_DIR/upper)"
    if [ -s "$TH_DIR/nspawn.pid" ] && kill -0 "$(cat "$TH_DIR/nspawn.pid")" 2>/dev/null; then th_die "TESTHOST_KEEP_DISK=1: $NAME is still running"; fi
elif [ -s "$TH_DIR/nspawn.pid" ] || ip netns list 2>/dev/null | grep -qE "^$TH_NETNS( |$)" || ip link show "$TH_VETH" >/dev/null 2>&1; then
    log "leftovers of a previous run found, tearing them down first"
    "$HERE/down-host.sh" "$NAME" || th_die "down-host.sh $NAME failed"
fi
mkdir -p "$TH_DIR/keys"
echo $$ > "$TH_DIR/up-host.pid"   # so down-host.sh can stop a boot orphaned by a SIGKILLed up-all.sh
echo "INDEX=$INDEX MEMCG=$MEMCG" > "$TH_DIR/host.conf"

# Per-host files go into a fresh overlay upper dir; the shared rootfs is never written to by a host.
prepare_overlay() {
    local u=$TH_DIR/upper
    if [ "$KEEP_DISK" = 1 ]; then rm -rf --one-file-system "$TH_DIR/work"; mkdir -p "$TH_DIR/work" "$TH_DIR/merged"; return 0; fi
    rm -rf --one-file-system "$TH_DIR/upper" "$TH_DIR/work"
    mkdir -p "$u/etc/ssh" "$TH_DIR/work" "$TH_DIR/merged"
    mountpoint -q "$TH_DIR/merged" && th_die "$TH_DIR/merged is mounted in the host namespace: run down-all.sh"
    [ -f "$TH_DIR/keys/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "$NAME" -f "$TH_DIR/keys/ssh_host_ed25519_key"
    install -m 600 "$TH_DIR/keys/ssh_host_ed25519_key" "$u/etc/ssh/ssh_host_ed25519_key"
    install -m 644 "$TH_DIR/keys/ssh_host_ed25519_key.pub" "$u/etc/ssh/ssh_host_ed25519_key.pub"
    [ -s "$TH_DIR/keys/machine-id" ] || tr -d '-' < /proc/sys/kernel/random/uuid > "$TH_DIR/keys/machine-id"
    cp "$TH_DIR/keys/machine-id" "$u/etc/machine-id"
    echo "$NAME" > "$u/etc/hostname"
    # a bridged host is known to its peers (and to itself) by its bridge address, not 127.0.1.1
    local self=127.0.1.1; [ -z "$BRIDGE" ] || self=$CT_IP
    printf '127.0.0.1\tlocalhost\n%s\t%s\n%s\t%s-host\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        "$self" "$NAME" "$HOST_IP" "$NAME" > "$u/etc/hosts"
    [ -z "${TESTHOST_EXTRA_HOSTS:-}" ] || printf '%s\n' "$TESTHOST_EXTRA_HOSTS" >> "$u/etc/hosts"
}

# Private netns + veth; no default route, no forwarding: the host can only talk to this machine
# (and, with TESTHOST_BRIDGE, to the other hosts on that bridge).
setup_network() {
    if [ "$KEEP_DISK" = 1 ] && ip netns list | grep -qE "^$TH_NETNS( |$)" && ip link show "$TH_VETH" >/dev/null 2>&1; then return 0; fi
    [ -e /run/netns ] || touch "$TH_DIR/created-run-netns"
    ip netns add "$TH_NETNS"
    ip link add "$TH_VETH" type veth peer name eth0 netns "$TH_NETNS"
    if [ -n "$BRIDGE" ]; then ip link set "$TH_VETH" master "$BRIDGE"; else ip addr add "$HOST_IP/$PREFIXLEN" dev "$TH_VETH"; fi
    ip link set "$TH_VETH" up
    ip -n "$TH_NETNS" link set lo up
    ip -n "$TH_NETNS" addr add "$CT_IP/$PREFIXLEN" dev eth0
    ip -n "$TH_NETNS" link set eth0 up
}

# Cgroups this script owns; down-host.sh only ever kills processes found inside them.
setup_cgroups() {
    CG_DIRS=()
    local h
    for h in unified systemd; do
        mountpoint -q "/sys/fs/cgroup/$h" && CG_DIRS+=("/sys/fs/cgroup/$h/$TH_CGNAME")
    done
    if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then CG_DIRS=("/sys/fs/cgroup/$TH_CGNAME"); fi
    [ ${#CG_DIRS[@]} -gt 0 ] || th_die "no usable cgroup hierarchy found"
    INIT_ARGS="--boot"
    if [ "$MEMCG" = 1 ]; then
        [ "$(stat -f -c %T /sys/fs/cgroup/memory 2>/dev/null)" = cgroupfs ] || th_die "TESTHOST_MEMCG=1 needs a cgroup-v1 memory hierarchy"
        CG_DIRS+=("/sys/fs/cgroup/memory/$TH_CGNAME")
        INIT_ARGS=/usr/local/sbin/spectune-testhost-init
    fi
    for h in "${CG_DIRS[@]}"; do mkdir -p "$h"; done
    printf '%s\n' "${CG_DIRS[@]}" > "$TH_DIR/cgroups"
    if [ "$MEMCG" = 1 ]; then echo "$MEMCG_LIMIT" > "/sys/fs/cgroup/memory/$TH_CGNAME/memory.limit_in_bytes"; fi
    [ -e /run/systemd/nspawn ] || touch "$TH_DIR/created-run-systemd-nspawn"
}

# nspawn bind mounts: node binary, the project (read-only), llama-server binaries/models if present.
bind_args() {
    local node
    node=$(readlink -f "$(command -v node)") || th_die "node not found on this machine"
    BINDS="--bind-ro=$node:/usr/local/bin/node --bind-ro=$TH_PROJECT_ROOT:/opt/spectune"
    [ -d "$TH_LLAMA_DIR" ] && BINDS="$BINDS --bind-ro=$TH_LLAMA_DIR:/opt/llama"
    # a worktree's node_modules is a symlink to another checkout: bind its target at the same path so it resolves
    if [ -L "$TH_PROJECT_ROOT/node_modules" ] && [ -d "$TH_PROJECT_ROOT/node_modules" ]; then
        node=$(readlink -f "$TH_PROJECT_ROOT/node_modules"); BINDS="$BINDS --bind-ro=$node:$node"
    fi
    [ -z "${TESTHOST_EXTRA_BINDS:-}" ] || BINDS="$BINDS $TESTHOST_EXTRA_BINDS"
    [[ "$BINDS" =~ ^[A-Za-z0-9/._=:\ -]+$ ]] || th_die "paths with special characters are not supported: $BINDS"
}

# The launcher joins our cgroups, then execs (same PID): unshare (private mount ns) -> sh (overlay) -> nspawn.
# SYSTEMD_NSPAWN_* overrides are dropped: a cgroup-mode mismatch makes nspawn delete the caller's cgroup subtree.
launch() {
    export TH_CG="${CG_DIRS[*]}" TH_LOWER="$LOWER" TH_DIR TH_NAME TH_NETNS_PATH=/run/netns/$TH_NETNS TH_INIT="$INIT_ARGS" TH_BINDS="$BINDS"
    setsid env -u SYSTEMD_NSPAWN_UNIFIED_HIERARCHY -u SYSTEMD_NSPAWN_USE_CGNS -u UNIFIED_CGROUP_HIERARCHY bash -c '
        set -e
        for d in $TH_CG; do echo $$ > "$d/cgroup.procs"; done
        echo $$ > "$TH_DIR/nspawn.pid"
        exec unshare --mount --propagation private -- sh -c "
            mount -t overlay spectune-$TH_NAME -o lowerdir=\$TH_LOWER,upperdir=\$TH_DIR/upper,workdir=\$TH_DIR/work \$TH_DIR/merged &&
            exec systemd-nspawn --directory=\$TH_DIR/merged --machine=spectune-\$TH_NAME --hostname=\$TH_NAME \
                --register=no --keep-unit --network-namespace-path=\$TH_NETNS_PATH \
                --console=read-only --link-journal=no --resolv-conf=off --timezone=off \
                --kill-signal=SIGRTMIN+3 \$TH_BINDS \$TH_INIT"
    ' < /dev/null > "$TH_DIR/console.log" 2>&1 &
}

# Wait for the launcher's pid file, then for sshd (the one ssh config is written by up-all.sh).
wait_for_ssh() {
    local pid ok=0 t0=$1
    for _ in $(seq 50); do [ -s "$TH_DIR/nspawn.pid" ] && break; sleep 0.1; done
    pid=$(cat "$TH_DIR/nspawn.pid" 2>/dev/null) || th_die "launcher did not start"
    for _ in $(seq $((BOOT_TIMEOUT * 5))); do
        kill -0 "$pid" 2>/dev/null || { tail -30 "$TH_DIR/console.log" >&2; th_die "$NAME exited during boot (console: $TH_DIR/console.log)"; }
        if ssh -F "$SSH_CONFIG" -o ConnectTimeout=1 "$NAME" true 2>/dev/null; then ok=1; break; fi
        sleep 0.2
    done
    [ $ok = 1 ] || { tail -30 "$TH_DIR/console.log" >&2; th_die "$NAME: ssh not ready after ${BOOT_TIMEOUT}s"; }
    th_elapsed "$t0" > "$TH_DIR/boot-seconds"
    # nspawn's image lock (removed by nspawn itself unless it is SIGKILLed; then down-host.sh removes it)
    stat -c 'inode-%d:%i' "/proc/$pid/root$TH_DIR/merged" > "$TH_DIR/nspawn-lock" 2>/dev/null || true
    printf 'PID=%s\nIP=%s\nHOST_IP=%s\nMEMCG=%s\n' "$pid" "$CT_IP" "$HOST_IP" "$MEMCG" > "$TH_DIR/host.env"
    log "ssh ready after $(cat "$TH_DIR/boot-seconds")s at $CT_IP (launcher pid $pid, memcg=$MEMCG)"
}

T0=$(th_now)
prepare_overlay
setup_network
setup_cgroups
bind_args
launch
wait_for_ssh "$T0"
rm -f "$TH_DIR/up-host.pid"
