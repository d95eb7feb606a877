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

namespace {
cache::PersistStats persist_stats() {
  cache::PersistStats p;
  p.load = cache::LoadResult::loaded;
  p.loaded_entries = 321;
  p.skipped_entries = 4;
  p.load_seconds = 0.0425;
  p.loaded_stale_only = true;
  p.saves = 7;
  p.save_failures = 1;
  p.last_save_unix = 1796000000;
  p.last_save_bytes = 45678;
  p.last_save_copy_seconds = 0.002;
  p.last_save_write_seconds = 0.031;
  return p;
}
}  // namespace

TEST(CacheSurface, MetricsCarryTheCacheFileSeries) {
  web::MetricsInput in;
  in.cache = sample_stats();
  in.persist = persist_stats();
  const std::string m = web::render_metrics(in);
  for (const char* line :
       {"nxdns_cache_persist_load{result=\"loaded\"} 1\n", "nxdns_cache_persist_load{result=\"rejected\"} 0\n",
        "nxdns_cache_persist_load{result=\"missing\"} 0\n", "nxdns_cache_persist_load{result=\"unreadable\"} 0\n",
        "nxdns_cache_persist_loaded_entries 321\n", "nxdns_cache_persist_skipped_entries 4\n",
        "nxdns_cache_persist_load_seconds 0.0425\n", "nxdns_cache_persist_loaded_stale_only 1\n",
        "nxdns_cache_persist_saves_total 7\n", "nxdns_cache_persist_save_failures_total 1\n",
        "nxdns_cache_persist_last_save_timestamp_seconds 1796000000\n", "nxdns_cache_persist_last_save_bytes 45678\n",
        "nxdns_cache_persist_last_save_seconds{part=\"copy\"} 0.002\n",
        "nxdns_cache_persist_last_save_seconds{part=\"write\"} 0.031\n",
        "# TYPE nxdns_cache_persist_saves_total counter\n", "# TYPE nxdns_cache_persist_load_seconds gauge\n"}) {
    STRCMP_CONTAINS(line, m.c_str());
  }
  // Before the first save the timestamp is 0, not absent (one series, always there).
  in.persist = cache::PersistStats{};
  STRCMP_CONTAINS("nxdns_cache_persist_last_save_timestamp_seconds 0\n", web::render_metrics(in).c_str());
}

TEST(CacheSurface, NoCacheFileSeriesWithoutAFile) {
  web::MetricsInput in;
  in.cache = sample_stats();
  CHECK_TRUE(web::render_metrics(in).find("nxdns_cache_persist_") == std::string::npos);
  web::HealthInput h;
  h.cache = sample_stats();
  CHECK_TRUE(web::render_health(h).find("\"persist\"") == std::string::npos);
}

TEST(CacheSurface, HealthSaysWhenTheCacheWasLastSaved) {
  web::HealthInput in;
  in.cache = sample_stats();
  in.persist = persist_stats();
  STRCMP_CONTAINS(
      "\"stale_answers\":4,\"persist\":{\"load\":\"loaded\",\"loaded_entries\":321,\"load_seconds\":0.043,"
      "\"loaded_stale_only\":true,\"saves\":7,\"save_failures\":1,\"last_save_unix\":1796000000,"
      "\"last_save_bytes\":45678}}",
      web::render_health(in).c_str());
  in.persist = cache::PersistStats{};
  STRCMP_CONTAINS("\"last_save_unix\":null", web::render_health(in).c_str());
}
