#!/bin/bash
# reboot-host.sh NAME [--hard] - reboot one test host, keeping its disk (overlay upper dir), keys and network:
# an orderly shutdown of the host's systemd (SIGTERM to nspawn = poweroff, as down-host.sh does), or with --hard a
# power loss (SIGKILL of every process in the host's own cgroups, by pid); then boot it again on the same disk and
# wait for ssh (up-host.sh with TESTHOST_KEEP_DISK=1). Env: TESTHOST_SSH_CONFIG, TESTHOST_STOP_TIMEOUT (30 s).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/common.sh"
th_check_base
NAME=${1:?usage: reboot-host.sh NAME [--hard]}
MODE=${2:-}
th_check_name "$NAME"
th_names "$NAME"
case "$MODE" in ''|--hard) ;; *) th_die "unknown argument $MODE (usage: reboot-host.sh NAME [--hard])";; esac
STOP_TIMEOUT=${TESTHOST_STOP_TIMEOUT:-30}
log() { th_log "$NAME: $*"; }
[ -s "$TH_DIR/host.conf" ] && [ -s "$TH_DIR/nspawn.pid" ] || th_die "$NAME is not up (no $TH_DIR/host.conf or nspawn.pid)"
INDEX=$(sed -n 's/^INDEX=\([0-9]*\).*/\1/p' "$TH_DIR/host.conf")
MEMCG=$(sed -n 's/.*MEMCG=\([01]\).*/\1/p' "$TH_DIR/host.conf")
PID=$(cat "$TH_DIR/nspawn.pid")
is_ours() { [ "$1" != 1 ] && grep -qE "[:/]$TH_CGNAME(/|\$)" "/proc/$1/cgroup" 2>/dev/null; }
is_ours "$PID" && grep -qa -- "--machine=spectune-$NAME" "/proc/$PID/cmdline" || th_die "pid $PID is not $NAME's systemd-nspawn"
T0=$(th_now)

if [ "$MODE" = --hard ]; then
    log "power loss: SIGKILL of every process in its cgroups"
    for _ in 1 2 3 4 5; do
        pids=$(while read -r d; do [ -d "$d" ] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done < "$TH_DIR/cgroups" | sort -un)
        [ -z "$pids" ] && break
        for p in $pids; do is_ours "$p" && kill -KILL "$p" 2>/dev/null; done
        sleep 0.3
    done
    # nspawn was killed: its image lock stays behind (down-host.sh removes it the same way)
    if [ -s "$TH_DIR/nspawn-lock" ]; then
        lk=$(cat "$TH_DIR/nspawn-lock"); [[ "$lk" =~ ^inode-[0-9]+:[0-9]+$ ]] && rm -f "/run/systemd/nspawn/locks/$lk"
    fi
else
    log "reboot: orderly shutdown of its systemd (nspawn pid $PID)"
    kill -TERM "$PID"
fi
for _ in $(seq $((STOP_TIMEOUT * 10))); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$PID" 2>/dev/null && th_die "$NAME did not go down within ${STOP_TIMEOUT}s"
rm -f "$TH_DIR/nspawn.pid" "$TH_DIR/nspawn-lock"
log "down after $(th_elapsed "$T0")s; booting again on the same disk"
TESTHOST_KEEP_DISK=1 TESTHOST_MEMCG=${MEMCG:-0} "$HERE/up-host.sh" "$NAME" "$INDEX"
log "rebooted in $(th_elapsed "$T0")s (new nspawn pid $(cat "$TH_DIR/nspawn.pid"))"
