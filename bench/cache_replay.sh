#!/usr/bin/env bash
# The answer cache's eviction policies and prefetch on the household trace,
# with no network and no real time: bench/household_trace.py writes one
# trace per seed, and nxdns-cache-replay (bench/cache_replay.cpp) replays it
# through the real cache code under the fake clock, for each policy (LRU,
# SIEVE), cache size and prefetch setting. The figures depend on the code
# alone, not on the machine or its load: one tree always prints one table.
#
# usage: bash bench/cache_replay.sh BUILD_DIR [--seeds LIST] [--max-bytes LIST] [--results DIR]
#   --seeds      trace seeds, comma-separated (default 14,1,2,3; 14 is
#                household_trace.py's own default)
#   --max-bytes  cache sizes in octets, comma-separated (default 64, 128,
#                256 and 512 KiB, and cache.max_bytes' default of 16 MiB)
#   --results    the rows also go to DIR/cache_replay.json
#                (bench/bench_result.py); bench/render_performance.py renders
#                bench/cache.md's tables from it
# Needs python3 and, in BUILD_DIR, nxdns-cache-replay.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/cache_replay.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--seeds LIST] [--max-bytes LIST] [--results DIR]}
shift
SEEDS=14,1,2,3 SIZES=65536,131072,262144,524288,16777216
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) SEEDS=$2; shift 2 ;;
    --max-bytes) SIZES=$2; shift 2 ;;
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) echo "cache_replay: unknown option $1" >&2; exit 2 ;;
  esac
done
PROG=$BUILD/bench/nxdns-cache-replay
[ -x "$PROG" ] || { echo "cache_replay: $PROG not built (cmake --build $BUILD --target nxdns-cache-replay)" >&2; exit 2; }
# shellcheck source=lib.sh
source "$HERE/lib.sh"  # tsv, result_json
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nxdns-cache-replay.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

ROWS=$WORK/rows.tsv
tsv seed policy prefetch max_bytes hit_ratio upstream_per_1k prefetches evictions bytes entries >"$ROWS"
IFS=, read -r -a seeds <<<"$SEEDS"
for seed in "${seeds[@]}"; do
  python3 "$HERE/household_trace.py" --seed "$seed" >"$WORK/trace-$seed.txt"
  echo "== seed $seed"
  "$PROG" "$WORK/trace-$seed.txt" --max-bytes "$SIZES" | tee "$WORK/replay-$seed.txt"
  # The program's columns: policy prefetch max_bytes hit_ratio upstream/1k
  # prefetches evictions bytes entries.
  awk -v seed="$seed" 'NR > 1 { printf "%s", seed; for (i = 1; i <= 9; i++) printf "\t%s", $i; print "" }' \
    "$WORK/replay-$seed.txt" >>"$ROWS"
done
echo "hit_ratio = queries answered from the cache (fresh or stale) / all queries; upstream/1k = upstream exchanges"
echo "per 1,000 client queries; bytes and entries = the cache at the end of the trace"
nxdns=()
[ -x "$BUILD/src/cli/nxdns" ] && nxdns=(--nxdns "nxdns=$BUILD/src/cli/nxdns")
result_json cache_replay --table "rows=$ROWS" "${nxdns[@]}" --param "seeds=$SEEDS" --param "max_bytes=$SIZES"
