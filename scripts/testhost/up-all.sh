#!/bin/bash
# up-all.sh - boot the spectune test hosts (default th1 th2 th3): real systemd (PID 1) + journald + sshd in
# their own overlay rootfs and network namespace, booted in parallel from ONE cached debootstrapped rootfs.
# Writes one ssh config (`ssh -F $BASE/ssh/config th1`), hosts.env ($SPECTUNE_TESTHOSTS_ENV) and hosts.json.
# Leftovers of a previous run (even after a SIGKILL) are torn down first.
# Env: TESTHOST_COUNT (3) or TESTHOST_NAMES ("th1 th2 th3"); TESTHOST_MEMCG_HOSTS (hosts with an enforced
#      memory cgroup, default "th3"; "" for none); TESTHOST_REUSE=1 (keep hosts that already answer ssh);
#      TESTHOST_PACKAGES, TESTHOST_MIRROR, TESTHOST_REBUILD (see build-rootfs.sh).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/common.sh"
th_check_base
COUNT=${TESTHOST_COUNT:-3}
NAMES=(${TESTHOST_NAMES:-$(seq -f 'th%g' 1 "$COUNT")})
MEMCG_HOSTS=" ${TESTHOST_MEMCG_HOSTS-th3} "
for n in "${NAMES[@]}"; do th_check_name "$n"; done
T_START=$(th_now)

# A th host's address: .2 of its own /29.
th_host_ip() { echo "$(th_subnet "$1").2"; }

all_answer() {
    local n
    for n in "${NAMES[@]}"; do ssh -F "$TH_SSHDIR/config" -o ConnectTimeout=2 "$n" true 2>/dev/null || return 1; done
}

# Boot every host in parallel; fail (and tear all down) if any fails.
boot_all() {
    local i=0 n pids=() failed=0 memcg
    for n in "${NAMES[@]}"; do
        i=$((i + 1)); memcg=0; [[ "$MEMCG_HOSTS" == *" $n "* ]] && memcg=1
        TESTHOST_MEMCG=$memcg "$HERE/up-host.sh" "$n" "$i" & pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    [ $failed = 0 ] || th_die "at least one host failed to boot"
}

# hosts.env for shell scripts, hosts.json for the tests (test/e2e/helpers/testhosts.ts).
write_host_files() {
    local n up json="" env
    env="# written by scripts/testhost/up-all.sh at $(date -u +%FT%TZ)
SPECTUNE_TESTHOSTS=\"${NAMES[*]}\"
SPECTUNE_TESTHOST_SSH_CONFIG=$TH_SSHDIR/config
SPECTUNE_TESTHOST_SSH_KEY=$TH_SSHDIR/id_ed25519
SPECTUNE_TESTHOST_KNOWN_HOSTS=$TH_SSHDIR/known_hosts
SPECTUNE_TESTHOSTS_JSON=$TH_JSON_FILE
"
    for n in "${NAMES[@]}"; do
        th_names "$n"; up=${n^^}
        env+=$(source "$TH_DIR/host.env"; printf '%s_NAME=%s\n%s_IP=%s\n%s_HOST_IP=%s\n%s_MEMCG=%s\n%s_PID=%s' \
            "$up" "$n" "$up" "$IP" "$up" "$HOST_IP" "$up" "$MEMCG" "$up" "$PID")$'\n'
        json+=$(source "$TH_DIR/host.env"; printf '%s{"name":"%s","ip":"%s","hostIp":"%s","sshConfig":"%s","memcg":%s,"pid":%s,"unusedIp":"%s"}' \
            "${json:+,}" "$n" "$IP" "$HOST_IP" "$TH_SSHDIR/config" "$([ "$MEMCG" = 1 ] && echo true || echo false)" "$PID" "${IP%.*}.3")
    done
    mkdir -p "$(dirname "$TH_ENV_FILE")"
    printf '%s' "$env" > "$TH_ENV_FILE.tmp" && mv "$TH_ENV_FILE.tmp" "$TH_ENV_FILE"
    printf '{"sshConfig":"%s","sshKey":"%s","knownHosts":"%s","hosts":[%s]}\n' \
        "$TH_SSHDIR/config" "$TH_SSHDIR/id_ed25519" "$TH_SSHDIR/known_hosts" "$json" > "$TH_JSON_FILE.tmp"
    mv "$TH_JSON_FILE.tmp" "$TH_JSON_FILE"
}

# Check what the project needs inside: systemd running, node, the project, curl.
check_hosts() {
    local n state
    for n in "${NAMES[@]}"; do
        state=$(timeout 60 ssh -F "$TH_SSHDIR/config" "$n" \
            'systemctl is-system-running --wait; node --version; test -f /opt/spectune/package.json && echo project-ok; curl --version | head -1 | cut -d" " -f1,2' 2>&1 | tr '\n' ' ' || true)
        th_log "$n: $state"
    done
}

if [ "${TESTHOST_REUSE:-0}" = 1 ] && [ -s "$TH_ENV_FILE" ] && [ -s "$TH_SSHDIR/config" ] && all_answer; then
    th_log "TESTHOST_REUSE=1 and all hosts answer: keeping them"; exit 0
fi
trap 'rc=$?; if [ $rc -ne 0 ]; then th_log "up-all failed (rc=$rc): tearing down"; "$HERE/down-all.sh" || true; fi' EXIT
"$HERE/down-all.sh" --quiet-if-clean
"$HERE/build-rootfs.sh"
# Client side: one key, one known_hosts (each host's own ed25519 key), one config with a block per host.
th_write_ssh_client_files th_host_ip "${NAMES[@]}"
T_BOOT=$(th_now)
boot_all
th_log "all ${#NAMES[@]} hosts ssh-ready in $(th_elapsed "$T_BOOT")s (total $(th_elapsed "$T_START")s)"
write_host_files
check_hosts
th_log "ready: ssh -F $TH_SSHDIR/config ${NAMES[0]} | hosts: $TH_ENV_FILE, $TH_JSON_FILE | down: $HERE/down-all.sh"
