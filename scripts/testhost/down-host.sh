#!/bin/bash
# down-host.sh NAME - tear down one test host: orderly poweroff (SIGKILL after a timeout), then kill stragglers
# found in OUR cgroups (by pid), remove the cgroups, veth, netns, nspawn leftovers and the overlay upper dir,
# and verify nothing is left. Works after a SIGKILL of up. Keeps the shared rootfs and keys.
set -uo pipefail
source "$(dirname "$(readlink -f "$0")")/common.sh"
th_check_base
NAME=${1:?usage: down-host.sh NAME}
th_check_name "$NAME"
th_names "$NAME"
STOP_TIMEOUT=${TESTHOST_STOP_TIMEOUT:-30}
rc=0
log()  { th_log "$NAME: $*"; }
warn() { log "WARNING: $*"; rc=1; }
mkdir -p "$TH_DIR"

# Never signal PID 1 or anything outside this host's own cgroups.
is_ours() { [ "$1" != 1 ] && grep -qE "[:/]$TH_CGNAME(/|\$)" "/proc/$1/cgroup" 2>/dev/null; }
cg_list() { { [ -s "$TH_DIR/cgroups" ] && cat "$TH_DIR/cgroups"; th_cgroup_dirs "$TH_CGNAME"; } | sort -u; }
cg_pids() { local d; for d in $(cg_list); do [ -d "$d" ] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done | sort -un; }

# An up-host.sh orphaned by a SIGKILLed up-all.sh would race with us: SIGKILL it (by recorded pid, checked).
stop_orphaned_boot() {
    local pid
    [ -s "$TH_DIR/up-host.pid" ] || return 0
    pid=$(cat "$TH_DIR/up-host.pid")
    if [ "$pid" != "$PPID" ] && [ "$pid" != $$ ] && grep -qa "up-host.sh.$NAME" "/proc/$pid/cmdline" 2>/dev/null; then
        log "killing orphaned boot script (pid $pid)"
        kill -KILL "$pid" 2>/dev/null
    fi
    [ "$pid" = "$PPID" ] || rm -f "$TH_DIR/up-host.pid"
}

stop_container() {
    local pid
    [ -s "$TH_DIR/nspawn.pid" ] || return 0
    pid=$(cat "$TH_DIR/nspawn.pid")
    if kill -0 "$pid" 2>/dev/null && is_ours "$pid" && grep -qa -- "--machine=spectune-$NAME" "/proc/$pid/cmdline"; then
        log "stopping (nspawn pid $pid): SIGTERM = poweroff of the host's systemd"
        kill -TERM "$pid"
        for _ in $(seq $((STOP_TIMEOUT * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then warn "no poweroff within ${STOP_TIMEOUT}s, SIGKILL $pid"; kill -KILL "$pid"; sleep 0.5; fi
    elif kill -0 "$pid" 2>/dev/null && ! is_ours "$pid"; then
        warn "pid $pid from $TH_DIR/nspawn.pid is not our systemd-nspawn: not touching it"
    fi
    rm -f "$TH_DIR/nspawn.pid"
}

kill_stragglers() {
    local p pids
    for _ in 1 2 3; do
        pids=$(cg_pids); [ -z "$pids" ] && return 0
        for p in $pids; do
            is_ours "$p" || { warn "pid $p in our cgroup but not ours?! not touching"; continue; }
            log "killing leftover pid $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-80))"
            kill -KILL "$p" 2>/dev/null
        done
        sleep 0.5
    done
}

remove_cgroups() {
    local d
    for d in $(cg_list); do
        [ -d "$d" ] || continue
        find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
        [ -d "$d" ] && warn "could not remove cgroup $d"
    done
    rm -f "$TH_DIR/cgroups"
}

remove_network() {
    if ip link show "$TH_VETH" >/dev/null 2>&1; then ip link del "$TH_VETH" || warn "ip link del $TH_VETH failed"; fi
    if ip netns list | grep -qE "^$TH_NETNS( |$)"; then ip netns del "$TH_NETNS" || warn "ip netns del $TH_NETNS failed"; fi
    if [ -f "$TH_DIR/created-run-netns" ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ]; then
        mountpoint -q /run/netns && umount /run/netns
        rmdir /run/netns 2>/dev/null
    fi
    [ -e /run/netns ] || rm -f "$TH_DIR/created-run-netns"
}

# nspawn's lock file survives only a SIGKILLed nspawn; the name was recorded by up-host.sh.
remove_nspawn_leftovers() {
    local lk
    if [ -s "$TH_DIR/nspawn-lock" ]; then
        lk=$(cat "$TH_DIR/nspawn-lock")
        [[ "$lk" =~ ^inode-[0-9]+:[0-9]+$ ]] && rm -f "/run/systemd/nspawn/locks/$lk"
        rm -f "$TH_DIR/nspawn-lock"
    fi
    rmdir "/run/systemd/nspawn/propagate/spectune-$NAME" 2>/dev/null
    if [ -f "$TH_DIR/created-run-systemd-nspawn" ]; then
        rmdir /run/systemd/nspawn/propagate /run/systemd/nspawn/locks /run/systemd/nspawn 2>/dev/null
        [ -e /run/systemd/nspawn ] || rm -f "$TH_DIR/created-run-systemd-nspawn"
    fi
}

remove_overlay() {
    if grep -q " $TH_DIR/" /proc/self/mountinfo; then
        warn "something under $TH_DIR is still mounted here: NOT deleting the overlay"; return
    fi
    rm -rf --one-file-system "$TH_DIR/upper" "$TH_DIR/work" "$TH_DIR/merged"
    rm -f "$TH_DIR/host.env"
}

verify() {
    local left
    left=$(grep -laE -- "[-]-machine=spectune-$NAME( |$|\x00)|$TH_DIR/merge[d]" /proc/[0-9]*/cmdline 2>/dev/null | grep -v "^/proc/$$/" || true)
    [ -n "$left" ] && warn "processes still running: $left"
    [ -n "$(cg_pids)" ] && warn "processes still in our cgroups"
    ip netns list | grep -qE "^$TH_NETNS( |$)" && warn "netns $TH_NETNS remains"
    ip link show "$TH_VETH" >/dev/null 2>&1 && warn "veth $TH_VETH remains"
    [ $rc = 0 ] && log "down: no processes, cgroups, mounts, netns or veth left"
}

stop_orphaned_boot
stop_container
kill_stragglers
remove_cgroups
remove_network
remove_nspawn_leftovers
remove_overlay
verify
exit $rc
