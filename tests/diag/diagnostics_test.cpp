// Diagnostics episodes: opened by the first failure of a run, closed by the
// next success, logged exactly once each way, kept in a bounded ring; fed
// through a real Pool the way the daemon wires it.
#include "diag/diagnostics.hpp"

#include <memory>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using upstream::Cause;

namespace {

struct Lines {
  std::vector<std::pair<log::Level, std::string>> v;
  static void sink(log::Level l, std::string_view m, void* ctx) { static_cast<Lines*>(ctx)->v.emplace_back(l, std::string(m)); }
  std::vector<std::string> at(log::Level l) const {
    std::vector<std::string> out;
    for (const auto& [lv, t] : v)
      if (lv == l) out.push_back(t);
    return out;
  }
};

bool contains(const std::string& s, const std::string& n) { return s.find(n) != std::string::npos; }

}  // namespace

TEST_GROUP(Diagnostics) {
  test::FakeScheduler sched;
  std::unique_ptr<Lines> lines;
  std::unique_ptr<diag::Diagnostics> d;
  const std::string url0 = "tls://192.0.2.1:853";
  const std::string url1 = "https://dns.example/dns-query";

  void setup() override {
    lines = std::make_unique<Lines>();
    log::set_sink(&Lines::sink, lines.get());
    log::set_level(log::Level::info);  // the default verbosity
    d = std::make_unique<diag::Diagnostics>(sched);
  }
  void teardown() override {
    d.reset();
    log::set_sink(nullptr, nullptr);
    lines.reset();
  }
  void report(std::size_t idx, Cause c, const std::string& detail = "") {
    const std::string& url = idx == 0 ? url0 : url1;
    d->on_attempt({idx, &url, c, detail.empty() ? nullptr : &detail, 10ms});
  }
};

TEST(Diagnostics, FirstFailureOpensAnEpisodeWithOneWarnLine) {
  report(0, Cause::connect_failed, "connect to 192.0.2.1:853: Connection refused");
  const auto warns = lines->at(log::Level::warn);
  LONGS_EQUAL(1, warns.size());
  CHECK_TRUE(contains(warns[0], "upstream 0"));
  CHECK_TRUE(contains(warns[0], url0));
  CHECK_TRUE(contains(warns[0], "connect_failed"));
  CHECK_TRUE(contains(warns[0], "Connection refused"));
  const auto eps = d->episodes();
  LONGS_EQUAL(1, eps.size());
  CHECK_TRUE(eps[0].open);
  LONGS_EQUAL(1, eps[0].failures);
  LONGS_EQUAL(1, d->open_count());
  LONGS_EQUAL(1, d->opened_total());
}

TEST(Diagnostics, FurtherFailuresCountWithoutLogging) {
  report(0, Cause::connect_failed, "refused");
  sched.advance(100ms);
  report(0, Cause::attempt_timeout, "no answer");
  report(0, Cause::tls_protocol, "alert");
  LONGS_EQUAL(1, lines->v.size());  // nothing above debug after the first
  const auto eps = d->episodes();
  LONGS_EQUAL(1, eps.size());
  LONGS_EQUAL(3, eps[0].failures);
  CHECK(eps[0].first_cause == Cause::connect_failed);
  STRCMP_EQUAL("refused", eps[0].first_detail.c_str());
  CHECK(eps[0].last_cause == Cause::tls_protocol);
  STRCMP_EQUAL("alert", eps[0].last_detail.c_str());
  LONGS_EQUAL(1, eps[0].by_cause[static_cast<std::size_t>(Cause::attempt_timeout)]);
}

TEST(Diagnostics, SuccessClosesTheEpisodeWithOneInfoLine) {
  report(0, Cause::eof);
  sched.advance(2500ms);
  report(0, Cause::eof);
  report(0, Cause::ok);
  const auto infos = lines->at(log::Level::info);
  LONGS_EQUAL(1, infos.size());
  CHECK_TRUE(contains(infos[0], "upstream 0"));
  CHECK_TRUE(contains(infos[0], url0));
  CHECK_TRUE(contains(infos[0], "2.500 s"));
  CHECK_TRUE(contains(infos[0], "2 failed attempt(s)"));
  const auto eps = d->episodes();
  LONGS_EQUAL(1, eps.size());
  CHECK_FALSE(eps[0].open);
  CHECK(eps[0].ended - eps[0].started == 2500ms);
  LONGS_EQUAL(0, d->open_count());
  // More successes change nothing.
  report(0, Cause::ok);
  LONGS_EQUAL(2, lines->v.size());
}

TEST(Diagnostics, SuccessWithoutAnEpisodeIsSilent) {
  report(0, Cause::ok);
  report(1, Cause::ok);
  LONGS_EQUAL(0, lines->v.size());
  LONGS_EQUAL(0, d->episodes().size());
}

TEST(Diagnostics, CancellationsAreNotTheUpstreamsFault) {
  report(0, Cause::cancelled, "transport closed");
  LONGS_EQUAL(0, d->episodes().size());
  LONGS_EQUAL(0, lines->v.size());
  // Nor do they close an open episode.
  report(0, Cause::eof);
  report(0, Cause::cancelled);
  LONGS_EQUAL(1, d->open_count());
}

TEST(Diagnostics, EachUpstreamHasItsOwnEpisode) {
  report(0, Cause::eof);
  report(1, Cause::http_status, "HTTP 503");
  report(0, Cause::ok);
  const auto eps = d->episodes();
  LONGS_EQUAL(2, eps.size());
  // Open first, then closed.
  LONGS_EQUAL(1, eps[0].upstream);
  CHECK_TRUE(eps[0].open);
  STRCMP_EQUAL(url1.c_str(), eps[0].url.c_str());
  LONGS_EQUAL(0, eps[1].upstream);
  CHECK_FALSE(eps[1].open);
}

TEST(Diagnostics, RingKeepsTheNewestClosedEpisodes) {
  diag::Diagnostics small(sched, diag::DiagnosticsOptions{3});
  for (int i = 0; i < 5; ++i) {
    small.on_attempt({0, &url0, Cause::eof, nullptr, 1ms});
    small.on_attempt({0, &url0, Cause::ok, nullptr, 1ms});
  }
  small.on_attempt({0, &url0, Cause::eof, nullptr, 1ms});  // open: kept besides the ring
  const auto eps = small.episodes();
  LONGS_EQUAL(4, eps.size());
  LONGS_EQUAL(6, eps[0].id);
  CHECK_TRUE(eps[0].open);
  LONGS_EQUAL(5, eps[1].id);
  LONGS_EQUAL(4, eps[2].id);
  LONGS_EQUAL(3, eps[3].id);
  LONGS_EQUAL(6, small.opened_total());
}

TEST(Diagnostics, FormatsForHumans) {
  STRCMP_EQUAL("1.250 s", diag::format_seconds(1250ms).c_str());
  STRCMP_EQUAL("0.000 s", diag::format_seconds(0ms).c_str());
  STRCMP_EQUAL("1970-01-01T00:00:01.005Z",
               diag::format_utc(diag::WallClock::time_point(std::chrono::milliseconds(1005))).c_str());
}

// The pool is what feeds diagnostics in the daemon; this is that wiring.
TEST_GROUP(PoolEpisodes) {
  test::FakeScheduler sched;
  std::unique_ptr<Lines> lines;
  std::unique_ptr<diag::Diagnostics> d;
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  int ok = 0, failed = 0;

  void setup() override {
    lines = std::make_unique<Lines>();
    log::set_sink(&Lines::sink, lines.get());
    log::set_level(log::Level::info);
    d = std::make_unique<diag::Diagnostics>(sched);
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    std::vector<upstream::EntrySpec> specs;
    specs.push_back({0, "tls://192.0.2.1:853", 0, std::move(t)});
    upstream::PoolOptions po;
    po.on_attempt = [this](const upstream::AttemptReport& r) { d->on_attempt(r); };
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), std::move(po));
  }
  void teardown() override {
    pool.reset();
    d.reset();
    log::set_sink(nullptr, nullptr);
    lines.reset();
  }
  void submit() {
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    pool->submit(std::move(q), [this](upstream::PoolOutcome&& o) { ++(o.ok ? ok : failed); });
  }
};

TEST(PoolEpisodes, AFailureRunThroughThePoolIsOneEpisode) {
  for (int i = 0; i < 5; ++i) submit();
  for (int i = 0; i < 4; ++i) fake->fail_oldest(Cause::connection_reset);
  fake->answer_oldest();
  sched.run_ready();
  LONGS_EQUAL(1, ok);
  LONGS_EQUAL(4, failed);
  LONGS_EQUAL(1, lines->at(log::Level::warn).size());
  LONGS_EQUAL(1, lines->at(log::Level::info).size());
  const auto eps = d->episodes();
  LONGS_EQUAL(1, eps.size());
  LONGS_EQUAL(4, eps[0].failures);
  CHECK_FALSE(eps[0].open);
}

TEST(PoolEpisodes, AttemptTimeoutOpensAnEpisode) {
  submit();
  sched.advance(2001ms);  // the default attempt budget
  sched.run_ready();
  LONGS_EQUAL(1, failed);
  const auto eps = d->episodes();
  LONGS_EQUAL(1, eps.size());
  CHECK(eps[0].first_cause == Cause::attempt_timeout);
}

// A stale reused DoT session recovered by its one redial: the transport
// retries internally and reports only the final outcome (a success), with
// the recovery visible as a counter. The pool, and so diagnostics, never see
// a failure: no episode, no warn line.
TEST(PoolEpisodes, RecoveredStaleReuseNeverOpensAnEpisode) {
  submit();
  fake->answer_oldest();
  sched.run_ready();
  // Second exchange: the server had dropped the idle session; the transport
  // redials once and succeeds, counting a recovery.
  submit();
  fake->reuse_recoveries = 1;
  fake->answer_oldest();
  sched.run_ready();
  LONGS_EQUAL(2, ok);
  LONGS_EQUAL(0, d->episodes().size());
  LONGS_EQUAL(0, d->opened_total());
  LONGS_EQUAL(0, lines->v.size());
  const auto s = pool->snapshot();
  LONGS_EQUAL(1, s[0].transport.reuse_recoveries);
  LONGS_EQUAL(2, s[0].outcomes[static_cast<std::size_t>(Cause::ok)]);
  CHECK(upstream::HealthState::healthy == s[0].health);
}
