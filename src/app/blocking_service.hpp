#pragma once
// The daemon's side of blocking: turns `blocking:` into list sources,
// has the table built off the loop (block::TableBuilder) at start and on
// every reload, and hands each finished table with the groups and the
// answer to the engine. A build that fails (a list that cannot be read)
// keeps the table in use and is reported.
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "block/list_fetcher.hpp"
#include "block/table_builder.hpp"
#include "config/config.hpp"
#include "loop/scheduler.hpp"
#include "query/engine.hpp"
#include "web/blocking_status.hpp"

namespace nxdns::app {

using web::BlockingStatus;
using web::BlockListStatus;

class BlockingService {
 public:
  // `resolve` finds a URL list's host (app::engine_resolver).
  BlockingService(loop::Scheduler& sched, query::Engine& engine, block::ListResolver resolve);
  ~BlockingService();
  BlockingService(const BlockingService&) = delete;
  BlockingService& operator=(const BlockingService&) = delete;

  // Start and every reload: groups and answer apply at once; the lists are
  // (re)read into a new table off the loop, from file lists and the copies
  // of URL lists, and every URL list is fetched again; a fetch that brings
  // a new copy builds the table once more.
  void apply(const config::Blocking& cfg);
  BlockingStatus status() const;

 private:
  void built(const block::BuildResult& r);
  std::vector<block::ListSource> sources() const;
  void fetch_all();
  void fetched(const block::FetchResult& r);

  loop::Scheduler& sched_;
  query::Engine& engine_;
  block::ListResolver resolve_;
  config::Blocking cfg_;
  // With URL lists only; rebuilt when state_dir changes.
  std::unique_ptr<block::ListFetcher> fetcher_;
  loop::Timer refresh_;
  std::shared_ptr<const route::BlockingGroups> groups_;
  std::unique_ptr<block::TableBuilder> builder_;
  std::optional<std::time_t> loaded_unix_;
  std::optional<std::string> last_error_;
  double last_build_seconds_ = 0.0;
};

}  // namespace nxdns::app
