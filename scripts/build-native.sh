#!/bin/bash
# Build spectune's optional native stream reader (native/stream-reader.c) with the system C compiler against the
# Node-API headers of the running node. Never fails the install: without a compiler or headers spectune's
# benchmark uses its JavaScript transport and says so.
set -uo pipefail
cd "$(dirname "$0")/.."
out=native/build/stream_reader.node
src=native/stream-reader.c
if [ "$(uname -s)" != Linux ]; then echo "[build-native] skipped: the native reader is Linux-only (epoll)" >&2; exit 0; fi
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null; then echo "[build-native] skipped: no C compiler ($cc); bench uses the JS transport" >&2; exit 0; fi
inc=""
for d in "$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node" /usr/include/node /usr/local/include/node node_modules/node-api-headers/include; do
  if [ -f "$d/node_api.h" ]; then inc=$d; break; fi
done
if [ -z "$inc" ]; then echo "[build-native] skipped: node_api.h not found; bench uses the JS transport" >&2; exit 0; fi
if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt native/clock-ms.h ] && [ "$out" -nt "$0" ]; then exit 0; fi
mkdir -p native/build
if "$cc" -O2 -Wall -Wextra -std=c11 -fPIC -shared -pthread -DNODE_GYP_MODULE_NAME=stream_reader -DNAPI_VERSION=8 \
  -I"$inc" -o "$out.tmp" "$src"; then
  mv "$out.tmp" "$out"
  echo "[build-native] built $out" >&2
else
  rm -f "$out.tmp"
  echo "[build-native] compile failed; bench uses the JS transport" >&2
fi
exit 0
