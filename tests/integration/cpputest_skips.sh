#!/usr/bin/env bash
# The CppUTest skip contract (tests/support/skipped_cases.hpp): a case that
# cannot run ends with SKIP_CASE, and a run in which one did and none failed
# exits 77, naming each skipped case and why; a failure still wins. Checked
# on skip_probe_tests (cases that pass, skip and fail on purpose), then end
# to end: ctest lists such an entry as Skipped and scripts/test.sh's
# skips_in counts it. Last, every cpputest.* entry of this build declares
# SKIP_RETURN_CODE 77, and the cases that need nghttpx or promtool are
# entries of their own.
# Usage: cpputest_skips.sh NXDNS FIXTURE_DIR SKIP_PROBE BUILD_DIR
source "$(dirname "$0")/lib.sh"
PROBE=$3
BUILD=$4
TEST_SH=$(cd "$(dirname "$0")/../../scripts" && pwd)/test.sh
[ -x "$PROBE" ] || skip "skip_probe_tests not built ($PROBE)"
require_program ctest "Debian: cmake"
require_program python3 "reads ctest's JSON"

probe() {  # probe ARGS... -> prints the exit status; the output in $WORK/probe.out
  local rc=0
  ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$PROBE" "$@" >"$WORK/probe.out" 2>&1 || rc=$?
  echo "$rc"
}

rc=$(probe -n RunsHere)
[ "$rc" = 0 ] || fail "nothing skipped: exit $rc, want 0: $(cat "$WORK/probe.out")"
pass "a run with nothing skipped exits 0"

rc=$(probe -n CannotRunHere)
[ "$rc" = 77 ] || fail "one case skipped: exit $rc, want 77: $(cat "$WORK/probe.out")"
grep -qx "SKIPPED CASE: SkipProbe.CannotRunHere: the probe's requirement is missing" "$WORK/probe.out" ||
  fail "the skipped case is not named with its reason: $(cat "$WORK/probe.out")"
grep -q "SKIP_CASE let the case go on" "$WORK/probe.out" && fail "SKIP_CASE did not end the case"
pass "a case that cannot run: exit 77, named with its reason"

rc=$(probe -xn FailsHere)
[ "$rc" = 77 ] || fail "one case passed, one skipped: exit $rc, want 77: $(cat "$WORK/probe.out")"
pass "a run where one case passed and one could not run is skipped, not passed"

rc=$(probe)
[ "$rc" != 0 ] && [ "$rc" != 77 ] || fail "one case failed, one skipped: exit $rc, want a failure"
grep -q "SkipProbe.CannotRunHere" "$WORK/probe.out" || fail "the skipped case is not named beside the failure"
pass "a failure wins over a skip (exit $rc), and the skip is still named"

# End to end: ctest reads 77 as Skipped, and scripts/test.sh counts it.
mkdir -p "$WORK/ctest"
emu=""
for word in ${NXDNS_EMULATOR:-}; do emu+="\"$word\" "; done
cat >"$WORK/ctest/CTestTestfile.cmake" <<CTEST
add_test(probe.skips $emu"$PROBE" "-n" "CannotRunHere")
set_tests_properties(probe.skips PROPERTIES SKIP_RETURN_CODE 77)
add_test(probe.runs $emu"$PROBE" "-n" "RunsHere")
set_tests_properties(probe.runs PROPERTIES SKIP_RETURN_CODE 77)
CTEST
(cd "$WORK/ctest" && ctest) >"$WORK/ctest.out" 2>&1 || fail "ctest over the probe: $(cat "$WORK/ctest.out")"
grep -qE 'probe\.runs .*Passed' "$WORK/ctest.out" || fail "ctest: probe.runs not Passed: $(cat "$WORK/ctest.out")"
source <(sed -n '/^skips_in()/,/^}/p' "$TEST_SH")
[ "$(skips_in "$WORK/ctest.out")" = "test probe.skips (Skipped)" ] ||
  fail "scripts/test.sh's skips_in: '$(skips_in "$WORK/ctest.out")', want the probe's Skipped entry: $(cat "$WORK/ctest.out")"
pass "ctest lists the skipping entry as Skipped, and scripts/test.sh's skips_in counts it"

# This build's registrations.
(cd "$BUILD" && ctest -N --show-only=json-v1) >"$WORK/tests.json" 2>"$WORK/ctest-n.err" ||
  fail "ctest -N in $BUILD: $(cat "$WORK/ctest-n.err")"
python3 - "$WORK/tests.json" <<'PY' || fail "cpputest registrations (above)"
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
names, bad = set(), []
for t in tests:
    if not t["name"].startswith("cpputest."):
        continue
    names.add(t["name"])
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if props.get("SKIP_RETURN_CODE") != 77:
        bad.append(t["name"])
missing = {"cpputest.upstream.http2", "cpputest.web.promtool"} - names
for n in bad:
    print(f"{n}: no SKIP_RETURN_CODE 77, so a skipped case would pass")
for n in sorted(missing):
    print(f"{n}: not registered")
print(f"{len(names)} cpputest entries checked")
sys.exit(1 if bad or missing or not names else 0)
PY
pass "every cpputest.* entry declares SKIP_RETURN_CODE 77; the nghttpx and promtool cases are entries of their own"
echo "cpputest_skips: all passed"
