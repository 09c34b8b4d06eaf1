#!/bin/bash
# build-rootfs.sh - build (once, cached) the Debian bookworm rootfs every test host boots from, and apply the
# shared, idempotent configuration (sshd, journald, masked units, client key). Safe to run concurrently: flock.
# --next: build into rootfs.next only (safe while hosts run); the next up-all.sh swaps it in instead of building.
# Env: TESTHOST_PACKAGES (extra debs, default "curl sudo": sudo for the sudo-mode tests), TESTHOST_MIRROR, TESTHOST_REBUILD=1 (start over).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/common.sh"
th_check_base

SUITE=bookworm
EXTRA_PACKAGES=${TESTHOST_PACKAGES:-curl sudo}
# systemd as PID 1 + sshd; libstdc++6 for the bind-mounted node binary
BASE_PACKAGES="systemd,systemd-sysv,dbus,openssh-server,iproute2,procps,less,libstdc++6,libgomp1"  # libgomp1: llama-server (OpenMP)
PKGS="$BASE_PACKAGES,${EXTRA_PACKAGES// /,}"; PKGS=${PKGS%,}

# The Debian mirror this machine's apt already uses.
find_mirror() {
    local m=${TESTHOST_MIRROR:-}
    [ -n "$m" ] || m=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$m" ] || m=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$m" ] || th_die "no Debian mirror found; set TESTHOST_MIRROR"
    echo "$m"
}

# debootstrap into a temp dir, then rename to $1: a half-built rootfs is never used.
build() {
    local target=$1 t0 tmp=$TH_BASE/rootfs.building log=$TH_BASE/debootstrap.log
    t0=$(th_now)
    rm -rf --one-file-system "$tmp" "$target"
    mkdir -p "$TH_CACHE/debs"
    th_log "debootstrap $SUITE minbase + $PKGS -> $target (takes 1-3 min)"
    debootstrap --variant=minbase --cache-dir="$TH_CACHE/debs" --include="$PKGS" \
        "$SUITE" "$tmp" "$(find_mirror)" > "$log" 2>&1 \
        || { tail -20 "$log" >&2; th_die "debootstrap failed (log: $log)"; }
    rm -f "$tmp"/var/cache/apt/archives/*.deb "$tmp"/etc/ssh/ssh_host_*
    echo "$PKGS" > "$tmp/.spectune-testhost-packages"
    date -u +%FT%TZ > "$tmp/.spectune-testhost-built"
    mv "$tmp" "$target"
    th_elapsed "$t0" > "$TH_BASE/rootfs-build-seconds"
    th_log "rootfs built in $(cat "$TH_BASE/rootfs-build-seconds")s ($(du -sh --one-file-system "$target" | cut -f1))"
}

# Plain file edits only; nothing is executed inside the rootfs. Per-host files live in each overlay upper dir.
configure() {
    local r=$TH_ROOTFS u
    rm -f "$r/etc/resolv.conf"; : > "$r/etc/resolv.conf"                     # no DNS inside
    [ -e "$r/etc/default/locale" ] || echo 'LANG=C.UTF-8' > "$r/etc/default/locale"
    for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
             e2scrub_reap.service fstrim.timer getty@tty1.service systemd-networkd-wait-online.service; do
        ln -sfn /dev/null "$r/etc/systemd/system/$u"
    done
    install -d -m 700 "$r/root/.ssh"
    install -m 600 "$TH_SSHDIR/id_ed25519.pub" "$r/root/.ssh/authorized_keys"
    cat > "$r/etc/ssh/sshd_config.d/10-spectune-testhost.conf" <<'EOT'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
MaxStartups 100:30:200
MaxSessions 100
EOT
    mkdir -p "$r/etc/systemd/journald.conf.d"
    printf '[Journal]\n# tests read crash loops from the journal: never rate-limit them away\nRateLimitIntervalSec=0\n' \
        > "$r/etc/systemd/journald.conf.d/10-spectune-testhost.conf"
    mkdir -p "$r/opt/spectune" "$r/opt/llama"                               # bind-mount targets
    : > "$r/usr/local/bin/node" 2>/dev/null || true
    # PID-1 wrapper for memcg hosts: nspawn mounts cgroup-v1 controllers read-only; make memory writable
    # so systemd can apply MemoryMax=, then become systemd.
    cat > "$r/usr/local/sbin/spectune-testhost-init" <<'EOT'
#!/bin/sh
mount -o remount,bind,rw /sys/fs/cgroup/memory || echo "testhost-init: /sys/fs/cgroup/memory stays read-only" >&2
exec /lib/systemd/systemd "$@"
EOT
    chmod 755 "$r/usr/local/sbin/spectune-testhost-init"
}

# A complete rootfs built with exactly the packages wanted now.
matches() { [ -f "$1/.spectune-testhost-built" ] && [ "$(cat "$1/.spectune-testhost-packages" 2>/dev/null)" = "$PKGS" ]; }

main() {
    mkdir -p "$TH_BASE" "$TH_SSHDIR"
    [ -f "$TH_SSHDIR/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C spectune-testhost -f "$TH_SSHDIR/id_ed25519"
    exec 9> "$TH_BASE/.rootfs.lock"
    flock 9
    if [ "${1:-}" = --next ]; then
        matches "$TH_BASE/rootfs.next" || build "$TH_BASE/rootfs.next"
        return 0
    fi
    if [ "${TESTHOST_REBUILD:-0}" = 1 ] || ! matches "$TH_ROOTFS"; then
        # the rootfs is the lower dir of every running host's overlay: never replace it under them
        for f in "$TH_BASE"/*/nspawn.pid; do
            [ -s "$f" ] && th_die "test hosts are running on $TH_ROOTFS: run down-all.sh first (or build-rootfs.sh --next)"
        done
        if [ "${TESTHOST_REBUILD:-0}" != 1 ] && matches "$TH_BASE/rootfs.next"; then
            th_log "swapping in the prepared $TH_BASE/rootfs.next"
            rm -rf --one-file-system "$TH_ROOTFS"; mv "$TH_BASE/rootfs.next" "$TH_ROOTFS"
        else
            build "$TH_ROOTFS"
        fi
    else
        th_log "reusing rootfs $TH_ROOTFS (built $(cat "$TH_ROOTFS/.spectune-testhost-built"))"
    fi
    configure
}
main "$@"
