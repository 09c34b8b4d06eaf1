#!/bin/bash
# common.sh - shared settings and helpers of the spectune test-host scripts (sourced, not run).
# Layout under $TH_BASE (default /var/lib/spectune-testhost):
#   rootfs/            shared debootstrapped Debian bookworm (read-only lower dir of every host)
#   cache/debs/        debootstrap package cache
#   ssh/               client key, known_hosts and the one ssh config with a `Host thN` entry per host
#   <name>/            per host: overlay upper/work/merged, host keys, pid file, cgroups list, console log
#   hosts.env, hosts.json   what tests read (hosts.env path overridable with SPECTUNE_TESTHOSTS_ENV)

TH_BASE=${SPECTUNE_TESTHOST_DIR:-/var/lib/spectune-testhost}
TH_ROOTFS=$TH_BASE/rootfs
TH_SSHDIR=$TH_BASE/ssh
TH_CACHE=$TH_BASE/cache
TH_ENV_FILE=${SPECTUNE_TESTHOSTS_ENV:-$TH_BASE/hosts.env}
TH_JSON_FILE=$(dirname "$TH_ENV_FILE")/hosts.json
TH_PROJECT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TH_LLAMA_DIR=${SPECTUNE_LLAMA_DIR:-/var/lib/spectune-llama}
# third octet of host N's subnet is TH_SUBNET_BASE + N - 1 (10.250.77.0/29, 10.250.78.0/29, ...)
TH_SUBNET_PREFIX=${TESTHOST_SUBNET_PREFIX:-10.250}
TH_SUBNET_BASE=${TESTHOST_SUBNET_BASE:-77}
# /29 instead of /30 so that .3-.6 are valid but unused addresses (tests of an unreachable host)
TH_PREFIXLEN=29

th_log() { printf '[testhost %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
th_die() { th_log "ERROR: $*"; exit 1; }
th_now() { date +%s.%N; }
th_elapsed() { awk -v a="$1" -v b="$(th_now)" 'BEGIN{printf "%.1f", b-a}'; }

# Refuse to run with a base dir that could make rm -rf or cgroup names dangerous.
th_check_base() {
    [ "$(id -u)" = 0 ] || th_die "must run as root (try: sudo bash $0)"
    case "$TH_BASE" in /*) ;; *) th_die "SPECTUNE_TESTHOST_DIR must be absolute";; esac
    [[ "$TH_BASE" =~ ^/[A-Za-z0-9/._-]{5,}$ ]] || th_die "refusing suspicious SPECTUNE_TESTHOST_DIR=$TH_BASE"
}

# Host names are used in cgroup, netns and veth names: keep them short and plain.
th_check_name() {
    [[ "$1" =~ ^[a-z][a-z0-9]{0,7}$ ]] || th_die "host name '$1' must match ^[a-z][a-z0-9]{0,7}\$"
}

# Names derived from a host name (one place, so up and down always agree).
th_names() {
    local name=$1
    TH_NAME=$name
    TH_DIR=$TH_BASE/$name
    TH_NETNS=spectune-$name
    TH_VETH=ve-st-$name
    TH_CGNAME=spectune-$name
}

# Subnet (first three octets) of the Nth host (N starts at 1).
th_subnet() { echo "$TH_SUBNET_PREFIX.$((TH_SUBNET_BASE + $1 - 1))"; }

# Our cgroup dirs for a host that exist now (unified + named systemd hierarchy, optional memory).
th_cgroup_dirs() {
    local cg=$1 d
    for d in "/sys/fs/cgroup/unified/$cg" "/sys/fs/cgroup/systemd/$cg" "/sys/fs/cgroup/memory/$cg" "/sys/fs/cgroup/$cg"; do
        [ -d "$d" ] && [ "$(stat -f -c %T "$(dirname "$d")")" != tmpfs ] && echo "$d"
    done
    return 0
}

# The client side of a set of test hosts: each host's own host key (kept in its dir), one known_hosts and one ssh
# config with a block per host (our key only, strict host-key checking). $1 prints host number N's address; the rest
# are the host names in order.
th_write_ssh_client_files() {
    local ipfn=$1; shift
    local i=0 n ip cfg=$TH_SSHDIR/config kh=$TH_SSHDIR/known_hosts
    : > "$kh.new"; : > "$cfg.new"
    for n in "$@"; do
        i=$((i + 1)); ip=$("$ipfn" "$i"); th_names "$n"
        mkdir -p "$TH_DIR/keys"
        [ -f "$TH_DIR/keys/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "$n" -f "$TH_DIR/keys/ssh_host_ed25519_key"
        echo "$n,$ip $(cut -d' ' -f1,2 "$TH_DIR/keys/ssh_host_ed25519_key.pub")" >> "$kh.new"
        cat >> "$cfg.new" <<EOT
Host $n
  HostName $ip
  User root
  IdentityFile $TH_SSHDIR/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $kh
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR

EOT
    done
    mv "$kh.new" "$kh"; mv "$cfg.new" "$cfg"
}
