#include "query/lan_forwarders.hpp"

#include "log/log.hpp"
#include "upstream/plain_dns_transport.hpp"

namespace nxdns::query {

LanForwarders::LanForwarders(event_base* base, loop::Scheduler& sched, LanOptions opts, TransportMaker make)
    : base_(base), sched_(sched), opts_(std::move(opts)), make_(std::move(make)), retire_(sched) {
  if (!make_) {
    make_ = [this](const net::Endpoint& server) -> std::unique_ptr<upstream::Transport> {
      return std::make_unique<upstream::PlainDnsTransport>(base_, sched_, server);
    };
  }
}

LanForwarders::~LanForwarders() {
  retire_.disarm();
  // Caches before their pools (each cache holds its pool's tickets).
  for (auto* v : {&serving_, &retiring_}) {
    for (auto& g : *v) g->cache.reset();
  }
}

std::unique_ptr<LanGroupRuntime> LanForwarders::start_group(const route::LanGroup& spec) {
  auto g = std::make_unique<LanGroupRuntime>();
  g->spec = spec;
  std::vector<upstream::EntrySpec> entries;
  for (std::size_t i = 0; i < spec.servers.size(); ++i) {
    entries.push_back(upstream::EntrySpec{i, "dns://" + spec.servers[i].to_string(), 0,
                                          make_(spec.servers[i])});
  }
  upstream::PoolOptions po;
  po.attempt_budget = opts_.attempt_budget;
  g->pool = std::make_unique<upstream::Pool>(sched_, std::move(entries), std::move(po));
  if (opts_.cache.max_bytes > 0) g->cache = std::make_unique<cache::CachingPool>(sched_, *g->pool, opts_.cache);
  return g;
}

void LanForwarders::adopt(const route::RouteTable& table, loop::Duration total_budget) {
  std::vector<std::unique_ptr<LanGroupRuntime>> next;
  for (const route::LanGroup& spec : table.lan_groups()) {
    const std::string key = spec.key();
    std::unique_ptr<LanGroupRuntime> kept;
    for (auto& g : serving_) {
      if (g && g->spec.key() == key) {
        kept = std::move(g);
        break;
      }
    }
    if (kept) {
      kept->spec = spec;
      next.push_back(std::move(kept));
    } else {
      log::info("route: asking ", spec.home_router ? "the home router " : "LAN server(s) ", key, "over plain DNS");
      next.push_back(start_group(spec));
    }
  }
  for (auto& g : serving_) {
    if (g) retiring_.push_back(std::move(g));
  }
  serving_ = std::move(next);
  if (!retiring_.empty()) {
    retire_.arm(total_budget + std::chrono::milliseconds(500), [this] {
      for (auto& g : retiring_) {
        g->cache.reset();
        g->pool->close_all();
      }
      retiring_.clear();
    });
  }
}

void LanForwarders::apply_options(const LanOptions& opts) {
  opts_ = opts;
  for (auto& g : serving_) {
    if (g->cache) g->cache->apply_options(opts_.cache);
  }
}

std::size_t LanForwarders::flush_all() {
  std::size_t n = 0;
  for (auto& g : serving_) {
    if (g->cache) n += g->cache->flush_all();
  }
  return n;
}

std::size_t LanForwarders::flush_name(std::string_view name) {
  std::size_t n = 0;
  for (auto& g : serving_) {
    if (g->cache) n += g->cache->flush_name(name).value_or(0);
  }
  return n;
}

void LanForwarders::close_all() {
  for (auto& g : serving_) g->pool->close_all();
}

}  // namespace nxdns::query
