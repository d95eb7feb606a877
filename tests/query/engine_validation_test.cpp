// A forwarded answer is validated against its question exactly once, by the
// transport that received it (upstream::Transport::Completion): the cache
// and the engine rely on that and do not check it again. Counted with
// dns::responses_validated() over the whole path, on a real loop: the
// engine, the cache or not, the pool, and the plain DNS transport to the
// household-router fixture on 127.0.0.1 (in process).
#include <event2/event.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/caching_pool.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "net/endpoint.hpp"
#include "plain_dns_responder.hpp"
#include "query/engine.hpp"
#include "support/loop_driver.hpp"
#include "upstream/plain_dns_transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using query::Engine;
using query::Protocol;

namespace {

struct Rig {
  loop::EventBasePtr base{event_base_new()};
  loop::LoopScheduler sched{base.get()};
  test::LoopDriver driver{base.get()};
  std::unique_ptr<fixture::plain::Responder> router;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<cache::CachingPool> cache;
  std::unique_ptr<Engine> engine;
  std::vector<std::optional<dns::Bytes>> replies;

  explicit Rig(bool with_cache) {
    fixture::plain::Behaviour b;
    CHECK_TRUE(b.zone.add("nas.lan=192.168.1.10", fixture::plain::type_a).empty());
    router = std::make_unique<fixture::plain::Responder>(base.get(), std::move(b));
    fixture::SockAddr at = *fixture::parse_loopback("127.0.0.1:0");
    std::string err;
    if (!router->listen(at, err)) FAIL(err.c_str());
    std::vector<upstream::EntrySpec> specs;
    specs.push_back({0, "dns://127.0.0.1", 0,
                     std::make_unique<upstream::PlainDnsTransport>(
                         base.get(), sched, *net::make_endpoint("127.0.0.1", fixture::port_of(at.get())),
                         upstream::PlainDnsOptions{})});
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), upstream::PoolOptions{});
    if (with_cache) cache = std::make_unique<cache::CachingPool>(sched, *pool, cache::CacheOptions{});
    engine = std::make_unique<Engine>(sched, *pool, query::EngineOptions{5000ms}, cache.get());
  }
  ~Rig() {
    engine.reset();
    cache.reset();
    pool.reset();
    router.reset();
  }

  dns::Bytes query(std::uint16_t id, const char* name) { return dns::make_query(id, *dns::name_from_text(name), 1, {}); }
  void send(const dns::Bytes& q) {
    const std::size_t slot = replies.size();
    replies.emplace_back();
    engine->submit(q, Protocol::udp, [this, slot](dns::Bytes&& b) { replies[slot] = std::move(b); });
  }
  void wait_for_replies() {
    const bool done = driver.until(
        [this] {
          for (const auto& r : replies)
            if (!r) return false;
          return true;
        },
        5000);
    if (!done) FAIL("timed out waiting for the replies");
  }
};

// The reply answers `q` byte for byte in its ID and question (the client's
// 0x20 case), with NOERROR and one record.
void check_answers(const dns::Bytes& q, const dns::Bytes& reply) {
  const auto parsed = dns::parse_query(q);
  const std::size_t question_end = parsed.query->question_end;
  CHECK_TRUE(reply.size() > question_end);
  CHECK_EQUAL(dns::get_id(q), dns::get_id(reply));
  MEMCMP_EQUAL(q.data() + dns::header_size, reply.data() + dns::header_size, question_end - dns::header_size);
  CHECK_EQUAL(0, reply[3] & 0x0F);
  CHECK_EQUAL(1, dns::parse_header(reply)->ancount);
}

}  // namespace

TEST_GROUP(ValidatedOnce){};

TEST(ValidatedOnce, ThroughThePoolAlone) {
  Rig r(false);
  const dns::Bytes q = r.query(0x4242, "nas.lan");
  const std::uint64_t before = dns::responses_validated();
  r.send(q);
  r.wait_for_replies();
  check_answers(q, *r.replies[0]);
  // The transport's check; the engine's delivery relies on it.
  CHECK_EQUAL(1u, dns::responses_validated() - before);
  CHECK_EQUAL(1u, r.router->stats().udp_answers);
}

TEST(ValidatedOnce, ThroughTheCacheForEveryMemberOfAFlight) {
  Rig r(true);
  const dns::Bytes lower = r.query(0x1111, "nas.lan");
  const dns::Bytes mixed = r.query(0x2222, "NaS.LAN");
  const std::uint64_t before = dns::responses_validated();
  r.send(lower);
  r.send(mixed);  // joins the first client's flight
  r.wait_for_replies();
  CHECK_EQUAL(1u, r.router->stats().udp_answers);
  check_answers(lower, *r.replies[0]);
  check_answers(mixed, *r.replies[1]);
  // One exchange, one check: not the cache's, not the engine's per client.
  CHECK_EQUAL(1u, dns::responses_validated() - before);
  CHECK_EQUAL(1u, r.cache->stats().stores);
}

TEST(ValidatedOnce, NotAtAllForAnAnswerFromTheCache) {
  Rig r(true);
  r.send(r.query(1, "nas.lan"));
  r.wait_for_replies();
  const std::uint64_t before = dns::responses_validated();
  const dns::Bytes again = r.query(2, "NAS.lan");
  r.send(again);
  r.wait_for_replies();
  check_answers(again, *r.replies[1]);
  CHECK_EQUAL(0u, dns::responses_validated() - before);
  CHECK_EQUAL(1u, r.router->stats().udp_answers);
}
