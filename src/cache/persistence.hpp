#pragma once
// The answer cache kept across restarts and reboots (cache.persist_file).
//
// At start, before the listeners serve, load() reads the file and puts every
// answer that passes the file's checks (cache/cache_file_format.hpp) and an
// upstream answer's checks (cache/loaded_answer.hpp) back into the store,
// aged by the wall-clock time since it was written, or as stale only when
// the clock is behind that time (cache/loaded_age.hpp). A file that is
// missing, torn, corrupted or foreign is reported in one log line and
// ignored: the daemon always starts.
//
// Saving, sparing an SD card: at most once per `interval`, and only when the
// store changed (an answer stored or removed) since the last save; once more
// at shutdown (save_before_exit) when it changed. The loop takes a copy of
// the entries (bench/cache_persist.cpp prices it), a worker thread adds the
// checksum and writes and syncs the file (cache/atomic_file.hpp), so no
// query waits for the disk. One write at a time; its thread is joined
// before the next starts and before this object dies.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cache/cache_file_format.hpp"
#include "cache/caching_pool.hpp"
#include "cache/loaded_age.hpp"
#include "loop/clock_step.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::cache {

struct PersistOptions {
  std::string path;
  // 96 writes a day at most: see docs/how-to/restarts.md for the figures.
  loop::Duration interval = std::chrono::minutes(15);
};

enum class LoadResult : std::uint8_t {
  not_run,
  loaded,      // the file passed its checks (its entries may all have been too old)
  missing,     // no file yet (first start)
  rejected,    // torn, truncated, corrupted, foreign, another version, too large
  unreadable,  // the file exists and cannot be read (permissions, I/O)
};
const char* describe(LoadResult r);

struct PersistStats {
  LoadResult load = LoadResult::not_run;
  std::uint64_t loaded_entries = 0;   // answers put back into the cache
  std::uint64_t skipped_entries = 0;  // in the file, not loaded: too old, refused by a check, over max_bytes
  double load_seconds = 0.0;          // reading, checking and storing, as measured
  bool loaded_stale_only = false;     // the clock was behind the file's time
  std::uint64_t saves = 0;
  std::uint64_t save_failures = 0;
  std::optional<std::int64_t> last_save_unix;  // the last successful save, wall clock
  std::uint64_t last_save_bytes = 0;           // its file size
  std::uint64_t last_save_entries = 0;
  double last_save_copy_seconds = 0.0;   // the loop's part: copying the entries
  double last_save_write_seconds = 0.0;  // checksum, write and syncs (the worker's, but at exit)
};

class CachePersistence {
 public:
  using ReadWall = std::function<loop::WallClock::time_point()>;

  CachePersistence(loop::Scheduler& sched, CachingPool& cache, PersistOptions opts,
                   ReadWall read_wall = &loop::WallClock::now);
  ~CachePersistence();
  CachePersistence(const CachePersistence&) = delete;
  CachePersistence& operator=(const CachePersistence&) = delete;

  // Once, before serving. Logs one line saying what happened.
  void load();
  // Arms the periodic save.
  void start();
  // Shutdown: waits for a write in progress, then, when the store changed
  // since the last save, writes it now, on this thread, whatever the
  // interval says (the loop no longer serves).
  void save_before_exit();
  // Waits for the write in progress, if any, and counts its result.
  void finish_write();

  PersistStats stats() const { return stats_; }
  const std::string& path() const { return opts_.path; }

  // What one write did (the worker's result, counted on the loop).
  struct WriteOutcome {
    std::optional<std::string> error;
    std::int64_t written_unix = 0;
    std::size_t bytes = 0;
    std::uint32_t entries = 0;
    std::uint64_t changes = 0;  // the store's changes() when the copy was taken
    double copy_seconds = 0.0;   // on the loop
    double seconds = 0.0;        // checksum, write, syncs
  };

 private:
  struct Write;

  void tick();
  void poll_write();
  void begin_write();
  void count(const WriteOutcome& w, bool at_exit);
  // The store's entries that are still of use, oldest first (on the loop).
  CacheFileWriter copy_entries();
  bool changed() const;

  loop::Scheduler& sched_;
  CachingPool& cache_;
  PersistOptions opts_;
  ReadWall read_wall_;
  PersistStats stats_;
  std::uint64_t saved_changes_ = 0;  // the store's changes() in the file
  std::unique_ptr<Write> write_;
  loop::Timer tick_;
  loop::Timer poll_;
};

}  // namespace nxdns::cache
