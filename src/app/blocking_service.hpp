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
  BlockingService(loop::Scheduler& sched, query::Engine& engine);
  ~BlockingService();
  BlockingService(const BlockingService&) = delete;
  BlockingService& operator=(const BlockingService&) = delete;

  // Start and every reload: groups and answer apply at once; the lists are
  // (re)read into a new table off the loop.
  void apply(const config::Blocking& cfg);
  BlockingStatus status() const;

 private:
  void built(const block::BuildResult& r);
  std::vector<block::ListSource> sources() const;

  loop::Scheduler& sched_;
  query::Engine& engine_;
  config::Blocking cfg_;
  std::shared_ptr<const route::BlockingGroups> groups_;
  std::unique_ptr<block::TableBuilder> builder_;
  std::optional<std::time_t> loaded_unix_;
  std::optional<std::string> last_error_;
  double last_build_seconds_ = 0.0;
};

// Where a URL list's last good copy lives under `state_dir`: a name derived
// from the URL alone, so no URL can name a path outside the directory.
std::string list_copy_path(const std::string& state_dir, const std::string& url);

}  // namespace nxdns::app
