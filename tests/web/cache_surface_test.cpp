// The cache on /metrics and /api/health.
#include <string>

#include "web/metrics.hpp"
#include "web/status.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {
cache::CacheStats sample_stats() {
  cache::CacheStats c;
  c.hits = 30;
  c.misses = 10;
  c.stale_served = 4;
  c.stale_refreshes_skipped = 3;
  c.prefetches = 5;
  c.dedup_joins = 29;
  c.evictions = 7;
  c.flushed = 2;
  c.stores = 9;
  c.not_stored[static_cast<std::size_t>(cache::Verdict::no_soa)] = 6;
  c.entries = 11;
  c.bytes = 12345;
  c.max_bytes = 16777216;
  c.flights = 1;
  return c;
}
}  // namespace

TEST_GROUP(CacheSurface){};

TEST(CacheSurface, MetricsCarryEveryCacheSeries) {
  web::MetricsInput in;
  in.cache = sample_stats();
  const std::string m = web::render_metrics(in);
  for (const char* line :
       {"nxdns_cache_hits_total 30\n", "nxdns_cache_misses_total 10\n", "nxdns_cache_stale_answers_total 4\n",
        "nxdns_cache_stale_refreshes_skipped_total 3\n",
        "nxdns_cache_prefetches_total 5\n", "nxdns_cache_dedup_joins_total 29\n", "nxdns_cache_evictions_total 7\n",
        "nxdns_cache_flushed_total 2\n", "nxdns_cache_stores_total 9\n", "nxdns_cache_not_stored_total{reason=\"no_soa\"} 6\n",
        "nxdns_cache_entries 11\n", "nxdns_cache_bytes 12345\n", "nxdns_cache_max_bytes 16777216\n",
        "nxdns_cache_exchanges_in_flight 1\n", "# TYPE nxdns_cache_hits_total counter\n",
        "# TYPE nxdns_cache_bytes gauge\n"}) {
    STRCMP_CONTAINS(line, m.c_str());
  }
}

TEST(CacheSurface, NoCacheSeriesWhenDisabled) {
  web::MetricsInput in;
  CHECK_TRUE(web::render_metrics(in).find("nxdns_cache_") == std::string::npos);
}

TEST(CacheSurface, HealthCarriesACacheSummary) {
  web::HealthInput in;
  in.cache = sample_stats();
  STRCMP_CONTAINS(
      "\"cache\":{\"enabled\":true,\"entries\":11,\"bytes\":12345,\"max_bytes\":16777216,\"hits\":30,\"misses\":10,"
      "\"hit_ratio\":0.75,\"stale_answers\":4}",
      web::render_health(in).c_str());
  in.cache = cache::CacheStats{};
  STRCMP_CONTAINS("\"hit_ratio\":null", web::render_health(in).c_str());
}
