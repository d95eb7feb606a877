#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan) and runs each for
# a bounded time over its checked-in seed corpus. Any crash, leak or
# sanitizer report fails the run. Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]
# Longer runs: scripts/fuzz.sh 3600 (new inputs go to a scratch corpus under
# build-ci/fuzz/corpus-*, never into the repository's seed folders).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-20}
OUT=$ROOT/build-ci/fuzz
mkdir -p "$OUT"
CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$OUT" -DNXDNS_FUZZ=ON -DNXDNS_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/configure.log" 2>&1 || { cat "$OUT/configure.log"; exit 1; }
targets=()
for f in "$ROOT"/tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$f" .cpp)"); done
cmake --build "$OUT" -j"$(nproc)" --target "${targets[@]}" >"$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
status=0
for t in "${targets[@]}"; do
  name=${t%_fuzz}
  scratch=$OUT/corpus-$name
  mkdir -p "$scratch"
  echo "fuzz: $t for ${SECS}s (seeds: tests/fuzz/corpus/$name)"
  if "$OUT/tests/fuzz/$t" -max_total_time="$SECS" -print_final_stats=1 -artifact_prefix="$OUT/$t-" \
      "$scratch" "$ROOT/tests/fuzz/corpus/$name" >"$OUT/$t.log" 2>&1; then
    echo "fuzz: $t: $(grep -E 'stat::number_of_executed_units' "$OUT/$t.log" | awk '{print $2}') runs, no findings"
  else
    echo "fuzz: $t: FAILED"
    tail -n 40 "$OUT/$t.log"
    status=1
  fi
done
exit "$status"
