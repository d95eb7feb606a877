#pragma once
// Keeps a copy on disk of every blocklist configured by URL
// (blocking.lists[].url), fetched by the daemon itself, so that the table
// builder only ever reads files and a reboot without WAN still blocks.
//
// The loop asks (fetch()); one worker thread at a time downloads
// (block/list_download.hpp: HTTPS only, verified, conditional, capped,
// streamed to a temporary file and renamed over the copy only when whole);
// the result comes back to the loop the way the cache file's writes do
// (cache/persistence.cpp): the worker sets a flag, a loop timer sees it and
// joins the thread. Nothing here blocks the loop but a stat of the copy
// after a failure and, on the first fetch, opening libcurl.
//
// Names are resolved through the daemon's own routing: the fetcher never
// asks the system resolver, which may point at this very daemon or be
// absent at boot. Before each download it calls the injected resolver on
// the loop and pins the URL's host to the addresses it returns; TLS still
// verifies the certificate against the URL's host. An IP-literal host needs
// no resolver. Redirects are not followed (their host would need resolving
// too, and a list that moved should be reconfigured, not chased): the
// failure names where the redirect pointed.
//
// Fetches queue in order. A fetch of a list already waiting in the queue
// (same URL and ca_file) joins it, so a reload storm costs one download per
// list; a fetch of the list being downloaded queues behind it (the list may
// have changed since that download began).
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "block/list_fetch_result.hpp"
#include "block/list_url.hpp"
#include "loop/clock_step.hpp"
#include "loop/life_token.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"

namespace nxdns::block {

// One `url:` entry of blocking.lists.
struct RemoteList {
  std::string url;
  // Trust anchors for the list's host (PEM); the system bundle when unset.
  std::optional<std::string> ca_file;
  // How the log and the status page name the list: config::redact_url(url).
  // Empty: "https://HOST[:port]".
  std::string label;
};

struct ListFetcherOptions {
  // Where the copies are kept (created 0700 if missing; its parent must
  // exist). Required: without one every fetch fails.
  std::string directory;
  std::uint64_t max_bytes = 64ull << 20;
  std::chrono::milliseconds resolve_timeout = std::chrono::seconds(10);
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(10);
  // A 64 MiB list over a 1 Mbit/s uplink takes about nine minutes.
  std::chrono::milliseconds total_timeout = std::chrono::minutes(15);
  std::chrono::seconds stall_timeout = std::chrono::seconds(60);
};

// Resolves `host` through the daemon's routing and calls `done` on the loop
// with its addresses (none when it has no answer), once. The port of each
// address is ignored: the URL's port is used.
using ListResolver =
    std::function<void(const std::string& host, std::function<void(std::vector<net::Endpoint>)> done)>;

class ListFetcher {
 public:
  using Done = std::function<void(const FetchResult&)>;
  using ReadWall = std::function<loop::WallClock::time_point()>;

  ListFetcher(loop::Scheduler& sched, ListResolver resolve, ListFetcherOptions opts,
              ReadWall read_wall = &loop::WallClock::now);
  // Stops a download in progress (within about a second: curl looks at its
  // stop flag that often) and joins its thread. No callback runs after.
  ~ListFetcher();
  ListFetcher(const ListFetcher&) = delete;
  ListFetcher& operator=(const ListFetcher&) = delete;

  // Where the copy of `url` is kept, whether or not it exists yet: the file
  // the table builder reads (it exists from an earlier run too).
  std::string copy_path(const std::string& url) const;

  // Queues a fetch of `source`. `done` runs on the loop when it ended, never
  // inside this call; a callback may call fetch() or destroy the fetcher.
  // Each result is also logged (failures as warnings) and folded into the
  // list's state.
  void fetch(RemoteList source, Done done);

  // The list's state, by URL; nullptr before its first fetch ended.
  const ListFetchState* state(const std::string& url) const;
  // Forgets a list's state (a reload removed it). Its copy stays on disk.
  void forget(const std::string& url);
  // Nothing queued, resolving or downloading.
  bool idle() const { return queue_.empty() && !current_; }

  const ListFetcherOptions& options() const { return opts_; }

 private:
  struct Job {
    RemoteList source;
    std::optional<ListUrl> url;  // nullopt: the URL is unusable, for `why`
    std::string why;
    std::string label;
    std::vector<Done> done;
  };
  struct Download;

  void next();
  void on_resolved(std::uint64_t seq, std::optional<std::vector<net::Endpoint>> addresses);
  void start_download(std::vector<std::string> addresses);
  void poll_download();
  // The current job ended: its result is delivered from the loop soon.
  void complete(FetchResult r);
  void fail(const std::string& why);
  void deliver();

  ListResolver resolve_;
  ListFetcherOptions opts_;
  ReadWall read_wall_;
  std::deque<Job> queue_;
  std::optional<Job> current_;
  std::optional<FetchResult> finished_;  // current_'s result, waiting for deliver()
  std::uint64_t resolve_seq_ = 0;        // a resolver answer for an older seq is ignored
  std::unique_ptr<Download> download_;
  std::map<std::string, ListFetchState> states_;
  loop::Timer kick_;
  loop::Timer resolve_timer_;
  loop::Timer poll_;
  loop::Timer deliver_;
  // Ends with the fetcher: a resolver answer that comes later, or a
  // callback that destroyed it, ends there.
  loop::LifeToken life_;
};

}  // namespace nxdns::block
