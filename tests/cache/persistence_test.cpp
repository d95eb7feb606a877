// The cache file end to end, under a fake loop clock and a fake wall clock,
// with real files in a temporary directory: what a save writes a later
// start loads, aged by the wall clock; a clock behind the file loads stale
// only; a missing or damaged file is one log line and an empty cache; saves
// happen at most once per interval and only after a change.
#include "cache/persistence.hpp"
#include "cache/answers.hpp"
#include "cache/caching_pool_rig.hpp"
#include "log/log.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace std::chrono_literals;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/nxdns-persist-test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

struct LogLines {
  std::vector<std::string> lines;
  LogLines() {
    log::set_sink([](log::Level, std::string_view m, void* ctx) { static_cast<LogLines*>(ctx)->lines.emplace_back(m); },
                  this);
  }
  ~LogLines() { log::set_sink(nullptr, nullptr); }
  std::size_t containing(const std::string& s) const {
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(s) != std::string::npos;
    return n;
  }
};

const loop::WallClock::time_point saved_at{std::chrono::seconds(1796000000)};

// One daemon run: the cache rig's pool and cache, and the cache file.
struct Run : rig::Rig {
  std::unique_ptr<CachePersistence> persist;
  loop::WallClock::time_point wall;

  Run(const std::string& file, loop::WallClock::time_point wall_now, CacheOptions o = {}) : Rig(o), wall(wall_now) {
    persist = std::make_unique<CachePersistence>(sched, *cache, PersistOptions{file, 15min}, [this] { return wall; });
  }
  // The file's owner goes before the cache it reads (the rig then drops the
  // cache before the pool).
  ~Run() { persist.reset(); }
  // A query whose hit or wait is settled before the test looks.
  std::size_t ask(const std::string& name, std::uint16_t id = 7) {
    const std::size_t i = Rig::ask(name.c_str(), id);
    sched.run_ready();
    return i;
  }
  void learn(const std::string& name, std::uint32_t ttl = 300) {
    ask(name);
    answer(ttl);
  }
  // Lets time pass on both clocks.
  void advance(loop::Duration d) {
    wall += std::chrono::duration_cast<loop::WallClock::duration>(d);
    sched.advance(d);
  }
};

std::string name_n(int i) { return "n" + std::to_string(i) + ".persist.test"; }

}  // namespace

TEST_GROUP(CachePersistence){};

TEST(CachePersistence, WhatIsSavedAtExitIsLoadedAgedByTheWallClock) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  {
    Run a(file, saved_at);
    a.persist->load();
    for (int i = 0; i < 3; ++i) a.learn(name_n(i));
    a.advance(20s);  // each entry 20 s old when saved
    a.persist->save_before_exit();
    const PersistStats s = a.persist->stats();
    CHECK_EQUAL(1u, s.saves);
    CHECK_EQUAL(3u, s.last_save_entries);
    CHECK_EQUAL(std::chrono::floor<std::chrono::seconds>(a.wall.time_since_epoch()).count(), *s.last_save_unix);
    CHECK_EQUAL(std::filesystem::file_size(file), s.last_save_bytes);
    CHECK_FALSE(std::filesystem::exists(file + ".tmp"));
    CHECK_TRUE((std::filesystem::status(file).permissions() & std::filesystem::perms::group_read) ==
               std::filesystem::perms::none);
  }
  // Restarted 100 s later (a fresh loop clock: a reboot).
  Run b(file, saved_at + 120s);
  b.persist->load();
  const PersistStats s = b.persist->stats();
  CHECK(s.load == LoadResult::loaded);
  CHECK_EQUAL(3u, s.loaded_entries);
  CHECK_EQUAL(0u, s.skipped_entries);
  CHECK_FALSE(s.loaded_stale_only);
  for (int i = 0; i < 3; ++i) {
    const std::size_t q = b.ask(name_n(i));
    CHECK_TRUE(q < b.got.size() && b.got[q].has_value());
    CHECK_EQUAL(300u - 20u - 100u, b.ttl(q));  // 20 s old at the save, 100 s since
  }
  CHECK_EQUAL(0u, b.fake->started());  // no upstream query
  CHECK_EQUAL(3u, b.cache->stats().hits);
}

TEST(CachePersistence, EntriesPastTheirStaleWindowAreNotLoaded) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  CacheOptions o;
  o.stale_window = 60s;
  {
    Run a(file, saved_at, o);
    a.learn(name_n(0), 30);
    a.learn(name_n(1), 3600);
    a.persist->save_before_exit();
  }
  Run b(file, saved_at + 120s, o);  // n0: 30 + 60 < 120: gone
  b.persist->load();
  CHECK_EQUAL(1u, b.persist->stats().loaded_entries);
  CHECK_EQUAL(1u, b.persist->stats().skipped_entries);
  CHECK_EQUAL(1u, b.cache->stats().entries);
}

TEST(CachePersistence, AClockBehindTheFileLoadsStaleOnly) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  {
    Run a(file, saved_at);
    a.learn(name_n(0), 86400);  // fresh for a day, by any clock
    a.persist->save_before_exit();
  }
  // A Pi without RTC, before NTP: its clock reads a week before the save.
  LogLines logs;
  Run b(file, saved_at - std::chrono::hours(24 * 7));
  b.persist->load();
  CHECK_TRUE(b.persist->stats().loaded_stale_only);
  CHECK_EQUAL(1u, b.persist->stats().loaded_entries);
  CHECK_EQUAL(1u, logs.containing("ahead of this host's clock"));
  // Not answered as fresh: the client waits for the upstream...
  const std::size_t q = b.ask(name_n(0));
  CHECK_EQUAL(1u, b.fake->started());
  CHECK_FALSE(b.got[q].has_value());
  // ...and, the upstream unreachable, gets the stale answer (RFC 8767).
  b.fake->fail_oldest(upstream::Cause::connect_failed);
  b.sched.run_ready();
  CHECK_TRUE(b.got[q].has_value() && b.got[q]->ok);
  CHECK_EQUAL(stale_answer_ttl, b.ttl(q));
  CHECK_EQUAL(1u, b.cache->stats().stale_served);
}

TEST(CachePersistence, AMissingFileIsOneLineAndAnEmptyCache) {
  TempDir dir;
  LogLines logs;
  Run r(dir.path + "/cache", saved_at);
  r.persist->load();
  CHECK(r.persist->stats().load == LoadResult::missing);
  CHECK_EQUAL(0u, r.cache->stats().entries);
  CHECK_EQUAL(1u, logs.lines.size());
  CHECK_EQUAL(1u, logs.containing("cache file " + dir.path + "/cache: none yet"));
}

TEST(CachePersistence, ADamagedFileIsOneLineNamingItAndWhy) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  {
    Run a(file, saved_at);
    for (int i = 0; i < 3; ++i) a.learn(name_n(i));
    a.persist->save_before_exit();
  }
  std::ifstream in(file, std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct Damage {
    const char* what;
    std::string bytes;
    const char* why;
  };
  std::string flipped = good;
  flipped[flipped.size() - 5] ^= 0x20;
  const Damage cases[] = {
      {"torn in the payload", good.substr(0, good.size() - 7), "truncated"},
      {"torn in the header", good.substr(0, 20), "torn"},
      {"a flipped octet", flipped, "checksum mismatch"},
      {"empty", "", "the file is empty"},
      {"another program's file", "#!/bin/sh\necho hello\n", "not an nxdns cache file"},
  };
  for (const Damage& d : cases) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << d.bytes;
    LogLines logs;
    Run b(file, saved_at + 1s);
    b.persist->load();
    if (b.persist->stats().load != LoadResult::rejected) FAIL(d.what);
    CHECK_EQUAL(0u, b.cache->stats().entries);
    if (logs.lines.size() != 1 || logs.containing("cache file " + file + " ignored: ") != 1 ||
        logs.containing(d.why) != 1)
      FAIL((std::string(d.what) + ": " + (logs.lines.empty() ? "no line" : logs.lines[0])).c_str());
    b.ask(name_n(0));
    CHECK_EQUAL(1u, b.fake->started());  // nothing came from the file
  }
}

TEST(CachePersistence, SavesAtMostOncePerIntervalAndOnlyAfterAChange) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  Run r(file, saved_at);
  r.persist->load();
  r.persist->start();
  r.advance(15min);  // nothing changed since the (missing) file
  r.persist->finish_write();
  CHECK_EQUAL(0u, r.persist->stats().saves);
  CHECK_FALSE(std::filesystem::exists(file));

  r.learn(name_n(0));
  r.advance(14min);
  r.persist->finish_write();
  CHECK_EQUAL(0u, r.persist->stats().saves);  // not before the interval
  r.advance(1min);
  r.persist->finish_write();  // the tick started a write on the worker
  CHECK_EQUAL(1u, r.persist->stats().saves);
  CHECK_TRUE(std::filesystem::exists(file));

  r.advance(15min);  // no change since
  r.persist->finish_write();
  CHECK_EQUAL(1u, r.persist->stats().saves);

  r.learn(name_n(1));
  r.advance(15min);
  r.persist->finish_write();
  CHECK_EQUAL(2u, r.persist->stats().saves);
  CHECK_EQUAL(2u, r.persist->stats().last_save_entries);
  // Nothing new at exit: the file is not rewritten.
  r.persist->save_before_exit();
  CHECK_EQUAL(2u, r.persist->stats().saves);
}

TEST(CachePersistence, TheLoopLearnsOfAFinishedWriteByItself) {
  TempDir dir;
  Run r(dir.path + "/cache", saved_at);
  r.persist->load();
  r.persist->start();
  r.learn(name_n(0));
  r.advance(15min);
  // No finish_write(): the loop's poll collects the worker's result.
  for (int i = 0; i < 600 && r.persist->stats().saves == 0; ++i) {
    ::usleep(10000);
    r.advance(100ms);
  }
  CHECK_EQUAL(1u, r.persist->stats().saves);
}

TEST(CachePersistence, AFailedSaveIsCountedAndLogged) {
  TempDir dir;
  LogLines logs;
  const std::string file = dir.path + "/no-such-dir/cache";
  Run r(file, saved_at);
  r.persist->load();
  r.learn(name_n(0));
  r.persist->save_before_exit();
  CHECK_EQUAL(0u, r.persist->stats().saves);
  CHECK_EQUAL(1u, r.persist->stats().save_failures);
  CHECK_FALSE(r.persist->stats().last_save_unix.has_value());
  CHECK_EQUAL(1u, logs.containing("cache file " + file + ": save failed (cannot create"));
}

TEST(CachePersistence, ASmallerCacheKeepsTheNewestAnswers) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  {
    Run a(file, saved_at);
    for (int i = 0; i < 400; ++i) a.learn(name_n(i));
    a.persist->save_before_exit();
  }
  CacheOptions small;
  small.max_bytes = 64 * 1024;
  Run b(file, saved_at + 1s, small);
  b.persist->load();
  const PersistStats s = b.persist->stats();
  CHECK_TRUE(s.loaded_entries > 0 && s.loaded_entries < 400);
  CHECK_EQUAL(400u, s.loaded_entries + s.skipped_entries);
  CHECK_TRUE(b.cache->stats().bytes <= small.max_bytes);
  CHECK_TRUE(b.cache->store().find(make_key(*dns::name_from_text(name_n(399)), 1, 1, false, false)) != nullptr);
  CHECK_TRUE(b.cache->store().find(make_key(*dns::name_from_text(name_n(0)), 1, 1, false, false)) == nullptr);
}

TEST(CachePersistence, ExpiredEntriesAreNotSaved) {
  TempDir dir;
  const std::string file = dir.path + "/cache";
  CacheOptions o;
  o.stale_window = 10s;
  {
    Run a(file, saved_at, o);
    a.learn(name_n(0), 5);
    a.learn(name_n(1), 3600);
    a.advance(30s);  // n0 is past TTL and window, still in the store
    CHECK_EQUAL(2u, a.cache->stats().entries);
    a.persist->save_before_exit();
    CHECK_EQUAL(1u, a.persist->stats().last_save_entries);
  }
}
