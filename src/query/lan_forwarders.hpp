#pragma once
// The running side of the route table's LAN groups: for each group, a pool
// of plain-DNS transports (one entry per server, failing over in order,
// with the same health and backoff as the encrypted upstreams) behind a
// small cache of its own. A LAN server's answers never share the main
// cache: its negative answers are kept briefly (a router that is rebooting
// must not leave a name NXDOMAIN for an hour) and its names never mix with
// the upstreams' in the cache file.
#include <event2/event.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/caching_pool.hpp"
#include "loop/scheduler.hpp"
#include "route/route_table.hpp"
#include "upstream/pool.hpp"

namespace nxdns::query {

struct LanOptions {
  // A LAN server answers in milliseconds; one that has not within a second
  // (two datagrams: upstream::PlainDnsOptions) is not going to.
  loop::Duration attempt_budget = std::chrono::milliseconds(1000);
  cache::CacheOptions cache;  // max_bytes, clamps, stale rules
};
// The negative TTL a LAN server's answers are cached with at most.
inline constexpr std::uint32_t lan_max_negative_ttl = 30;
// Each group's cache: a household's LAN names are few.
inline constexpr std::size_t lan_cache_bytes = 1u << 20;

struct LanGroupRuntime {
  route::LanGroup spec;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<cache::CachingPool> cache;  // null when caching is off
};

class LanForwarders {
 public:
  // Builds the transport for one LAN server; by default a plain-DNS one on
  // `base` (tests hand in fakes).
  using TransportMaker = std::function<std::unique_ptr<upstream::Transport>(const net::Endpoint& server)>;
  LanForwarders(event_base* base, loop::Scheduler& sched, LanOptions opts, TransportMaker make = {});
  ~LanForwarders();
  LanForwarders(const LanForwarders&) = delete;
  LanForwarders& operator=(const LanForwarders&) = delete;

  // Makes the groups of `table` the serving ones. A group whose servers
  // were already running keeps its pool, health and cache; the others are
  // started; groups no longer named are retired once a total budget has
  // passed (their queries are over by then).
  void adopt(const route::RouteTable& table, loop::Duration total_budget);
  void apply_options(const LanOptions& opts);

  // The group at table index `i` of the table last adopted.
  LanGroupRuntime& group(std::size_t i) { return *serving_[i]; }
  const std::vector<std::unique_ptr<LanGroupRuntime>>& groups() const { return serving_; }
  bool available(std::size_t i) const { return i < serving_.size() && serving_[i]->pool->has_admitting_entry(); }

  std::size_t flush_all();
  std::size_t flush_name(std::string_view name);
  void close_all();

 private:
  std::unique_ptr<LanGroupRuntime> start_group(const route::LanGroup& spec);

  event_base* base_;
  loop::Scheduler& sched_;
  LanOptions opts_;
  TransportMaker make_;
  std::vector<std::unique_ptr<LanGroupRuntime>> serving_;
  std::vector<std::unique_ptr<LanGroupRuntime>> retiring_;
  loop::Timer retire_;
};

}  // namespace nxdns::query
