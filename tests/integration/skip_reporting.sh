#!/usr/bin/env bash
# lib.sh's skip contract (issue 13, item 11b): a test that cannot run exits
# 77 (ctest's SKIP_RETURN_CODE here), never 0. Checked on throwaway child
# scripts that source lib.sh: a whole skip, a partial skip after passing
# checks, a failure that wins over a partial skip, and a plain pass.
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

rc=$(child 'pass "all good"')
[ "$rc" = 0 ] || fail "plain pass: exit $rc"
pass "a test with nothing skipped passes"
echo "skip_reporting: all passed"
