#!/bin/bash
# selftest.sh - check that every running test host is what the e2e tests rely on: systemd running as PID 1,
# node and the project inside, a node unit logging to the journal, MemoryMax= enforced on memcg hosts.
# Exit code = number of failed checks.
set -uo pipefail
source "$(dirname "$(readlink -f "$0")")/common.sh"
[ -s "$TH_ENV_FILE" ] || th_die "no $TH_ENV_FILE: run scripts/testhost/up-all.sh first"
source "$TH_ENV_FILE"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

check_host() {
    local n=$1 memcg=$2 out r
    r() { ssh -F "$SPECTUNE_TESTHOST_SSH_CONFIG" "$n" "$@"; }
    out=$(r 'cat /proc/1/comm; systemctl is-system-running')
    [ "$out" = $'systemd\nrunning' ] && pass "$n: systemd is PID 1 and running" || fail "$n: PID 1/state: $out"
    r 'node -e "process.exit(require(\"/opt/spectune/package.json\").name === \"spectune\" ? 0 : 1)"' \
        && pass "$n: node runs and sees /opt/spectune" || fail "$n: node or /opt/spectune missing"
    r 'systemctl reset-failed selftest-node 2>/dev/null; systemd-run --quiet --unit=selftest-node --wait node -e "console.log(\"selftest-marker\")"'
    r 'journalctl -u selftest-node -o json --no-pager' | grep -q '"MESSAGE":"selftest-marker"' \
        && pass "$n: node unit logs to the journal" || fail "$n: no journal line from the node unit"
    [ "$memcg" = 1 ] || return 0
    r 'systemctl reset-failed selftest-memhog 2>/dev/null; systemd-run --quiet --unit=selftest-memhog -p MemoryMax=50M --wait node -e "const a=[]; for (let i=0;i<40;i++) a.push(Buffer.alloc(10<<20,1))"' 2>/dev/null
    r 'journalctl -u selftest-memhog -o cat --no-pager' | grep -q 'code=killed, status=9/KILL' \
        && pass "$n: MemoryMax= enforced (SIGKILL)" || fail "$n: MemoryMax= not enforced"
    r 'systemctl reset-failed selftest-memhog selftest-node 2>/dev/null' || true
}

for n in $SPECTUNE_TESTHOSTS; do
    up=${n^^}; memcg_var=${up}_MEMCG
    check_host "$n" "${!memcg_var:-0}"
done
echo "failed checks: $fails"
exit $fails
