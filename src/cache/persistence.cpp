#include "cache/persistence.hpp"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <new>
#include <system_error>
#include <thread>
#include <utility>

#include "cache/atomic_file.hpp"
#include "cache/loaded_answer.hpp"
#include "log/log.hpp"

namespace nxdns::cache {

namespace {

using Seconds = std::chrono::duration<double>;
// How often the loop looks for the end of a write: a write takes a few
// hundred milliseconds on an SD card, and nothing waits for its result.
constexpr loop::Duration write_poll = std::chrono::milliseconds(100);
// A file entry's fixed part (cache_file_format.hpp).
constexpr std::size_t entry_overhead = 12;

std::int64_t unix_seconds(loop::WallClock::time_point t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string utc_text(std::int64_t unix) {
  const auto t = static_cast<time_t>(unix);
  tm parts{};
  char buf[32] = "?";
  if (::gmtime_r(&t, &parts)) std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buf;
}

std::string ms_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", seconds * 1000.0);
  return buf;
}

// The checksum, the write and the syncs: the worker's part (and the whole
// of the shutdown save).
CachePersistence::WriteOutcome write_file(const std::string& path, CacheFileWriter& w, std::int64_t written_unix,
                                          std::uint64_t changes) {
  const auto t0 = std::chrono::steady_clock::now();
  CachePersistence::WriteOutcome out;
  out.written_unix = written_unix;
  out.entries = w.entries();
  out.changes = changes;
  try {
    const dns::Bytes bytes = w.finish(written_unix);
    out.bytes = bytes.size();
    out.error = replace_file(path, bytes);
  } catch (const std::bad_alloc&) {
    out.error = "out of memory";
  }
  out.seconds = Seconds(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

const char* describe(LoadResult r) {
  switch (r) {
    case LoadResult::not_run: return "not_run";
    case LoadResult::loaded: return "loaded";
    case LoadResult::missing: return "missing";
    case LoadResult::rejected: return "rejected";
    case LoadResult::unreadable: return "unreadable";
  }
  return "unknown";
}

struct CachePersistence::Write {
  std::thread thread;
  std::atomic<bool> done{false};
  WriteOutcome outcome;  // written by the worker before `done`, read by the loop after
};

CachePersistence::CachePersistence(loop::Scheduler& sched, CachingPool& cache, PersistOptions opts,
                                   ReadWall read_wall)
    : sched_(sched), cache_(cache), opts_(std::move(opts)), read_wall_(std::move(read_wall)), tick_(sched),
      poll_(sched) {}

CachePersistence::~CachePersistence() {
  if (write_ && write_->thread.joinable()) write_->thread.join();
}

void CachePersistence::load() {
  const auto t0 = std::chrono::steady_clock::now();
  AnswerStore& store = cache_.store();
  const CacheOptions& o = cache_.options();
  const std::string& path = opts_.path;
  const auto finish = [&](LoadResult r) {
    stats_.load = r;
    stats_.load_seconds = Seconds(std::chrono::steady_clock::now() - t0).count();
    saved_changes_ = store.changes();
  };
  const FileRead read = read_whole_file(path, cache_file_header_size + store.max_bytes());
  switch (read.status) {
    case FileRead::Status::missing:
      log::info("cache file ", path, ": none yet; starting with an empty cache");
      return finish(LoadResult::missing);
    case FileRead::Status::too_large:
      log::warn("cache file ", path, " ignored: ", read.why, "; starting with an empty cache");
      return finish(LoadResult::rejected);
    case FileRead::Status::failed:
      log::warn("cache file ", path, " cannot be read (", read.why, "); starting with an empty cache");
      return finish(LoadResult::unreadable);
    case FileRead::Status::ok: break;
  }
  const DecodedCacheFile file = decode_cache_file(read.bytes, store.max_bytes());
  if (file.error != CacheFileError::none) {
    log::warn("cache file ", path, " ignored: ", file.why, "; starting with an empty cache");
    return finish(LoadResult::rejected);
  }

  const FileClock clock = judge_clock(file.written_unix, unix_seconds(read_wall_()));
  const loop::TimePoint now = sched_.now();
  const loop::Duration window = o.serve_stale ? o.stale_window : loop::Duration::zero();
  const std::size_t before = store.entries();
  std::uint64_t fresh = 0;
  // Oldest first: the store ends in the order it was saved in, and should
  // the file hold more than fits, the newest answers are the ones kept.
  for (const CacheFileEntry& e : file.entries) {
    LoadCheck c = check_loaded_answer(e.key, e.answer, e.ttl_seconds, o.clamp);
    if (!c.answer) continue;
    const auto age = loaded_age(c.answer->ttl_seconds, e.age_seconds, clock, now, window);
    if (!age) continue;
    if (store.put(std::move(c.answer->key), std::move(c.answer->answer), *age, c.answer->negative) &&
        age->stored_at + std::chrono::seconds(age->ttl_seconds) > now)
      ++fresh;
  }
  stats_.loaded_entries = store.entries() - before;
  stats_.skipped_entries = file.entries.size() - stats_.loaded_entries;
  stats_.loaded_stale_only = clock.verdict == ClockVerdict::behind_file;
  finish(LoadResult::loaded);
  const std::string written = utc_text(file.written_unix);
  log::info("cache file ", path, ": loaded ", stats_.loaded_entries, " of ", file.entries.size(), " answers (",
            std::min(fresh, stats_.loaded_entries), " fresh) in ", ms_text(stats_.load_seconds), "; written ", written,
            stats_.loaded_stale_only
                ? log::cat(", ahead of this host's clock (", utc_text(unix_seconds(read_wall_())),
                           "): the time since cannot be known, so every answer is stale until refreshed")
                : log::cat(", ", clock.elapsed_seconds, " s ago"));
}

void CachePersistence::start() {
  tick_.arm(opts_.interval, [this] { tick(); });
}

bool CachePersistence::changed() const {
  return std::as_const(cache_).store().changes() != saved_changes_;
}

void CachePersistence::tick() {
  // A write still running (a very slow card) is not joined by a second one.
  if (!write_ && changed()) begin_write();
  tick_.arm(opts_.interval, [this] { tick(); });
}

CacheFileWriter CachePersistence::copy_entries() {
  AnswerStore& store = cache_.store();
  CacheFileWriter w(store.bytes());
  const loop::TimePoint now = sched_.now();
  const CacheOptions& o = cache_.options();
  FreshnessRules rules;
  rules.stale_window = o.serve_stale ? o.stale_window : loop::Duration::zero();
  // Every entry costs the store more than its octets in the file
  // (AnswerStore::cost), so a store within max_bytes never reaches this
  // bound; it holds whatever the store's accounting says.
  const std::size_t bound = store.max_bytes();
  store.for_each_oldest_first([&](std::string_view key, const StoredAnswer& a) {
    if (freshness_at(a.age, now, rules) == Freshness::expired) return;
    if (w.payload_size() + entry_overhead + key.size() + a.answer.size() > bound) return;
    w.add(key, a.answer, a.age.ttl_seconds, age_seconds(a.age, now));
  });
  return w;
}

void CachePersistence::begin_write() {
  auto write = std::make_unique<Write>();
  Write* const wr = write.get();
  const std::int64_t at = unix_seconds(read_wall_());
  const std::uint64_t changes = cache_.store().changes();
  const auto t0 = std::chrono::steady_clock::now();
  CacheFileWriter copy = copy_entries();
  const double copy_seconds = Seconds(std::chrono::steady_clock::now() - t0).count();
  try {
    wr->thread = std::thread([wr, path = opts_.path, w = std::move(copy), at, changes, copy_seconds]() mutable {
      wr->outcome = write_file(path, w, at, changes);
      wr->outcome.copy_seconds = copy_seconds;
      wr->done.store(true, std::memory_order_release);
    });
  } catch (const std::system_error& e) {
    WriteOutcome failed;
    failed.error = log::cat("cannot start the writer thread: ", e.what());
    count(failed, false);
    return;
  }
  write_ = std::move(write);
  poll_.arm(write_poll, [this] { poll_write(); });
}

void CachePersistence::poll_write() {
  if (!write_) return;
  if (!write_->done.load(std::memory_order_acquire)) {
    poll_.arm(write_poll, [this] { poll_write(); });
    return;
  }
  finish_write();
}

void CachePersistence::finish_write() {
  if (!write_) return;
  poll_.disarm();
  write_->thread.join();
  const WriteOutcome out = std::move(write_->outcome);
  write_.reset();
  count(out, false);
}

void CachePersistence::save_before_exit() {
  finish_write();
  tick_.disarm();
  if (!changed()) {
    log::info("cache file ", opts_.path, ": unchanged since it was last written");
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  CacheFileWriter w = copy_entries();
  const double copy_seconds = Seconds(std::chrono::steady_clock::now() - t0).count();
  WriteOutcome out = write_file(opts_.path, w, unix_seconds(read_wall_()), cache_.store().changes());
  out.copy_seconds = copy_seconds;
  count(out, true);
}

void CachePersistence::count(const WriteOutcome& w, bool at_exit) {
  if (w.error) {
    ++stats_.save_failures;
    log::warn("cache file ", opts_.path, ": save failed (", *w.error, "); the file there before, if any, is intact");
    return;
  }
  ++stats_.saves;
  stats_.last_save_unix = w.written_unix;
  stats_.last_save_bytes = w.bytes;
  stats_.last_save_entries = w.entries;
  stats_.last_save_copy_seconds = w.copy_seconds;
  stats_.last_save_write_seconds = w.seconds;
  saved_changes_ = w.changes;
  const std::string line =
      log::cat("cache file ", opts_.path, ": saved ", w.entries, w.entries == 1 ? " answer, " : " answers, ", w.bytes,
               " octets (copied in ", ms_text(w.copy_seconds), ", written in ", ms_text(w.seconds), ")");
  if (at_exit) {
    log::info(line);
  } else {
    log::debug(line);
  }
}

}  // namespace nxdns::cache
