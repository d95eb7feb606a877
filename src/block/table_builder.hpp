#pragma once
// Loading blocklists without stalling a query.
//
// A worker thread reads the lists (files streamed in 64 KiB reads, or
// bodies already in memory), parses them and builds the table; the event
// loop only starts the thread and, when it has finished, takes the
// finished immutable table (shared_ptr<const BlockTable>) and hands it to
// `done`. The handoff is cache/persistence's: the worker sets an atomic
// flag after writing its result, and a loop timer looks at the flag every
// 10 ms, so no libevent call ever comes from the worker (the loop's
// event_base is not made thread-safe) and the loop never waits on a load.
// Queries keep being decided by the previous table until the swap, which
// is one shared_ptr assignment on the loop.
//
// One build at a time. A request while one runs waits, and a later request
// replaces a waiting one (counted as coalesced): however many reloads
// arrive during a build, one more build follows it, of the newest request.
//
// All or nothing: a list that cannot be read (a missing file, a directory,
// more than max_lists lists) fails the build with "PATH: why"; table()
// stays the previous table, so a reload with a typo keeps blocking what it
// blocked.
//
// Memory. During a build the process holds the table in use, the new
// table's entries (12 octets a distinct rule, plus 0.5 per rule of buckets
// once sorted), one 768 KiB chunk, one 64 KiB read buffer and one line of
// at most 4 KiB; never a whole file. At the swap the old table's pages go
// back to the kernel when the last reference to it drops
// (block/mapped_array.hpp). So the peak is about two tables plus 1 MiB:
// ~26 MiB with a million-rule table in use and a million-rule table being
// built (bench/blocklist.sh measures it).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "block/block_table.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::block {

struct ListSource {
  // A file's path; with `body` or `path`, only where the text came from (a
  // URL).
  std::string name;
  bool allow_list = false;
  std::shared_ptr<const std::string> body;
  // Where to read the text when it is not `name` (a URL list's copy on
  // disk).
  std::string path;
};

struct BuildResult {
  // Null when the build failed; then `error` says why, naming the list.
  std::shared_ptr<const BlockTable> table;
  std::optional<std::string> error;
  double wall_seconds = 0.0;
  double cpu_seconds = 0.0;  // the building thread's
};

// The whole build on the calling thread (the worker's job; also the
// benchmark's). `stop`, when given, is looked at between reads: a build
// that sees it set ends with the error "stopped".
BuildResult build_table(const std::vector<ListSource>& lists, const std::atomic<bool>* stop = nullptr);

class TableBuilder {
 public:
  // Called on the loop, never inside request(), with every build's result.
  // It may call request(); it must not destroy the builder.
  using Done = std::function<void(const BuildResult&)>;

  TableBuilder(loop::Scheduler& sched, Done done);
  // A running build is told to stop and joined (at most one read's time
  // plus, if it was sorting, the sort).
  ~TableBuilder();
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  void request(std::vector<ListSource> lists);

  // The table in use: the last build that succeeded (an empty table before).
  const std::shared_ptr<const BlockTable>& table() const { return table_; }
  bool building() const { return job_ != nullptr; }

  struct Stats {
    std::uint64_t requests = 0;
    std::uint64_t builds = 0;     // finished with a table
    std::uint64_t failures = 0;   // finished without one
    std::uint64_t coalesced = 0;  // requests replaced by a later one before they ran
  };
  Stats stats() const { return stats_; }

 private:
  struct Job;

  void start(std::vector<ListSource> lists);
  void poll();

  loop::Scheduler& sched_;
  Done done_;
  std::shared_ptr<const BlockTable> table_;
  std::unique_ptr<Job> job_;
  std::optional<std::vector<ListSource>> pending_;
  Stats stats_;
  loop::Timer poll_;
};

}  // namespace nxdns::block
