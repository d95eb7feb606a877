// The `cache:` section: defaults, every key read, errors with FILE:LINE:COL.
#include <string>

#include "config/config.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::config::Config;
using nxdns::config::Error;
using nxdns::config::load_string;

namespace {
const std::string kUp =
    "upstreams:\n"
    "  - url: \"tls://127.0.0.1:853\"\n"
    "    tls_name: \"dot.test\"\n";

std::string error_of(const std::string& yaml) {
  try {
    (void)load_string(yaml, "c.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  FAIL(("expected an error for:\n" + yaml).c_str());
  return {};
}
}  // namespace

TEST_GROUP(CacheConfig){};

TEST(CacheConfig, DefaultsWhenAbsent) {
  const Config c = load_string(kUp, "c.yaml");
  CHECK_TRUE(c.cache.enabled);
  UNSIGNED_LONGS_EQUAL(16u << 20, c.cache.max_bytes);
  UNSIGNED_LONGS_EQUAL(0, c.cache.min_ttl);
  UNSIGNED_LONGS_EQUAL(86400, c.cache.max_ttl);
  CHECK_TRUE(c.cache.prefetch);
  CHECK_TRUE(c.cache.serve_stale);
  LONGS_EQUAL(86400, c.cache.stale_window.count());
  CHECK_TRUE(c.cache.persist_file.empty());  // off
  LONGS_EQUAL(900, c.cache.persist_interval.count());
}

TEST(CacheConfig, EveryKeyIsRead) {
  const Config c = load_string(kUp +
                                   "cache:\n  enabled: false\n  max_bytes: 1048576\n  min_ttl: 30\n  max_ttl: 3600\n"
                                   "  prefetch: false\n  serve_stale: false\n  stale_window: 7200\n"
                                   "  persist_file: /var/lib/nxdns/cache\n  persist_interval: 3600\n",
                               "c.yaml");
  CHECK_FALSE(c.cache.enabled);
  UNSIGNED_LONGS_EQUAL(1048576, c.cache.max_bytes);
  UNSIGNED_LONGS_EQUAL(30, c.cache.min_ttl);
  UNSIGNED_LONGS_EQUAL(3600, c.cache.max_ttl);
  CHECK_FALSE(c.cache.prefetch);
  CHECK_FALSE(c.cache.serve_stale);
  LONGS_EQUAL(7200, c.cache.stale_window.count());
  STRCMP_EQUAL("/var/lib/nxdns/cache", c.cache.persist_file.c_str());
  LONGS_EQUAL(3600, c.cache.persist_interval.count());
}

TEST(CacheConfig, PersistKeysAreValidated) {
  STRCMP_CONTAINS("c.yaml:5:17: cache.persist_file: must be an absolute path, got \"cache.bin\"",
                  error_of(kUp + "cache:\n  persist_file: cache.bin\n").c_str());
  STRCMP_CONTAINS("cache.persist_file: names a directory, got \"/var/lib/nxdns/\"",
                  error_of(kUp + "cache:\n  persist_file: /var/lib/nxdns/\n").c_str());
  STRCMP_CONTAINS("cache.persist_file: must not be empty", error_of(kUp + "cache:\n  persist_file: \"\"\n").c_str());
  STRCMP_CONTAINS("c.yaml:5:21: cache.persist_interval: must be between 60 and 86400",
                  error_of(kUp + "cache:\n  persist_interval: 59\n").c_str());
  STRCMP_CONTAINS("cache.persist_interval: must be between 60 and 86400",
                  error_of(kUp + "cache:\n  persist_interval: 86401\n").c_str());
  STRCMP_CONTAINS("cache.persist_interval: expected a decimal integer, got \"15m\"", error_of(kUp + "cache:\n  persist_interval: 15m\n").c_str());
}

TEST(CacheConfig, ErrorsNameTheKeyAndPlace) {
  STRCMP_CONTAINS("c.yaml:6:3: cache.size: unknown key \"size\"", error_of(kUp + "cache:\n  enabled: true\n  size: 1\n").c_str());
  STRCMP_CONTAINS("c.yaml:5:14: cache.max_bytes: must be between 65536 and 1073741824",
                  error_of(kUp + "cache:\n  max_bytes: 10\n").c_str());
  STRCMP_CONTAINS("c.yaml:5:12: cache.min_ttl: min_ttl (600) must not exceed max_ttl (300)",
                  error_of(kUp + "cache:\n  min_ttl: 600\n  max_ttl: 300\n").c_str());
  STRCMP_CONTAINS("cache.serve_stale: expected true or false", error_of(kUp + "cache:\n  serve_stale: yes\n").c_str());
  STRCMP_CONTAINS("cache: expected a mapping", error_of(kUp + "cache: 5\n").c_str());
}
