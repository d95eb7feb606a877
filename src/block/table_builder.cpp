#include "block/table_builder.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <exception>
#include <new>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "block/rule_collector.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"

namespace nxdns::block {

namespace {

// How often the loop looks for the end of a build: a million-rule build
// takes about a second (bench/blocklist.sh), so 10 ms adds at most 1 % to
// when the new table starts deciding, for one timer wakeup per 10 ms while
// a build runs and none otherwise.
constexpr loop::Duration build_poll = std::chrono::milliseconds(10);
constexpr std::size_t read_size = 64 * 1024;

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

// Streams one list into the parser. An error names the list.
std::optional<std::string> read_list(const ListSource& src, ListParser& parser, std::vector<char>& buf,
                                     const std::atomic<bool>* stop) {
  if (src.body) {
    std::string_view text(*src.body);
    while (!text.empty()) {
      if (stopped(stop)) return std::string("stopped");
      const std::string_view piece = text.substr(0, read_size);
      parser.feed(piece);
      text.remove_prefix(piece.size());
    }
    parser.finish();
    return std::nullopt;
  }
  const std::string& file = src.path.empty() ? src.name : src.path;
  loop::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return log::cat(src.name, ": ", std::generic_category().message(errno));
  for (;;) {
    if (stopped(stop)) return std::string("stopped");
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return log::cat(src.name, ": ", std::generic_category().message(errno));
    if (n == 0) break;
    parser.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  parser.finish();
  return std::nullopt;
}

std::optional<std::string> collect(const std::vector<ListSource>& lists, RuleCollector& rules,
                                   const std::atomic<bool>* stop) {
  std::vector<char> buf(read_size);
  for (const ListSource& src : lists) {
    const std::optional<std::uint8_t> index = rules.begin_list(src.name, src.allow_list);
    if (!index) return log::cat(src.name, ": more than ", max_lists, " lists");
    ListParser parser([&rules, list = *index](const Rule& r) { rules.add(list, r); },
                      ParseOptions{src.allow_list});
    if (std::optional<std::string> error = read_list(src, parser, buf, stop)) return error;
    rules.end_list(*index, parser.counts());
  }
  return std::nullopt;
}

}  // namespace

BuildResult build_table(const std::vector<ListSource>& lists, const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_seconds();
  BuildResult out;
  try {
    RuleCollector rules;
    out.error = collect(lists, rules, stop);
    if (!out.error) out.table = std::make_shared<const BlockTable>(rules.finish());
  } catch (const std::bad_alloc&) {
    out.error = "out of memory";
  } catch (const std::exception& e) {
    // Nothing may leave the worker's function: it would end the process.
    out.error = e.what();
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.cpu_seconds = thread_cpu_seconds() - c0;
  return out;
}

struct TableBuilder::Job {
  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  BuildResult result;  // written by the worker before `done`, read by the loop after
};

TableBuilder::TableBuilder(loop::Scheduler& sched, Done done)
    : sched_(sched), done_(std::move(done)), table_(std::make_shared<const BlockTable>()), poll_(sched) {}

TableBuilder::~TableBuilder() {
  if (!job_) return;
  job_->stop.store(true, std::memory_order_relaxed);
  if (job_->thread.joinable()) job_->thread.join();
}

void TableBuilder::request(std::vector<ListSource> lists) {
  ++stats_.requests;
  if (!job_) return start(std::move(lists));
  if (pending_) ++stats_.coalesced;
  pending_ = std::move(lists);
}

void TableBuilder::start(std::vector<ListSource> lists) {
  auto job = std::make_unique<Job>();
  Job* const j = job.get();
  try {
    j->thread = std::thread([j, lists = std::move(lists)] {
      j->result = build_table(lists, &j->stop);
      j->done.store(true, std::memory_order_release);
    });
  } catch (const std::system_error& e) {
    // Delivered from the loop like any result, never inside request().
    j->result.error = log::cat("cannot start the list loader thread: ", e.what());
    j->done.store(true, std::memory_order_release);
  }
  job_ = std::move(job);
  poll_.arm(build_poll, [this] { poll(); });
}

void TableBuilder::poll() {
  if (!job_) return;
  if (!job_->done.load(std::memory_order_acquire)) {
    poll_.arm(build_poll, [this] { poll(); });
    return;
  }
  if (job_->thread.joinable()) job_->thread.join();
  const BuildResult result = std::move(job_->result);
  job_.reset();
  if (result.table) {
    ++stats_.builds;
    table_ = result.table;
    log::info("blocklists: ", table_->rules(), table_->rules() == 1 ? " rule from " : " rules from ",
              table_->lists().size(), table_->lists().size() == 1 ? " list, " : " lists, ",
              table_->memory_bytes() / 1024, " KiB, built in ", static_cast<long>(result.wall_seconds * 1000), " ms");
  } else {
    ++stats_.failures;
    log::warn("blocklists: ", result.error.value_or("failed"), "; still using the previous table (",
              table_->rules(), table_->rules() == 1 ? " rule)" : " rules)");
  }
  if (pending_) {
    std::vector<ListSource> next = std::move(*pending_);
    pending_.reset();
    start(std::move(next));
  }
  done_(result);
}

}  // namespace nxdns::block
