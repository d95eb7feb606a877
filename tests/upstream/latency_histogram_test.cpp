// LatencyHistogram::quantile: the p50/p95 the status page and /api/health
// show, estimated from the fixed buckets as Prometheus's histogram_quantile.
#include "upstream/latency_histogram.hpp"

#include <vector>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;

TEST_GROUP(LatencyQuantile){};

TEST(LatencyQuantile, NoneBeforeTheFirstObservation) {
  upstream::LatencyHistogram h;
  CHECK_FALSE(h.quantile(0.5).has_value());
}

TEST(LatencyQuantile, InterpolatesInsideTheBucketThatHoldsTheRank) {
  // Table: observations (ms) -> expected p50 and p95 in seconds.
  struct Row {
    std::vector<int> ms;
    double p50, p95;
  };
  const Row rows[] = {
      // One observation in (25, 50] ms: both ranks fall in that bucket.
      {{40}, 0.025 + 0.025 * 0.5, 0.025 + 0.025 * 0.95},
      // Ten in (0, 5]: linear from 0 inside the first bucket.
      {{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0.0025, 0.00475},
      // 19 fast (<= 5 ms) and 1 slow in (250, 500] ms: p50 stays fast,
      // p95 is the 19th observation = the top of the first bucket.
      {{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 300}, 0.005 * (10.0 / 19.0), 0.005},
      // Half in (40,50]->(25,50] bucket, half in (75, 100]: p95 in the upper.
      {{40, 40, 90, 90}, 0.05, 0.075 + 0.025 * 0.9},
  };
  for (const auto& r : rows) {
    upstream::LatencyHistogram h;
    for (int ms : r.ms) h.observe(std::chrono::milliseconds(ms));
    DOUBLES_EQUAL(r.p50, *h.quantile(0.5), 1e-9);
    DOUBLES_EQUAL(r.p95, *h.quantile(0.95), 1e-9);
  }
}

TEST(LatencyQuantile, PastTheTopBoundIsTheTopBound) {
  upstream::LatencyHistogram h;
  h.observe(7s);
  h.observe(9s);
  DOUBLES_EQUAL(5.0, *h.quantile(0.5), 1e-9);
  DOUBLES_EQUAL(5.0, *h.quantile(0.95), 1e-9);
}
