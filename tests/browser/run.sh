#!/usr/bin/env bash
# The status page in headless Chromium (Debian's /usr/bin/chromium,
# driven by playwright-core from npm, node's built-in test runner) against
# the REAL daemon and DoT fixture, loopback only. This script sets the scene
# (lib.sh helpers), installs the npm package itself into the build tree
# (`npm ci`, skipped when that exact lockfile is already installed, so a
# second run needs no network), and runs web_guard.test.mjs (DNS rebinding
# and cross-origin POSTs against the daemon) and status_page.test.mjs, which
# kills the fixture for its last test.
# Usage: run.sh NXDNS FIXTURE_DIR ARTEFACT_DIR
#   ARTEFACT_DIR (in the build tree) receives node_modules and screenshots.
source "$(dirname "$0")/../integration/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ART=$3
CHROMIUM=${NXDNS_CHROMIUM:-/usr/bin/chromium}
require_program node "the browser test runner (Debian: nodejs)"
require_program npm "installs playwright-core (Debian: npm)"
[ -x "$CHROMIUM" ] || skip "no $CHROMIUM (Debian: chromium; scripts/install-deps.sh installs it)"
need_fixture nxdns-fixture-dot
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' || skip "node $(node --version) is older than 18"

mkdir -p "$ART/screenshots"
if ! cmp -s "$HERE/package-lock.json" "$ART/package-lock.json" || [ ! -d "$ART/node_modules/playwright-core" ]; then
  cp "$HERE/package.json" "$HERE/package-lock.json" "$ART/"
  (cd "$ART" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) >"$WORK/npm.log" 2>&1 ||
    fail "npm ci in $ART: $(tail -n 5 "$WORK/npm.log")"
fi

make_pki "$WORK/pki" dot.test
# Each answer takes 1.5 s, so the test's burst holds exchanges in flight for
# 3 s (longer than the page's 2 s refresh) and queued for 1.5 s (longer than
# the history's 1 s sample): both are seen in every run, not by luck.
start_fixture up "$WORK/pki" --response-delay-ms 1500
ADDR=$(pick_loopback)
V6_PORT=$((RANDOM % 20000 + 30000))
cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:5300"
  - "[::1]:$V6_PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: dot.test
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 4000
  total_ms: 8000
http:
  listen: "$ADDR:8053"
YAML
start_daemon "$WORK/nxdns.yaml" "$ADDR" 5300

export NXDNS_HTTP="http://$ADDR:8053" NXDNS_DNS_V4="$ADDR:5300" NXDNS_DNS_V6="[::1]:$V6_PORT"
export NXDNS_BIN=$1 NXDNS_FIXTURE_PID=${PIDS[0]} NXDNS_DAEMON_PID=$DAEMON_PID NXDNS_CHROMIUM=$CHROMIUM
export NXDNS_NODE_MODULES=$ART/node_modules NXDNS_SCREENSHOTS=$ART/screenshots NXDNS_EMULATOR=${NXDNS_EMULATOR:-}
# One file at a time: web_guard (first: it needs the upstream, which
# status_page kills at its end) flushes the cache, status_page warms it again.
rc=0
node --test --test-reporter=spec "$HERE/web_guard.test.mjs" || rc=$?
[ "$rc" = 0 ] || fail "web surface guard tests failed in Chromium"
pass "rebinding and cross-origin POSTs refused in Chromium"
node --test --test-reporter=spec "$HERE/status_page.test.mjs" || rc=$?
[ "$rc" = 0 ] || fail "browser tests failed (screenshots in $ART/screenshots)"
pass "status page in Chromium: screenshots in $ART/screenshots"
stop_daemon
