#!/usr/bin/env bash
# The daemon's resident memory after a 30-name burst, as one bench figure:
#   bash bench/rss_after_burst.sh path/to/nxdns [fixture-dir]
# With NXDNS_EMULATOR (e.g. qemu-aarch64-static) it runs the binary under the
# emulator and reports that process's RSS, which includes qemu's own (state
# it that way when quoting it). Loopback only. Prints one line:
#   rss_after_burst_kib=N idle_kib=N (servfail=N)
set -euo pipefail
source "$(dirname "$0")/../tests/integration/lib.sh"
ADDR=$(pick_loopback)
make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
ATTEMPT_MS=8000 TOTAL_MS=15000 dot_config "$WORK/c.yaml" "$ADDR" 5300 "$FIX_PORT_up" "$WORK/pki"
start_daemon "$WORK/c.yaml" "$ADDR" 5300
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
idle=$(rss)
out=$(nx burst --server "$ADDR:5300" --names 30 --cold --timeout-ms 15000 --json || true)
after=$(rss)
servfail=$(sed -n 's/.*"servfail":\([0-9]*\).*/\1/p' <<<"$out")
stop_daemon
echo "rss_after_burst_kib=$after idle_kib=$idle (servfail=${servfail:-?})"
