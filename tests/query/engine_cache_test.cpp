// The engine's cache hook: a cached answer takes the same delivery step as a
// fresh one (rewritten for the client, UDP truncation, counted by rcode),
// and the budget still bounds a query that joined a flight.
#include <optional>
#include <vector>

#include "cache/caching_pool.hpp"
#include "query/engine.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using query::Engine;
using query::Protocol;

namespace {
dns::Bytes q_for(std::uint16_t id, const char* name) { return dns::make_query(id, *dns::name_from_text(name), 1, {}); }

// Header and question of the query, QR RA NOERROR, one A record TTL 300.
dns::Bytes answer_to(const dns::Bytes& q) {
  auto p = dns::parse_query(q);
  dns::Bytes b(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(p.query->question_end));
  b[2] = 0x81, b[3] = 0x80, b[7] = 1, b[11] = 0;
  for (std::uint8_t x : {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x01, 0x2C, 0, 4, 192, 0, 2, 1}) b.push_back(x);
  return b;
}

struct Rig {
  test::FakeScheduler sched;
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<cache::CachingPool> cache;
  std::unique_ptr<Engine> engine;
  std::vector<std::optional<dns::Bytes>> replies;
  Rig() {
    std::vector<upstream::EntrySpec> specs;
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    upstream::PoolOptions po;
    po.attempt_budget = 10s;  // only the engine's budget ends queries here
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), po);
    cache = std::make_unique<cache::CachingPool>(sched, *pool, cache::CacheOptions{});
    engine = std::make_unique<Engine>(sched, *pool, query::EngineOptions{5000ms}, cache.get());
  }
  ~Rig() {
    engine.reset();
    cache.reset();
    pool.reset();
  }
  void send(const dns::Bytes& pkt) {
    const std::size_t slot = replies.size();
    replies.emplace_back();
    engine->submit(pkt, Protocol::udp, [this, slot](dns::Bytes&& b) { replies[slot] = std::move(b); });
  }
};
}  // namespace

TEST_GROUP(EngineCache){};

TEST(EngineCache, SecondQueryIsAnsweredFromTheCacheThroughTheSameDelivery) {
  Rig r;
  r.send(q_for(1, "www.example.test"));
  r.fake->respond_oldest(answer_to);
  r.sched.run_ready();
  r.send(q_for(2, "WWW.example.test"));
  r.sched.run_ready();
  CHECK_EQUAL(1u, r.fake->started());
  CHECK_EQUAL(0, (*r.replies[0])[3] & 0x0F);
  CHECK_TRUE(r.replies[1].has_value());
  CHECK_EQUAL(2, dns::get_id(*r.replies[1]));
  CHECK_EQUAL(2u, r.engine->counters().replies_by_rcode[0][0]);
  CHECK_EQUAL(0u, r.engine->in_flight());
}

TEST(EngineCache, BudgetStillEndsAJoinedQuery) {
  Rig r;
  r.send(q_for(1, "slow.example.test"));
  r.sched.advance(1s);
  r.send(q_for(2, "slow.example.test"));
  CHECK_EQUAL(1u, r.fake->started());
  r.sched.advance(4s);  // client 1's budget
  CHECK_EQUAL(2, (*r.replies[0])[3] & 0x0F);  // SERVFAIL
  CHECK_FALSE(r.replies[1].has_value());
  r.sched.advance(1s);  // client 2's budget
  CHECK_EQUAL(2, (*r.replies[1])[3] & 0x0F);
  CHECK_EQUAL(2u, r.engine->counters().budget_exhausted);
  CHECK_EQUAL(0u, r.cache->stats().flights);
}

// The hit path (docs/architecture.md, "Answer cache"): a hit needs no budget
// timer and no timer of its own; every hit of one loop pass is delivered by
// one zero-delay timer, from the loop, never inside submit().
TEST(EngineCache, HitsOfOneLoopPassShareOneTimerAndHoldNoBudget) {
  Rig r;
  r.send(q_for(1, "www.example.test"));
  r.fake->respond_oldest(answer_to);
  r.sched.run_ready();
  CHECK_EQUAL(0u, r.sched.pending());
  for (std::uint16_t id = 2; id <= 31; ++id) r.send(q_for(id, id % 2 ? "WWW.example.test" : "www.EXAMPLE.test"));
  CHECK_EQUAL(1u, r.sched.pending());
  CHECK_FALSE(r.replies[1].has_value());  // from the loop, not inside submit()
  CHECK_EQUAL(30u, r.engine->in_flight());
  r.sched.run_ready();
  for (std::uint16_t id = 2; id <= 31; ++id) {
    CHECK_TRUE(r.replies[id - 1].has_value());
    CHECK_EQUAL(id, dns::get_id(*r.replies[id - 1]));
    CHECK_EQUAL(0, (*r.replies[id - 1])[3] & 0x0F);
  }
  CHECK_EQUAL(0u, r.sched.pending());
  CHECK_EQUAL(0u, r.engine->in_flight());
  CHECK_EQUAL(1u, r.fake->started());
  CHECK_EQUAL(30u, r.cache->stats().hits);
  CHECK_EQUAL(31u, r.engine->counters().replies_by_rcode[0][0]);
}

// HitDelivery::now (the UDP listener, which sends a wakeup's answers with
// one sendmmsg): a hit is answered inside submit(), counted, and leaves no
// timer, no query in flight and no kept callback behind.
TEST(EngineCache, HitAnsweredNowTakesNoTimerAndKeepsNoCallback) {
  Rig r;
  r.send(q_for(1, "www.example.test"));
  r.fake->respond_oldest(answer_to);
  r.sched.run_ready();
  bool called = false;
  const auto res = r.engine->submit(q_for(2, "WWW.example.test"), Protocol::udp, [&called](dns::Bytes&&) { called = true; },
                                    Engine::HitDelivery::now);
  CHECK(res.kind == Engine::Admission::answered);
  CHECK_EQUAL(2, dns::get_id(res.reply));
  CHECK_EQUAL(0, res.reply[3] & 0x0F);
  // The client's question case, as for a hit delivered from the loop.
  CHECK_EQUAL('W', res.reply[13]);
  CHECK_EQUAL(0u, r.sched.pending());
  CHECK_EQUAL(0u, r.engine->in_flight());
  CHECK_EQUAL(2u, r.engine->counters().replies_by_rcode[0][0]);
  CHECK_EQUAL(1u, r.cache->stats().hits);
  r.sched.run_ready();
  CHECK_FALSE(called);
  // A miss with HitDelivery::now is forwarded as always.
  const auto miss = r.engine->submit(q_for(3, "other.example.test"), Protocol::udp, [&called](dns::Bytes&&) { called = true; },
                                     Engine::HitDelivery::now);
  CHECK(miss.kind == Engine::Admission::forwarded);
  r.fake->respond_oldest(answer_to);
  r.sched.run_ready();
  CHECK_TRUE(called);
}

TEST(EngineCache, AbandonedHitIsNotDelivered) {
  Rig r;
  r.send(q_for(1, "www.example.test"));
  r.fake->respond_oldest(answer_to);
  r.sched.run_ready();
  r.replies.emplace_back();
  const auto res = r.engine->submit(q_for(2, "www.example.test"), Protocol::tcp,
                                    [&r](dns::Bytes&& b) { r.replies[1] = std::move(b); });
  CHECK(res.kind == Engine::Admission::forwarded);
  r.engine->abandon(res.id);
  r.sched.run_ready();
  CHECK_FALSE(r.replies[1].has_value());
  CHECK_EQUAL(1u, r.engine->counters().abandoned);
  CHECK_EQUAL(0u, r.engine->in_flight());
}
