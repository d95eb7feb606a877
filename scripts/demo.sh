#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine (run as root):
#   bash scripts/demo.sh
# Installs the build dependencies, builds nxdns, and runs `nxdns demo`: a DoT
# upstream fixture on loopback behind a 40 ms simulated round trip, the
# daemon pointed at it, a cold and a warm 30-name burst with their timelines,
# and an excerpt of /metrics. Nothing leaves 127.0.0.0/8.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/install-deps.sh"
cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$ROOT/build" -j"$(nproc)" --target nxdns nxdns-fixture-dot nxdns-delay-relay nxdns-test-pki
exec "$ROOT/build/src/cli/nxdns" demo "$@"
