#!/bin/bash
# slurm-down.sh - tear down the Slurm test cluster (sl1..sl3: down-host.sh each, in parallel, then the bridge) and
# remove slurm.env/slurm.json. Keeps the cached rootfs, munge key and ssh keys. Never touches th1..th3.
#   --purge            also delete the cluster's base dir (rootfs, debootstrap cache, keys)
#   --quiet-if-clean   say nothing when there is nothing to tear down (used by slurm-up.sh)
set -uo pipefail
HERE=$(dirname "$(readlink -f "$0")")
export SPECTUNE_TESTHOST_DIR=${SPECTUNE_SLURM_DIR:-/var/lib/spectune-slurm}
SL_ENV_FILE=${SPECTUNE_SLURM_ENV:-/var/lib/spectune-testhost/slurm.env}
unset SPECTUNE_TESTHOSTS_ENV
source "$HERE/slurm-common.sh"
th_check_base
PURGE=0; QUIET=0
for a in "$@"; do
    case "$a" in --purge) PURGE=1;; --quiet-if-clean) QUIET=1;; *) th_die "unknown argument $a";; esac
done

# A node has something to tear down when it has a pid file, an upper dir, a netns, a veth or a cgroup.
has_leftovers() {
    th_names "$1"
    [ -s "$TH_DIR/nspawn.pid" ] || [ -s "$TH_DIR/up-host.pid" ] || [ -s "$TH_DIR/cgroups" ] || [ -d "$TH_DIR/upper" ] \
        || ip netns list 2>/dev/null | grep -qE "^$TH_NETNS( |$)" || ip link show "$TH_VETH" >/dev/null 2>&1 \
        || [ -n "$(th_cgroup_dirs "$TH_CGNAME")" ]
}

TODO=()
for n in "${SL_NAMES[@]}"; do has_leftovers "$n" && TODO+=("$n"); done
rc=0
if [ ${#TODO[@]} -gt 0 ]; then
    th_log "tearing down Slurm nodes: ${TODO[*]}"
    pids=()
    for n in "${TODO[@]}"; do "$HERE/down-host.sh" "$n" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
elif [ $QUIET = 0 ]; then
    th_log "no Slurm nodes running"
fi
if ip link show "$SL_BRIDGE" >/dev/null 2>&1; then ip link del "$SL_BRIDGE" || { th_log "WARNING: ip link del $SL_BRIDGE failed"; rc=1; }; fi
rm -f "$SL_ENV_FILE" "$SL_JSON_FILE"
if [ $PURGE = 1 ]; then
    if grep -q " $TH_BASE/" /proc/self/mountinfo; then th_die "mounts under $TH_BASE remain: not purging"; fi
    th_log "--purge: removing $TH_BASE"
    rm -rf --one-file-system "$TH_BASE"
fi
[ $rc = 0 ] || th_log "Slurm teardown finished with warnings"
exit $rc
