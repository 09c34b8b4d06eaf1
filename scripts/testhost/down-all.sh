#!/bin/bash
# down-all.sh - tear down every spectune test host (those up-all.sh recorded, plus any leftover netns, veth or
# cgroup named spectune-*), in parallel, and remove hosts.env/hosts.json. Keeps the cached rootfs and keys.
#   --purge            also delete the rootfs, the debootstrap cache, the keys and the host dirs
#   --quiet-if-clean   say nothing when there is nothing to tear down (used by up-all.sh)
set -uo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/common.sh"
th_check_base
PURGE=0; QUIET=0
for a in "$@"; do
    case "$a" in --purge) PURGE=1;; --quiet-if-clean) QUIET=1;; *) th_die "unknown argument $a";; esac
done

# Every host name that may have something to tear down.
find_hosts() {
    local d n
    for d in "$TH_BASE"/*/host.conf; do [ -f "$d" ] && basename "$(dirname "$d")"; done
    ip netns list 2>/dev/null | awk '{print $1}' | sed -n 's/^spectune-\([a-z][a-z0-9]*\)$/\1/p'
    ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: ve-st-\([a-z][a-z0-9]*\)[@:].*/\1/p'
    for d in /sys/fs/cgroup/*/spectune-* /sys/fs/cgroup/spectune-*; do
        [ -d "$d" ] || continue
        n=${d##*/spectune-}; [[ "$n" =~ ^[a-z][a-z0-9]{0,7}$ ]] && echo "$n"
    done
    return 0
}

# Something is left when a host has a pid file, a netns, a veth or a cgroup.
has_leftovers() {
    local n=$1
    th_names "$n"
    [ -s "$TH_DIR/nspawn.pid" ] || [ -s "$TH_DIR/up-host.pid" ] || [ -s "$TH_DIR/cgroups" ] || [ -d "$TH_DIR/upper" ] \
        || ip netns list 2>/dev/null | grep -qE "^$TH_NETNS( |$)" || ip link show "$TH_VETH" >/dev/null 2>&1 \
        || [ -n "$(th_cgroup_dirs "$TH_CGNAME")" ]
}

# Only hosts of THIS base dir (host dirs keep their keys, so they outlive a crash): another base dir's hosts
# have the same kind of global names (netns, veth, cgroups) and must never be torn down from here.
mapfile -t HOSTS < <(find_hosts | sort -u | while read -r n; do [ -d "$TH_BASE/$n" ] && echo "$n"; done)
TODO=()
for n in "${HOSTS[@]}"; do has_leftovers "$n" && TODO+=("$n"); done
rc=0
if [ ${#TODO[@]} -gt 0 ]; then
    th_log "tearing down: ${TODO[*]}"
    pids=()
    for n in "${TODO[@]}"; do "$HERE/down-host.sh" "$n" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
elif [ $QUIET = 0 ]; then
    th_log "no test hosts running"
fi
rm -f "$TH_ENV_FILE" "$TH_JSON_FILE"
if [ $PURGE = 1 ]; then
    if grep -q " $TH_BASE/" /proc/self/mountinfo; then th_die "mounts under $TH_BASE remain: not purging"; fi
    th_log "--purge: removing $TH_BASE"
    rm -rf --one-file-system "$TH_BASE"
fi
[ $rc = 0 ] || th_log "teardown finished with warnings"
exit $rc
