#!/usr/bin/env bash
# lib.sh's skip contract: a test that cannot run exits
# 77 (ctest's SKIP_RETURN_CODE here), never 0. Checked on throwaway child
# scripts that source lib.sh: a whole skip, a partial skip after passing
# checks, a failure that wins over a partial skip, and a plain pass; then
# scripts/test.sh's summary over stub stages, with and without CI=true.
source "$(dirname "$0")/lib.sh"

LIB=$(cd "$(dirname "$0")" && pwd)/lib.sh
child() {  # child BODY -> prints the exit status
  printf 'source "%s"\n%s\n' "$LIB" "$1" >"$WORK/child.sh"
  local rc=0
  bash "$WORK/child.sh" "$NXDNS" "$FIXTURES" >"$WORK/child.out" 2>&1 || rc=$?
  echo "$rc"
}

rc=$(child 'skip "promised tool missing"; echo unreachable')
[ "$rc" = 77 ] || fail "skip: exit $rc, want 77"
grep -q '^SKIPPED: promised tool missing' "$WORK/child.out" || fail "skip: no SKIPPED line"
grep -q unreachable "$WORK/child.out" && fail "skip: the script went on"
pass "skip: exit 77 with the reason"

rc=$(child 'pass "one check"; skip_part "promtool check"; pass "another check"')
[ "$rc" = 77 ] || fail "skip_part: exit $rc, want 77"
grep -q 'another check' "$WORK/child.out" || fail "skip_part stopped the script"
grep -q 'SKIPPED (in part): \[promtool check\]' "$WORK/child.out" || fail "skip_part: not named at the end"
pass "skip_part: the rest runs, the test ends skipped, naming the part"

rc=$(child 'skip_part "promtool check"; fail "a real failure"')
[ "$rc" = 1 ] || fail "fail after skip_part: exit $rc, want 1"
pass "a failure wins over a partial skip"

rc=$(child 'need_fixture nxdns-no-such-fixture')
[ "$rc" = 77 ] || fail "need_fixture: exit $rc, want 77"
rc=$(child 'require_program nxdns-no-such-program "apt-get install nothing"')
[ "$rc" = 77 ] || fail "require_program: exit $rc, want 77"
pass "a missing fixture program or tool is a skip"

# nghttpx is taken only where it can run: a file on PATH that is not
# executable is passed over (the CppUTest DoH cases search the same way).
rc=$(child 'mkdir -p "$WORK/noexec"; : >"$WORK/noexec/nghttpx"
found=$(PATH="$WORK/noexec"; require_nghttpx >/dev/null; echo "$NGHTTPX") || true
[ "$found" != "$WORK/noexec/nghttpx" ] || fail "require_nghttpx took $found, which cannot run"')
[ "$rc" = 0 ] || fail "require_nghttpx: exit $rc: $(cat "$WORK/child.out")"
pass "require_nghttpx passes over an nghttpx that cannot run"

rc=$(child 'pass "all good"')
[ "$rc" = 0 ] || fail "plain pass: exit $rc"
pass "a test with nothing skipped passes"
# scripts/test.sh's summary, on a throwaway tree whose stage scripts are
# stubs: a stage that exits 77, one that passes but prints a skipped step,
# one whose script is missing. Skipped, never passed; failures under CI=true.
TREE=$WORK/tree
mkdir -p "$TREE/scripts"
cp "$(dirname "$0")/../../scripts/test.sh" "$TREE/scripts/"
echo 'echo deps stub' >"$TREE/scripts/install-deps.sh"
printf 'echo "parse: 1 file"\necho "evaluation tests: skipped: no nixpkgs lib"\n' >"$TREE/scripts/nix-checks.sh"
printf 'echo "no fuzzer here"\nexit 77\n' >"$TREE/scripts/fuzz.sh"
rc=0
env -u CI NXDNS_STAGES="nix fuzz aarch64" bash "$TREE/scripts/test.sh" >"$WORK/suite.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "test.sh without CI: exit $rc, want 0 (skips are not failures there): $(cat "$WORK/suite.out")"
grep -qE '^  nix +skipped \(passed, but 1 test\(s\)/step\(s\) skipped\)' "$WORK/suite.out" || fail "nix stage not shown as skipped"
grep -qE 'skipped: step: evaluation tests: skipped: no nixpkgs lib' "$WORK/suite.out" || fail "the skipped step is not listed"
grep -qE '^  fuzz +skipped \(the stage could not run here: exit 77\)' "$WORK/suite.out" || fail "exit 77 stage not shown as skipped"
grep -qE '^  aarch64 +skipped \(scripts/aarch64.sh missing\)' "$WORK/suite.out" || fail "missing stage script not shown as skipped"
rc=0
CI=true NXDNS_STAGES="nix fuzz aarch64" bash "$TREE/scripts/test.sh" >"$WORK/suite-ci.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "test.sh with CI=true: exit $rc, want 1"
[ "$(grep -cE '^  (nix|fuzz|aarch64) +FAILED \(.*CI=true: a skip is a failure\)' "$WORK/suite-ci.out")" = 3 ] ||
  fail "CI=true: every skipped stage must fail: $(sed -n '/summary/,$p' "$WORK/suite-ci.out")"
# A ctest stage's "did not run" list is read the same way.
printf 'The following tests did not run:\n\t 17 - integration.observability (Skipped)\n\n' >"$WORK/ctest.log"
source <(sed -n '/^skips_in()/,/^}/p' "$TREE/scripts/test.sh")
[ "$(skips_in "$WORK/ctest.log")" = "test integration.observability (Skipped)" ] || fail "ctest skips: '$(skips_in "$WORK/ctest.log")'"
pass "scripts/test.sh: skipped stages, steps and ctest tests listed as skipped; CI=true fails them"
echo "skip_reporting: all passed"
