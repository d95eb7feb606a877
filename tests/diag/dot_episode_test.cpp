// Episodes with the real DoT transport under a real Pool, against the
// in-process loopback DoT server: a stale reused session that the one
// redial recovers never reaches diagnostics as a failure; a redial that
// fails too does (the control that shows the first test could fail).
#include <event2/event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "diag/diagnostics.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/dot_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {

struct Lines {
  std::vector<std::pair<log::Level, std::string>> v;
  static void sink(log::Level l, std::string_view m, void* ctx) { static_cast<Lines*>(ctx)->v.emplace_back(l, std::string(m)); }
  std::size_t above_debug() const {
    std::size_t n = 0;
    for (const auto& [lv, t] : v) n += lv != log::Level::debug;
    return n;
  }
};

}  // namespace

TEST_GROUP(DotEpisodes) {
  loop::EventBasePtr base;
  std::unique_ptr<loop::LoopScheduler> sched;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<test::TestPki> pki;
  std::unique_ptr<test::TempFile> ca;
  std::unique_ptr<test::DotTestServer> server;
  std::unique_ptr<Lines> lines;
  std::unique_ptr<diag::Diagnostics> d;
  std::unique_ptr<upstream::Pool> pool;

  void setup() override {
    lines = std::make_unique<Lines>();
    log::set_sink(&Lines::sink, lines.get());
    log::set_level(log::Level::info);
    base.reset(event_base_new());
    sched = std::make_unique<loop::LoopScheduler>(base.get());
    driver = std::make_unique<test::LoopDriver>(base.get());
    pki = std::make_unique<test::TestPki>("dot.test");
    ca = std::make_unique<test::TempFile>(pki->ca_pem);
  }
  void teardown() override {
    pool.reset();
    d.reset();
    server.reset();
    ca.reset();
    pki.reset();
    driver.reset();
    sched.reset();
    base.reset();
    log::set_sink(nullptr, nullptr);
    lines.reset();
  }

  void start(test::DotTestServer::Behaviour b) {
    server = std::make_unique<test::DotTestServer>(base.get(), *pki, b);
    upstream::DotTransportOptions o;
    o.address = server->endpoint();
    o.tls_name = "dot.test";
    o.ca_file = ca->path();
    o.label = "tls://127.0.0.1:" + std::to_string(server->port());
    std::string err;
    auto t = upstream::DotTransport::create(base.get(), *sched, o, &err);
    if (!t) FAIL(err.c_str());
    std::vector<upstream::EntrySpec> specs;
    specs.push_back({0, o.label, 0, std::move(t)});
    d = std::make_unique<diag::Diagnostics>(*sched);
    upstream::PoolOptions po;
    po.on_attempt = [this](const upstream::AttemptReport& r) { d->on_attempt(r); };
    pool = std::make_unique<upstream::Pool>(*sched, std::move(specs), std::move(po));
  }

  upstream::PoolOutcome exchange(std::uint16_t id, const std::string& name) {
    std::optional<upstream::PoolOutcome> out;
    pool->submit(dns::make_query(id, *dns::name_from_text(name), 1, 1232),
                 [&out](upstream::PoolOutcome&& o) { out = std::move(o); });
    if (!driver->until([&out] { return out.has_value(); }, 5000)) FAIL("timed out waiting for the pool");
    return std::move(*out);
  }
};

TEST(DotEpisodes, RecoveredStaleReuseIsACounterNotAnEpisode) {
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;  // each connection answers one query, drops on the next
  start(b);
  CHECK_TRUE(exchange(1, "first.example").ok);
  CHECK_TRUE(exchange(2, "second.example").ok);  // reused session dropped -> one redial

  const auto s = pool->snapshot();
  LONGS_EQUAL(2, server->accepts());
  LONGS_EQUAL(1, s[0].transport.redials);
  LONGS_EQUAL(1, s[0].transport.reuse_recoveries);
  LONGS_EQUAL(2, s[0].outcomes[static_cast<std::size_t>(upstream::Cause::ok)]);
  CHECK(upstream::HealthState::healthy == s[0].health);
  LONGS_EQUAL(0, d->opened_total());
  LONGS_EQUAL(0, d->episodes().size());
  LONGS_EQUAL(0, lines->above_debug());
}

TEST(DotEpisodes, RedialThatFailsTooOpensAnEpisode) {
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;
  start(b);
  CHECK_TRUE(exchange(1, "first.example").ok);
  server->behaviour().close_on_query_after = 0;  // the redialed connection drops it too
  CHECK_FALSE(exchange(2, "second.example").ok);

  LONGS_EQUAL(1, d->opened_total());
  const auto eps = d->episodes();
  LONGS_EQUAL(1, eps.size());
  CHECK_TRUE(eps[0].open);
  CHECK_TRUE(upstream::is_connection_lifecycle(eps[0].first_cause));
  LONGS_EQUAL(1, lines->above_debug());  // the one warn line
}
