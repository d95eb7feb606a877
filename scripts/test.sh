#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (run as root):
#   bash scripts/test.sh
# Installs what it needs, then runs each stage and prints a summary. Stages:
#   main      gcc, mbedTLS 2.28 (Debian), warnings as errors: every ctest suite
#   mbedtls3  the same suite against mbedTLS 3.6 built from Debian trixie's source
#   asan      AddressSanitizer + UndefinedBehaviorSanitizer build of the suite
#   clang     the whole tree built by clang-16, warnings as errors; unit tests
#   fuzz      libFuzzer targets (clang-14), a bounded run each
#   nix       every .nix file parses; NixOS module evaluation tests
#   aarch64   cross-build with the Debian toolchain, suite under qemu-user
# Choose stages with NXDNS_STAGES="main asan" (default: all). Build trees go
# to build-ci/<stage>, each stage's output to build-ci/<stage>.log. Exit
# status is non-zero when any stage fails.
#
# Skips are never passes. A stage that cannot run exits 77 (or its script is
# missing); a ctest test that cannot run exits its SKIP_RETURN_CODE (77) and
# ctest lists it as Skipped; a stage that ran but left a step out prints a
# line containing "skipped: WHY". The summary names every one of them as
# skipped, and with CI=true (.ci/run sets it) any skip fails the run: the
# README promises every stage and every test.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
STAGES=${NXDNS_STAGES:-"main mbedtls3 asan clang fuzz nix aarch64"}
JOBS=${NXDNS_JOBS:-$(nproc)}
OUT=$ROOT/build-ci
mkdir -p "$OUT"

CI_MODE=0
[ "${CI:-}" = true ] && CI_MODE=1
SKIP_STATUS=77

declare -A RESULT
declare -A SECONDS_TAKEN
declare -A SKIPS  # stage -> newline-separated skipped tests and steps
failed=0

# skips_in LOG: what a stage's output says did not run: ctest's "did not
# run" list (Skipped, Not Run, Disabled) and any "skipped: WHY" step line.
skips_in() {
  sed -n '/^The following tests did not run:/,/^$/p' "$1" | grep -E '\((Skipped|Not Run|Disabled)\)' |
    sed -E 's/^[[:space:]]*[0-9]+ - /test /'
  grep -iE '(^|[^a-z])skipped: ' "$1" | grep -vE '^(stage |====)' | sed -E 's/^[[:space:]]*/step: /' | sort -u
}

# skipped_result NAME WHAT: a skip is reported as one, and fails under CI.
skipped_result() {
  if [ "$CI_MODE" = 1 ]; then
    RESULT[$1]="FAILED ($2; CI=true: a skip is a failure)"
    failed=1
  else
    RESULT[$1]="skipped ($2)"
  fi
}

stage() {
  local name=$1
  shift
  echo
  echo "==================== stage: $name ===================="
  local t0=$SECONDS rc=0 log=$OUT/$name.log
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  SECONDS_TAKEN[$name]=$((SECONDS - t0))
  SKIPS[$name]=$(skips_in "$log")
  local nskip=0
  [ -n "${SKIPS[$name]}" ] && nskip=$(grep -c . <<<"${SKIPS[$name]}")
  if [ "$rc" = 0 ] && [ "$nskip" = 0 ]; then
    RESULT[$name]=passed
  elif [ "$rc" = 0 ]; then
    skipped_result "$name" "passed, but $nskip test(s)/step(s) skipped"
  elif [ "$rc" = "$SKIP_STATUS" ]; then
    skipped_result "$name" "the stage could not run here: exit $SKIP_STATUS"
  else
    RESULT[$name]="FAILED (exit $rc)"
    failed=1
  fi
  echo "==================== stage $name: ${RESULT[$name]} in ${SECONDS_TAKEN[$name]} s"
}

have_stage() { [[ " $STAGES " == *" $1 "* ]]; }

# Every compiling stage builds through the machine-wide ccache (most of a
# repeated run's build time is compiling what did not change); LAUNCHER is
# set once the deps stage has installed it.
source "$ROOT/scripts/ccache.sh"
LAUNCHER=()

configure_build_test() {
  local dir=$1
  shift
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXDNS_WERROR=ON "${LAUNCHER[@]}" "$@" \
    >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j"$JOBS" 2>&1 | grep -E "error|warning|Error" ; test "${PIPESTATUS[0]}" = 0 || return 1
  local rc=0
  (cd "$dir" && ctest --output-on-failure -j"$JOBS" --timeout 300) || rc=$?
  # ctest shows a passing test's output only in its log: a burst gate that
  # burst_acceptance measured twice is surfaced here, so it never passes unseen.
  local twice
  twice=$(grep -h "measured twice after a gate-only miss\|missed a gate with every answer NOERROR" \
            "$dir"/Testing/Temporary/LastTest*.log 2>/dev/null || true)
  [ -z "$twice" ] || { echo "re-measured after a gate-only miss:"; echo "$twice" | sed 's/^/  /'; }
  return "$rc"
}

stage_main() { configure_build_test "$OUT/main"; }

stage_mbedtls3() {
  local prefix
  prefix=$(bash "$ROOT/scripts/build-mbedtls3.sh" | tail -n1) || return 1
  [ -d "$prefix" ] || { echo "mbedTLS 3.6 prefix missing: $prefix"; return 1; }
  configure_build_test "$OUT/mbedtls3" -DMBEDTLS_ROOT="$prefix"
}

stage_asan() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    configure_build_test "$OUT/asan" -DNXDNS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
}

# The newest clang in bookworm (the fuzz stage's clang-14 builds only the
# fuzz targets): a compiler's new warnings, as errors, show up here first.
# Unit tests only: the integration suites add nothing a compiler can change
# that the main stage does not already run.
stage_clang() {
  local cc=${NXDNS_CLANG_CC:-clang-16} cxx=${NXDNS_CLANG_CXX:-clang++-16} dir=$OUT/clang
  if ! command -v "$cc" >/dev/null || ! command -v "$cxx" >/dev/null; then
    echo "$cc / $cxx not found (scripts/install-deps.sh installs clang-16)"
    return 1
  fi
  echo "compiler: $("$cxx" --version | head -n1)"
  CC=$cc CXX=$cxx cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXDNS_WERROR=ON \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${LAUNCHER[@]}" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j"$JOBS" 2>&1 | grep -E "error|warning|Error" ; test "${PIPESTATUS[0]}" = 0 || return 1
  (cd "$dir" && ctest -L unit --output-on-failure -j"$JOBS" --timeout 300)
}

stage_fuzz() { bash "$ROOT/scripts/fuzz.sh" "${NXDNS_FUZZ_SECONDS:-20}"; }
stage_nix() { bash "$ROOT/scripts/nix-checks.sh"; }
stage_aarch64() { NXDNS_AARCH64_BUILD=$OUT/aarch64 NXDNS_JOBS=$JOBS bash "$ROOT/scripts/aarch64.sh"; }

echo "nxdns test suite: stages: $STAGES$([ "$CI_MODE" = 1 ] && echo " (CI=true: skips fail)")"
stage deps bash "$ROOT/scripts/install-deps.sh"
[ "${RESULT[deps]}" = passed ] || { echo "dependency installation failed"; exit 1; }
use_ccache "$ROOT"

# Stages backed by their own script are visible skips until that script exists.
stage_script() { case $1 in fuzz) echo fuzz.sh ;; nix) echo nix-checks.sh ;; aarch64) echo aarch64.sh ;; esac; }
for s in $STAGES; do
  script=$(stage_script "$s")
  if [ -n "$script" ] && [ ! -f "$ROOT/scripts/$script" ]; then
    echo "stage $s: SKIPPED: scripts/$script is not in this tree"
    skipped_result "$s" "scripts/$script missing"
    continue
  fi
  stage "$s" "stage_$s"
done

echo
echo "==================== summary ===================="
for s in deps $STAGES; do
  printf '  %-10s %s %s\n' "$s" "${RESULT[$s]:-not run}" "${SECONDS_TAKEN[$s]:+(${SECONDS_TAKEN[$s]} s)}"
  if [ -n "${SKIPS[$s]:-}" ]; then
    while IFS= read -r line; do printf '             skipped: %s\n' "$line"; done <<<"${SKIPS[$s]}"
  fi
done
exit "$failed"
