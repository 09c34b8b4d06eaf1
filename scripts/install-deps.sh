#!/bin/bash
# Install the Debian packages spectune's tests need, pinning systemd-container to the machine's own systemd
# so apt never upgrades the host's systemd as a side effect.
set -euo pipefail
need=()
if ! command -v systemd-nspawn >/dev/null; then
  v=$(dpkg-query -W -f='${Version}' systemd 2>/dev/null || true)
  need+=("systemd-container${v:+=$v}")
fi
# chromium: the report's browser test (test/e2e/report-browser.test.ts) opens the HTML report in it, headless.
for pair in debootstrap:debootstrap ssh:openssh-client ip:iproute2 unshare:util-linux cmake:cmake ninja:ninja-build git:git g++:g++ curl:curl chromium:chromium; do
  command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "[install-deps] apt-get install ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
