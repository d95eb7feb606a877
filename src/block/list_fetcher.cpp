#include "block/list_fetcher.hpp"

#include <sys/stat.h>

#include <atomic>
#include <system_error>
#include <thread>
#include <utility>

#include "block/list_download.hpp"
#include "log/log.hpp"
#include "upstream/curl_library.hpp"
#include "upstream/tls_config.hpp"

namespace nxdns::block {

namespace {

// How often the loop looks for the end of a download: nothing waits for it
// but the next table build, and a download takes seconds.
constexpr loop::Duration download_poll = std::chrono::milliseconds(100);

std::int64_t unix_seconds(loop::WallClock::time_point t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

// The worker's half, as CachePersistence::Write: the thread writes `result`
// before `done`; the loop reads it after seeing `done`, then joins.
struct ListFetcher::Download {
  std::thread thread;
  std::atomic<bool> done{false};
  std::atomic<bool> stop{false};
  DownloadRequest request;
  FetchResult result;
};

ListFetcher::ListFetcher(loop::Scheduler& sched, ListResolver resolve, ListFetcherOptions opts, ReadWall read_wall)
    : resolve_(std::move(resolve)),
      opts_(std::move(opts)),
      read_wall_(std::move(read_wall)),
      kick_(sched),
      resolve_timer_(sched),
      poll_(sched),
      deliver_(sched) {}

ListFetcher::~ListFetcher() {
  if (download_ && download_->thread.joinable()) {
    download_->stop.store(true, std::memory_order_relaxed);
    download_->thread.join();
  }
}

std::string ListFetcher::copy_path(const std::string& url) const {
  return opts_.directory + "/" + list_copy_name(url);
}

void ListFetcher::fetch(RemoteList source, Done done) {
  for (Job& j : queue_) {
    if (j.source.url == source.url && j.source.ca_file == source.ca_file) {
      j.done.push_back(std::move(done));
      return;
    }
  }
  Job job;
  job.url = parse_list_url(source.url, &job.why);
  job.label = !source.label.empty() ? source.label
              : job.url            ? host_label(*job.url)
                                   : std::string("list with an unusable URL");
  job.source = std::move(source);
  job.done.push_back(std::move(done));
  queue_.push_back(std::move(job));
  if (!current_) kick_.arm(loop::Duration::zero(), [this] { next(); });
}

const ListFetchState* ListFetcher::state(const std::string& url) const {
  const auto it = states_.find(url);
  return it == states_.end() ? nullptr : &it->second;
}

void ListFetcher::forget(const std::string& url) { states_.erase(url); }

void ListFetcher::next() {
  if (current_ || queue_.empty()) return;
  current_ = std::move(queue_.front());
  queue_.pop_front();
  if (!current_->url) return fail(current_->why);
  if (opts_.directory.empty()) return fail("no directory for list copies was given");
  std::string why;
  if (!upstream::load_initialised_curl(&why)) return fail(why);
  if (current_->url->host_is_ip) return start_download({current_->url->host});
  const std::uint64_t seq = ++resolve_seq_;
  resolve_timer_.arm(opts_.resolve_timeout, [this, seq] { on_resolved(seq, std::nullopt); });
  // The resolver may answer inside this call; nothing follows it here.
  resolve_(current_->url->host, [this, life = life_.watch(), seq](std::vector<net::Endpoint> addresses) {
    if (!life.alive()) return;
    on_resolved(seq, std::move(addresses));
  });
}

void ListFetcher::on_resolved(std::uint64_t seq, std::optional<std::vector<net::Endpoint>> addresses) {
  if (!current_ || seq != resolve_seq_ || download_ || finished_) return;
  ++resolve_seq_;  // a second answer, or the time-out, for this one is moot
  resolve_timer_.disarm();
  const std::string& host = current_->url->host;
  if (!addresses) {
    return fail(log::cat("the daemon's resolver gave no answer for ", host, " within ", opts_.resolve_timeout.count(),
                         " ms"));
  }
  std::vector<std::string> literal;
  for (const net::Endpoint& e : *addresses) {
    std::string a = e.host_string();
    if (!a.empty()) literal.push_back(std::move(a));
  }
  if (literal.empty()) return fail(log::cat("the daemon's resolver found no address for ", host));
  start_download(std::move(literal));
}

void ListFetcher::start_download(std::vector<std::string> addresses) {
  auto d = std::make_unique<Download>();
  DownloadRequest& r = d->request;
  r.url = *current_->url;
  r.label = current_->label;
  r.addresses = std::move(addresses);
  r.ca_file = current_->source.ca_file.value_or(upstream::system_ca_bundle);
  r.copy_path = copy_path(current_->source.url);
  r.max_bytes = opts_.max_bytes;
  r.connect_timeout = opts_.connect_timeout;
  r.total_timeout = opts_.total_timeout;
  r.stall_timeout = opts_.stall_timeout;
  r.stop = &d->stop;
  Download* const dp = d.get();
  try {
    d->thread = std::thread([dp] {
      FetchResult out;
      try {
        out = download_list(dp->request);
      } catch (...) {
        // No exception may leave a thread; this one can only be bad_alloc.
        out = FetchResult{};
        out.path = dp->request.copy_path;
        out.detail = log::cat(dp->request.label, ": out of memory");
      }
      dp->result = std::move(out);
      dp->done.store(true, std::memory_order_release);
    });
  } catch (const std::system_error& e) {
    return fail(log::cat("cannot start the download thread: ", e.what()));
  }
  download_ = std::move(d);
  poll_.arm(download_poll, [this] { poll_download(); });
}

void ListFetcher::poll_download() {
  if (!download_) return;
  if (!download_->done.load(std::memory_order_acquire)) {
    poll_.arm(download_poll, [this] { poll_download(); });
    return;
  }
  download_->thread.join();
  FetchResult r = std::move(download_->result);
  download_.reset();
  complete(std::move(r));
}

void ListFetcher::fail(const std::string& why) {
  FetchResult r;
  r.outcome = FetchOutcome::failed;
  r.detail = log::cat(current_->label, ": ", why);
  r.path = copy_path(current_->source.url);
  struct stat st {};
  r.have_copy = ::stat(r.path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  r.bytes = r.have_copy ? static_cast<std::uint64_t>(st.st_size) : 0;
  complete(std::move(r));
}

void ListFetcher::complete(FetchResult r) {
  r.finished_unix = unix_seconds(read_wall_());
  finished_ = std::move(r);
  deliver_.arm(loop::Duration::zero(), [this] { deliver(); });
}

void ListFetcher::deliver() {
  if (!current_ || !finished_) return;
  Job job = std::move(*current_);
  current_.reset();
  const FetchResult r = std::move(*finished_);
  finished_.reset();
  record(states_[job.source.url], r);
  switch (r.outcome) {
    case FetchOutcome::updated: log::info("blocklist ", r.detail); break;
    case FetchOutcome::not_modified: log::debug("blocklist ", r.detail); break;
    case FetchOutcome::failed:
      log::warn("blocklist ", r.detail,
                r.have_copy ? "; the previous copy stays in use" : "; there is no copy of it yet");
      break;
  }
  const loop::LifeToken::Watch life = life_.watch();
  for (Done& d : job.done) {
    if (d) d(r);
    if (!life.alive()) return;
  }
  next();
}

}  // namespace nxdns::block
