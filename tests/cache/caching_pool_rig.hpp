#pragma once
// The cache in front of a one-entry pool, under a fake clock and a fake
// transport whose exchanges end only when the test says so.
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "cache/answers.hpp"
#include "cache/caching_pool.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"

namespace nxdns::cache::rig {

// An upstream answer to `q`: its header and question, one A record with
// this TTL (owner = pointer to the question), no OPT.
inline dns::Bytes a_answer(const dns::Bytes& q, std::uint32_t ttl, std::uint16_t flags = 0x8180) {
  auto p = dns::parse_query(q);
  dns::Bytes b(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(p.query->question_end));
  b[2] = static_cast<std::uint8_t>(flags >> 8);
  b[3] = static_cast<std::uint8_t>(flags & 0xFF);
  b[6] = 0, b[7] = (flags & 0xF) == 0 ? 1 : 0, b[8] = 0, b[9] = 0, b[10] = 0, b[11] = 0;
  if ((flags & 0xF) == 0) packets::put_rec(b, {packets::t_a, ttl});
  return b;
}

struct Rig {
  test::FakeScheduler sched;
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<CachingPool> cache;
  std::vector<std::optional<upstream::PoolOutcome>> got;
  std::vector<dns::Bytes> sent;
  std::vector<CachingPool::Ticket> tickets;

  explicit Rig(CacheOptions o = {}) {
    using namespace std::chrono_literals;
    std::vector<upstream::EntrySpec> specs;
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    upstream::PoolOptions po;
    po.attempt_budget = 10s;
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), po);
    cache = std::make_unique<CachingPool>(sched, *pool, o);
  }
  ~Rig() {
    cache.reset();
    pool.reset();
  }
  std::size_t ask(const char* name, std::uint16_t id) {
    sent.push_back(dns::make_query(id, *dns::name_from_text(name), 1, {}));
    const std::size_t i = got.size();
    got.emplace_back();
    auto p = dns::parse_query(sent.back());
    tickets.push_back(cache->submit(*p.query, sent.back(), [this, i](upstream::PoolOutcome&& o) { got[i] = std::move(o); }));
    return i;
  }
  void answer(std::uint32_t ttl = 300) {
    fake->respond_oldest([ttl](const dns::Bytes& q) { return a_answer(q, ttl); });
    sched.run_ready();
  }
  std::uint32_t ttl(std::size_t i) const { return packets::ttl_of(got[i]->response, 0); }
};

}  // namespace nxdns::cache::rig
