// DohTransport against real servers on loopback: nxdns-fixture-doh over
// HTTPS/1.1 directly, and behind nghttpx for HTTP/2, optionally with
// nxdns-delay-relay adding round-trip time. Covers the wire rules (POST/GET,
// ID 0, padding, Accept), every refusal (status, media type, size,
// truncation, certificate), cancellation and teardown, connection reuse and
// the shared multi, and a mixed DoT/DoH pool.
#include "upstream/doh_transport.hpp"

#include <event2/event.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "upstream/curl_multi.hpp"
#include "upstream/doh_test_support.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/dot_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::CurlMulti;
using upstream::DohTransport;
using upstream::DohTransportOptions;
using upstream::ExchangeResult;
using upstream::Transport;

namespace {

struct Outcome {
  int calls = 0;
  ExchangeResult result;
};

dns::Bytes query_for(std::uint16_t id, const std::string& name) {
  return dns::make_query(id, *dns::name_from_text(name), 1, 1232);
}

bool answers_name(const dns::Bytes& response, const std::string& name) {
  const auto q = dns::parse_question_of(response);
  const auto want = dns::name_from_text(name);
  return q && want && dns::names_equal(q->name, *want);
}


double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_GROUP(DohTransport) {
  loop::EventBasePtr base;
  std::unique_ptr<loop::LoopScheduler> sched;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<test::TempDir> dir;
  std::unique_ptr<test::TestProcess> fixture, front, relay;
  std::shared_ptr<CurlMulti> multi;
  std::unique_ptr<DohTransport> doh;
  std::string nghttpx;
  int fixture_runs = 0;
  // Why the fixture programs cannot run here (empty: they can).
  std::string no_fixtures;

  void setup() override {
    base.reset(event_base_new());
    sched = std::make_unique<loop::LoopScheduler>(base.get());
    driver = std::make_unique<test::LoopDriver>(base.get());
    dir = std::make_unique<test::TempDir>();
    fixture = std::make_unique<test::TestProcess>();
    front = std::make_unique<test::TestProcess>();
    relay = std::make_unique<test::TestProcess>();
    nghttpx = test::find_nghttpx();
    // A cross-compiled build runs this binary under qemu-user; without
    // binfmt_misc the (equally cross-compiled) fixtures cannot be spawned.
    test::TestProcess probe;
    if (probe.start(test::with_emulator({program("nxdns-test-pki"), "--help"}), dir->file("probe.log")) == ENOEXEC) {
      no_fixtures = "fixture programs cannot be executed here (cross build without binfmt_misc)";
      return;
    }
    make_pki("pki", "doh.test");
  }
  void teardown() override {
    doh.reset();
    multi.reset();
    relay.reset();
    front.reset();
    fixture.reset();
    dir.reset();
    driver.reset();
    sched.reset();
    base.reset();
    nghttpx.clear();
    no_fixtures.clear();
  }

  std::string program(const char* name) {
    const std::string p = test::fixture_program(name);
    if (p.empty()) FAIL(log::cat(name, " not found in ", test::fixture_dir(), " (build the fixtures first)").c_str());
    return p;
  }

  void make_pki(const std::string& sub, const std::string& name) {
    test::TestProcess pki;
    const std::string out = dir->file(sub);
    if (pki.start(test::with_emulator({program("nxdns-test-pki"), "--out", out, "--name", name}), dir->file("pki.log")) !=
        0) {
      FAIL("cannot run nxdns-test-pki");
    }
    for (int i = 0; i < 500 && pki.running(); ++i) usleep(10000);
    if (test::read_text(out + "/ca.pem").empty()) FAIL("nxdns-test-pki wrote no ca.pem");
  }

  // Starts nxdns-fixture-doh (TLS unless `plain`) and returns its port.
  std::uint16_t start_fixture(std::vector<std::string> extra = {}, bool plain = false, std::uint16_t port = 0) {
    if (!no_fixtures.empty()) FAIL("start_fixture without REQUIRE_FIXTURES()");
    const std::string port_file = dir->file(log::cat("fx", ++fixture_runs, ".port"));
    std::vector<std::string> argv = {program("nxdns-fixture-doh"), "--listen", log::cat("127.0.0.1:", port),
                                     "--port-file", port_file, "--stats-file", dir->file("fx.stats")};
    if (plain) {
      argv.push_back("--plain");
    } else {
      argv.insert(argv.end(), {"--cert", dir->file("pki/server.pem"), "--key", dir->file("pki/server.key")});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (fixture->start(test::with_emulator(argv), dir->file("fixture.log")) != 0) FAIL("cannot start nxdns-fixture-doh");
    const auto p = test::wait_port_file(port_file);
    if (!p) FAIL(log::cat("nxdns-fixture-doh did not start: ", test::read_text(dir->file("fixture.log"))).c_str());
    return *p;
  }

  // nghttpx terminating TLS + HTTP/2 in front of a --plain fixture.
  std::uint16_t start_h2_front(std::uint16_t backend, std::vector<std::string> extra = {}) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::uint16_t port = test::free_loopback_port();
      std::vector<std::string> argv = {nghttpx,
                                             "--conf=/dev/null",
                                             "--single-process",
                                             "--workers=1",
                                             "--no-ocsp",
                                             log::cat("--frontend=127.0.0.1,", port),
                                             log::cat("--backend=127.0.0.1,", backend),
                                             // Streams become backend requests: enough
                                             // of those that none waits for another.
                                             "--backend-connections-per-host=64",
                                             "--backend-keep-alive-timeout=60s",
                                             "--errorlog-file=" + dir->file("nghttpx.log"),
                                             dir->file("pki/server.key"),
                                             dir->file("pki/server.pem")};
      argv.insert(argv.end() - 2, extra.begin(), extra.end());
      if (front->start(argv, dir->file("nghttpx.out")) != 0) FAIL("cannot start nghttpx");
      if (test::wait_listening(port, 3000)) return port;
      front->stop();
    }
    FAIL(log::cat("nghttpx did not start: ", test::read_text(dir->file("nghttpx.log"))).c_str());
    return 0;
  }

  std::uint16_t start_relay(std::uint16_t to, int rtt_ms, std::vector<std::string> extra = {}) {
    const std::string port_file = dir->file("relay.port");
    std::vector<std::string> argv = {program("nxdns-delay-relay"), "--listen", "127.0.0.1:0", "--to",
                                     log::cat("127.0.0.1:", to), "--rtt-ms", std::to_string(rtt_ms),
                                     "--port-file", port_file};
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (0 != relay->start(test::with_emulator(argv), dir->file("relay.log"))) {
      FAIL("cannot start nxdns-delay-relay");
    }
    const auto p = test::wait_port_file(port_file);
    if (!p) FAIL("nxdns-delay-relay did not start");
    return *p;
  }

  long long stat(const std::string& name) { return test::json_counter(test::read_text(dir->file("fx.stats")), name); }
  // The fixture publishes its counters from a writer thread, a moment after
  // the wire: poll for the value (a wrong one stays wrong and fails).
  void expect_stat(const std::string& name, long long want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    long long got = stat(name);
    while (got != want && std::chrono::steady_clock::now() < deadline) {
      usleep(2000);
      got = stat(name);
    }
    if (got != want) FAIL(log::cat("fixture counter ", name, ": want ", want, ", got ", got).c_str());
  }

  DohTransportOptions options(std::uint16_t port) {
    DohTransportOptions o;
    o.address = *net::make_endpoint("127.0.0.1", port);
    o.tls_name = "doh.test";
    o.path = "/dns-query";
    o.ca_file = dir->file("pki/ca.pem");
    o.label = log::cat("https://doh.test:", port, "/dns-query");
    return o;
  }

  void make_transport(const DohTransportOptions& o) {
    std::string err;
    if (!multi) {
      multi = CurlMulti::create(base.get(), &err);
      if (!multi) FAIL(err.c_str());
    }
    doh = DohTransport::create(multi, *sched, o, &err);
    if (!doh) FAIL(err.c_str());
  }

  void run_until(const std::function<bool()>& pred, int ms = 5000, const char* what = "condition") {
    if (!driver->until(pred, ms)) FAIL(log::cat("timed out waiting for ", what).c_str());
  }
  void run_for(int ms) {
    driver->run_for(ms);
  }

  Transport::ExchangeId start(Transport& t, Outcome& out, std::uint16_t id, const std::string& name) {
    const dns::Bytes q = query_for(id, name);
    return t.start(q, [&out](ExchangeResult&& r) {
      ++out.calls;
      out.result = std::move(r);
    });
  }
  Transport::ExchangeId start(Outcome& out, std::uint16_t id, const std::string& name) {
    return start(*doh, out, id, name);
  }

  ExchangeResult exchange(std::uint16_t id, const std::string& name) {
    Outcome out;
    start(out, id, name);
    run_until([&] { return out.calls > 0; }, 8000, "an exchange");
    LONGS_EQUAL(1, out.calls);
    return std::move(out.result);
  }

  void exchange_ok(std::uint16_t id, const std::string& name) {
    const ExchangeResult r = exchange(id, name);
    if (!r.ok()) FAIL(log::cat("exchange failed: ", describe(r.cause), ": ", r.detail).c_str());
    LONGS_EQUAL(id, dns::get_id(r.response));
    CHECK_TRUE(answers_name(r.response, name));
  }

  // A refusal: the cause expected, no answer handed on.
  void exchange_fails(Cause want, const std::string& name) {
    const ExchangeResult r = exchange(0x5151, name);
    if (r.cause != want) {
      FAIL(log::cat("want ", describe(want), ", got ", describe(r.cause), ": ", r.detail).c_str());
    }
    CHECK_TRUE(r.response.empty());
  }

  // `n` concurrent exchanges; all must succeed. Returns the wall time.
  double burst(int n, const std::string& tag) {
    std::vector<Outcome> out(static_cast<std::size_t>(n));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) start(out[static_cast<std::size_t>(i)], static_cast<std::uint16_t>(i + 1), log::cat(tag, i, ".example"));
    run_until(
        [&] {
          return std::all_of(out.begin(), out.end(), [](const Outcome& o) { return o.calls > 0; });
        },
        10000, "a burst");
    const double wall = ms_since(t0);
    for (int i = 0; i < n; ++i) {
      const auto& r = out[static_cast<std::size_t>(i)].result;
      if (!r.ok()) FAIL(log::cat("burst exchange ", i, " failed: ", describe(r.cause), ": ", r.detail).c_str());
      LONGS_EQUAL(i + 1, dns::get_id(r.response));
      CHECK_TRUE(answers_name(r.response, log::cat(tag, i, ".example")));
    }
    return wall;
  }
};

#define REQUIRE_FIXTURES()                                  \
  do {                                                      \
    if (!no_fixtures.empty()) {                             \
      UT_PRINT((no_fixtures + ": test skipped").c_str());   \
      return;                                               \
    }                                                       \
  } while (0)

TEST(DohTransport, PostExchangeFollowsRfc8484) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture();
  make_transport(options(port));
  exchange_ok(0x4242, "post.example");

  expect_stat("posts", 1);
  expect_stat("gets", 0);
  expect_stat("nonzero_ids", 0);     // §4.1: ID 0 on the wire
  expect_stat("unpadded", 0);        // RFC 8467: 128-octet blocks
  expect_stat("missing_accept", 0);  // Accept: application/dns-message
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(1, st.exchanges_new);
  LONGS_EQUAL(0, st.exchanges_reused);
  LONGS_EQUAL(1, st.open_sessions);
  CHECK_TRUE(st.tls_version.rfind("TLSv1.", 0) == 0);
  STRCMP_EQUAL("HTTP/1.1", doh->http_version().c_str());
  LONGS_EQUAL(0, doh->live_exchanges());
  LONGS_EQUAL(0, doh->multi().transfers());
}

TEST(DohTransport, GetExchangeCarriesTheQueryInTheUrl) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture();
  auto o = options(port);
  o.use_get = true;
  make_transport(o);
  exchange_ok(0x0102, "get.example");
  expect_stat("gets", 1);
  expect_stat("posts", 0);
  expect_stat("nonzero_ids", 0);
  expect_stat("bad_requests", 0);
}

TEST(DohTransport, SequentialExchangesReuseOneConnection) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture();
  make_transport(options(port));
  exchange_ok(1, "one.example");
  exchange_ok(2, "two.example");
  exchange_ok(3, "three.example");
  expect_stat("connections", 1);
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(1, st.exchanges_new);
  LONGS_EQUAL(2, st.exchanges_reused);
}

TEST(DohTransport, CompletionNeverRunsInsideStart) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture();
  make_transport(options(port));
  Outcome out;
  const dns::Bytes junk{1, 2, 3};  // not a query: fails at once, but later
  doh->start(junk, [&out](ExchangeResult&& r) {
    ++out.calls;
    out.result = std::move(r);
  });
  LONGS_EQUAL(0, out.calls);
  run_until([&] { return out.calls > 0; });
  CHECK_TRUE(out.result.cause == Cause::bad_response);
}

TEST(DohTransport, HttpErrorStatusIsCountedNeverAnswered) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--status", "500"});
  make_transport(options(port));
  const ExchangeResult r = exchange(7, "status.example");
  CHECK_TRUE(r.cause == Cause::http_status);
  STRCMP_EQUAL("HTTP 500", r.detail.c_str());
  CHECK_TRUE(r.response.empty());
  // The small error page was read to its end: the connection stays usable.
  exchange_fails(Cause::http_status, "status2.example");
  expect_stat("connections", 1);
}

TEST(DohTransport, Http503DetailNamesTheStatus) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--status", "503"});
  make_transport(options(port));
  const ExchangeResult r = exchange(7, "status.example");
  CHECK_TRUE(r.cause == Cause::http_status);
  STRCMP_EQUAL("HTTP 503", r.detail.c_str());
}

TEST(DohTransport, WrongContentTypeIsRefused) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--content-type", "text/plain"});
  make_transport(options(port));
  const ExchangeResult r = exchange(9, "ctype.example");
  CHECK_TRUE(r.cause == Cause::bad_content_type);
  CHECK_TRUE(r.detail.find("text/plain") != std::string::npos);
  CHECK_TRUE(r.response.empty());
}

TEST(DohTransport, OversizedBodyIsCutShort) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--oversized"});
  make_transport(options(port));
  exchange_fails(Cause::response_too_large, "big.example");
}

TEST(DohTransport, TruncatedBodyIsAFailureNotAnAnswer) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--truncated-body"});
  make_transport(options(port));
  exchange_fails(Cause::eof, "cut.example");
}

TEST(DohTransport, CertificateForAnotherNameIsRefused) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture();
  auto o = options(port);
  o.tls_name = "other.test";  // the fixture's certificate names doh.test
  make_transport(o);
  exchange_fails(Cause::certificate, "name.example");
}

TEST(DohTransport, UntrustedIssuerIsRefused) {
  REQUIRE_FIXTURES();
  make_pki("other-ca", "doh.test");
  const auto port = start_fixture();
  auto o = options(port);
  o.ca_file = dir->file("other-ca/ca.pem");
  make_transport(o);
  exchange_fails(Cause::certificate, "trust.example");
}

TEST(DohTransport, UnreadableCaFileFailsCreation) {
  auto o = options(443);
  o.ca_file = dir->file("missing.pem");
  std::string err;
  multi = CurlMulti::create(base.get(), &err);
  CHECK_TRUE(DohTransport::create(multi, *sched, o, &err) == nullptr);
  CHECK_TRUE(err.find("missing.pem") != std::string::npos);
  CHECK_TRUE(err.find(o.label) != std::string::npos);
}

TEST(DohTransport, ClosedPortIsAConnectFailure) {
  auto o = options(test::free_loopback_port());
  // Never read (nothing answers the dial), but it must exist.
  std::ofstream(dir->file("unused-ca.pem")) << "\n";
  o.ca_file = dir->file("unused-ca.pem");
  make_transport(o);
  exchange_fails(Cause::connect_failed, "refused.example");
  LONGS_EQUAL(0, doh->stats().open_sessions);
}

TEST(DohTransport, CancelledExchangeNeverCompletesAndReleasesItsHandle) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--black-hole"});
  make_transport(options(port));
  Outcome out;
  const auto id = start(out, 3, "hole.example");
  run_until([&] { return stat("black_holed") == 1; }, 5000, "the request to reach the fixture");
  LONGS_EQUAL(1, doh->multi().transfers());
  doh->cancel(id);
  LONGS_EQUAL(0, doh->live_exchanges());
  LONGS_EQUAL(0, doh->multi().transfers());
  run_for(200);
  LONGS_EQUAL(0, out.calls);
  // Cancelling again, or something unknown, is harmless.
  doh->cancel(id);
  doh->cancel(9999);
}

TEST(DohTransport, CancelAfterFinishDropsThePendingCompletion) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--status", "500"});
  make_transport(options(port));
  Outcome out;
  const auto id = start(out, 3, "late.example");
  // Finish on the wire, but cancel before the deferred completion runs: the
  // transfer is done once the multi holds no transfer any more.
  run_until([&] { return doh->multi().transfers() == 0; }, 5000, "the transfer to end");
  doh->cancel(id);
  run_for(100);
  LONGS_EQUAL(0, out.calls);
}

TEST(DohTransport, CloseAllCompletesOutstandingExchangesAsCancelled) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--black-hole"});
  make_transport(options(port));
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("close", i, ".example"));
  run_until([&] { return stat("black_holed") == 3; }, 5000, "three held requests");
  doh->close_all();
  for (const auto& o : out) LONGS_EQUAL(0, o.calls);  // never from inside close_all
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& o : out) CHECK_TRUE(o.result.cause == Cause::cancelled);
  LONGS_EQUAL(0, doh->multi().transfers());
}

TEST(DohTransport, DestroyingTheTransportWithLiveExchangesRunsNoCompletion) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--black-hole"});
  make_transport(options(port));
  Outcome out;
  start(out, 1, "teardown.example");
  run_until([&] { return stat("black_holed") == 1; }, 5000, "the held request");
  doh.reset();
  LONGS_EQUAL(0, multi->transfers());
  run_for(100);
  LONGS_EQUAL(0, out.calls);
}

TEST(DohTransport, ServerRestartIsSurvivedWithANewConnection) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture();
  make_transport(options(port));
  exchange_ok(1, "before.example");
  // The pooled connection dies while idle; the next exchange must not
  // inherit the corpse.
  fixture->stop();
  start_fixture({}, false, port);
  exchange_ok(2, "after.example");
  LONGS_EQUAL(2, doh->stats().connections_new);
  LONGS_EQUAL(1, doh->stats().open_sessions);
}

TEST(DohTransport, HttpOneBurstSpreadsOverAtMostEightConnections) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--response-delay-ms", "50"});
  make_transport(options(port));
  burst(30, "h1burst");
  CHECK_TRUE(doh->peak_open_connections() <= upstream::slots_per_entry);
  CHECK_TRUE(doh->peak_open_connections() >= 2);  // not serialised on one
  CHECK_TRUE(stat("connections") <= static_cast<long long>(upstream::slots_per_entry));
  expect_stat("answers", 30);
}

TEST(DohTransport, SharedMultiKeepsUpstreamsApartAndIsolatesAConflictingPin) {
  REQUIRE_FIXTURES();
  const auto p1 = start_fixture();
  make_transport(options(p1));
  std::string err;
  // The same name on another port: another host of the same multi.
  auto second = DohTransport::create(multi, *sched, options(p1 == 65535 ? 1 : p1 + 1), &err);
  CHECK_TRUE(second != nullptr);
  CHECK_TRUE(&second->multi() == multi.get());
  LONGS_EQUAL(2, multi->host_count());
  // The same name and port pinned to another address: its own multi.
  auto o = options(p1);
  o.address = *net::make_endpoint("127.0.0.2", p1);
  auto third = DohTransport::create(multi, *sched, o, &err);
  CHECK_TRUE(third != nullptr);
  CHECK_TRUE(&third->multi() != multi.get());
  exchange_ok(5, "shared.example");
  third.reset();
  second.reset();
}

TEST(DohTransport, MixedPoolFailsOverFromABlackHoledDohToDot) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--black-hole"});
  test::TestPki dot_pki("dot.test");
  test::TempFile dot_ca(dot_pki.ca_pem);
  test::DotTestServer dot_server(base.get(), dot_pki);
  std::string err;
  multi = CurlMulti::create(base.get(), &err);
  std::vector<upstream::EntrySpec> entries;
  entries.push_back(upstream::EntrySpec{0, "https://doh.test/dns-query", 0, DohTransport::create(multi, *sched, options(port), &err)});
  upstream::DotTransportOptions dot_opts;
  dot_opts.address = dot_server.endpoint();
  dot_opts.tls_name = "dot.test";
  dot_opts.ca_file = dot_ca.path();
  dot_opts.label = "tls://127.0.0.1";
  entries.push_back(upstream::EntrySpec{1, "tls://127.0.0.1", 1, upstream::DotTransport::create(base.get(), *sched, dot_opts, &err)});
  upstream::PoolOptions po;
  po.attempt_budget = std::chrono::milliseconds(300);
  {
    upstream::Pool pool(*sched, std::move(entries), po);
    std::vector<std::optional<upstream::PoolOutcome>> got(2);
    for (std::size_t i = 0; i < got.size(); ++i) {
      pool.submit(query_for(static_cast<std::uint16_t>(i + 10), log::cat("mixed", i, ".example")),
                  [&got, i](upstream::PoolOutcome&& o) { got[i] = std::move(o); });
    }
    run_until([&] { return got[0] && got[1]; }, 5000, "pool answers");
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK_TRUE(got[i]->ok);
      LONGS_EQUAL(1, got[i]->entry_index);  // answered by the DoT entry
      CHECK_TRUE(answers_name(got[i]->response, log::cat("mixed", i, ".example")));
    }
    // The DoH entry's attempts ran out of budget, were cancelled, and left
    // nothing behind in the multi.
    const auto snaps = pool.snapshot();
    for (const auto& s : snaps) {
      if (s.index != 0) continue;
      STRCMP_EQUAL("doh", s.kind.c_str());
      CHECK_TRUE(s.outcomes[static_cast<std::size_t>(Cause::attempt_timeout)] >= 2);
      CHECK_TRUE(s.health != upstream::HealthState::healthy);
    }
    LONGS_EQUAL(0, multi->transfers());
  }
}

// ---- HTTP/2 through nghttpx ------------------------------------------------

#define REQUIRE_NGHTTPX()                                                  \
  do {                                                                     \
    if (nghttpx.empty()) {                                                 \
      UT_PRINT("nghttpx not found (Debian: nghttp2-proxy): test skipped"); \
      return;                                                              \
    }                                                                      \
  } while (0)

TEST(DohTransport, Http2BurstOf30SharesOneConnectionAt40msRtt) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({}, true);
  const auto h2 = start_h2_front(backend);
  const auto port = start_relay(h2, 40);
  make_transport(options(port));

  // Cold: the first connection is still in its handshakes when all 30 are
  // started; they wait for it (PIPEWAIT) and multiplex on it.
  const double cold = burst(30, "h2cold");
  LONGS_EQUAL(1, doh->stats().connections_new);
  // Warm: same connection again.
  const auto t0 = std::chrono::steady_clock::now();
  exchange_ok(0x7000, "h2single.example");
  const double single = ms_since(t0);
  const double warm = burst(30, "h2warm");
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(1, st.exchanges_new);
  LONGS_EQUAL(60, st.exchanges_reused);
  LONGS_EQUAL(1, doh->peak_open_connections());
  LONGS_EQUAL(1, st.open_sessions);
  LONGS_EQUAL(61, doh->exchanges_http2());
  STRCMP_EQUAL("HTTP/2", doh->http_version().c_str());
  expect_stat("answers", 61);
  UT_PRINT(log::cat("HTTP/2 at 40 ms RTT: single ", single, " ms, cold burst of 30 ", cold, " ms, warm burst ", warm,
                    " ms (ratio ", warm / single, ")")
               .c_str());
  // A warm burst multiplexed on one connection costs about one round trip,
  // not thirty: generous bound for a loaded 2-core machine (none under
  // emulation, where CPU time dwarfs the round trip).
  if (!test::emulated()) CHECK_TRUE(warm < single * 3 + 100);
}

TEST(DohTransport, Http1BurstAt40msRttFigures) {
  REQUIRE_FIXTURES();
  const auto backend = start_fixture();
  const auto port = start_relay(backend, 40);
  make_transport(options(port));
  const double cold = burst(30, "h1cold");
  const auto t0 = std::chrono::steady_clock::now();
  exchange_ok(0x7000, "h1single.example");
  const double single = ms_since(t0);
  const double warm = burst(30, "h1warm");
  CHECK_TRUE(doh->peak_open_connections() <= upstream::slots_per_entry);
  CHECK_TRUE(stat("connections") <= static_cast<long long>(upstream::slots_per_entry));
  STRCMP_EQUAL("HTTP/1.1", doh->http_version().c_str());
  UT_PRINT(log::cat("HTTP/1.1 at 40 ms RTT: single ", single, " ms, cold burst of 30 ", cold, " ms, warm burst ",
                    warm, " ms (ratio ", warm / single, "), connections ", stat("connections"))
               .c_str());
}

TEST(DohTransport, Http2CancelResetsOneStreamAndSparesTheOthers) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({}, true);
  const auto port = start_h2_front(backend);
  make_transport(options(port));
  exchange_ok(1, "warm.example");
  constexpr int n = 6;
  Outcome out[n];
  Transport::ExchangeId ids[n];
  for (int i = 0; i < n; ++i) ids[i] = start(out[i], static_cast<std::uint16_t>(i + 1), log::cat("delay-300.s", i, ".example"));
  run_for(100);
  doh->cancel(ids[2]);
  run_until([&] {
    for (int i = 0; i < n; ++i)
      if (i != 2 && out[i].calls == 0) return false;
    return true;
  });
  for (int i = 0; i < n; ++i) {
    if (i == 2) {
      LONGS_EQUAL(0, out[i].calls);
      continue;
    }
    CHECK_TRUE(out[i].result.ok());
  }
  LONGS_EQUAL(1, doh->stats().connections_new);
  LONGS_EQUAL(1, doh->stats().open_sessions);
}

TEST(DohTransport, Http2ProxyRestartIsSurvived) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({}, true);
  const auto port = start_h2_front(backend);
  make_transport(options(port));
  exchange_ok(1, "before.example");
  // nghttpx goes away (GOAWAY + close) while the connection is idle, then
  // comes back on the same port.
  front->stop();
  run_for(50);
  const std::vector<std::string> argv = {nghttpx,
                                         "--conf=/dev/null",
                                         "--single-process",
                                         "--workers=1",
                                         "--no-ocsp",
                                         log::cat("--frontend=127.0.0.1,", port),
                                         log::cat("--backend=127.0.0.1,", backend),
                                         "--errorlog-file=" + dir->file("nghttpx2.log"),
                                         dir->file("pki/server.key"),
                                         dir->file("pki/server.pem")};
  LONGS_EQUAL(0, front->start(argv, dir->file("nghttpx2.out")));
  CHECK_TRUE(test::wait_listening(port));
  exchange_ok(2, "after.example");
  LONGS_EQUAL(2, doh->stats().connections_new);
  STRCMP_EQUAL("HTTP/2", doh->http_version().c_str());
}

TEST(DohTransport, Http2ErrorsAreClassifiedToo) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({"--truncated-body"}, true);
  const auto port = start_h2_front(backend);
  make_transport(options(port));
  const ExchangeResult r = exchange(4, "h2cut.example");
  CHECK_FALSE(r.ok());
  CHECK_TRUE(r.response.empty());
  CHECK_TRUE(r.cause == Cause::connection_reset || r.cause == Cause::eof || r.cause == Cause::bad_response);
}

// ---- Capacity and the one retry through a pool (issue 13 items 6 and 7) ----

namespace {

// A pool of one DoH entry, driven from the test's loop.
struct DohPool {
  DohTransport* doh = nullptr;  // owned by the pool
  std::unique_ptr<upstream::Pool> pool;
  std::size_t peak_in_flight = 0;  // sampled every loop turn of a burst
  std::size_t peak_queue = 0;
  std::size_t peak_capacity = 0;
  std::size_t peak_running_beyond_capacity = 0;

  upstream::EntrySnapshot snap() const { return pool->snapshot().at(0); }
  void sample() {
    const auto s = snap();
    peak_in_flight = std::max<std::size_t>(peak_in_flight, s.in_flight);
    peak_queue = std::max<std::size_t>(peak_queue, s.queue_depth);
    peak_capacity = std::max<std::size_t>(peak_capacity, s.capacity);
    if (doh->live_exchanges() > s.capacity) {
      peak_running_beyond_capacity = std::max(peak_running_beyond_capacity, doh->live_exchanges() - s.capacity);
    }
  }
  void reset_peaks() { peak_in_flight = peak_queue = peak_capacity = peak_running_beyond_capacity = 0; }
};

}  // namespace

TEST_GROUP_BASE(DohCapacityAndRetry, TEST_GROUP_CppUTestGroupDohTransport) {
  DohPool dp;

  void make_pool(const DohTransportOptions& o, std::chrono::milliseconds attempt = std::chrono::milliseconds(4000)) {
    std::string err;
    multi = CurlMulti::create(base.get(), &err);
    if (!multi) FAIL(err.c_str());
    auto t = DohTransport::create(multi, *sched, o, &err);
    if (!t) FAIL(err.c_str());
    dp.doh = t.get();
    std::vector<upstream::EntrySpec> entries;
    entries.push_back(upstream::EntrySpec{0, o.label, 0, std::move(t)});
    upstream::PoolOptions po;
    po.attempt_budget = attempt;
    dp.pool = std::make_unique<upstream::Pool>(*sched, std::move(entries), po);
  }
  void teardown() override {
    dp.pool.reset();
    TEST_GROUP_CppUTestGroupDohTransport::teardown();
  }

  // `n` concurrent unique names through the pool; every one must succeed.
  void pool_burst(int n, const std::string& tag) {
    std::vector<std::optional<upstream::PoolOutcome>> got(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      dp.pool->submit(query_for(static_cast<std::uint16_t>(i + 1), log::cat(tag, i, ".example")),
                      [&got, i](upstream::PoolOutcome&& o) { got[static_cast<std::size_t>(i)] = std::move(o); });
    }
    dp.sample();
    run_until(
        [&] {
          dp.sample();
          return std::all_of(got.begin(), got.end(), [](const auto& o) { return o.has_value(); });
        },
        15000, "a pool burst");
    for (int i = 0; i < n; ++i) {
      const auto& o = *got[static_cast<std::size_t>(i)];
      if (!o.ok) FAIL(log::cat("pool burst query ", i, " failed: ", describe(o.cause), ": ", o.detail).c_str());
      CHECK_TRUE(answers_name(o.response, log::cat(tag, i, ".example")));
    }
  }

  upstream::PoolOutcome pool_query(std::uint16_t id, const std::string& name) {
    std::optional<upstream::PoolOutcome> got;
    dp.pool->submit(query_for(id, name), [&got](upstream::PoolOutcome&& o) { got = std::move(o); });
    run_until([&] { return got.has_value(); }, 8000, "a pool answer");
    return std::move(*got);
  }
};

TEST(DohCapacityAndRetry, Http1WaitingHappensInThePoolFifoAndAtMostEightConnectionsOpen) {
  REQUIRE_FIXTURES();
  const auto port = start_fixture({"--response-delay-ms", "100"});
  make_pool(options(port));
  for (int round = 0; round < 2; ++round) {
    dp.reset_peaks();
    const auto before = dp.snap().queued_total;
    pool_burst(30, log::cat("h1cap", round, "-"));
    const auto s = dp.snap();
    UT_PRINT(log::cat("HTTP/1.1 burst ", round, ": capacity ", s.capacity, ", peak in flight ", dp.peak_in_flight,
                      ", peak queue ", dp.peak_queue, ", queued ", s.queued_total - before, ", connections opened ",
                      dp.doh->connections_opened(), ", fixture connections ", stat("connections"))
                 .c_str());
    STRCMP_EQUAL("HTTP/1.1", dp.doh->http_version().c_str());
    LONGS_EQUAL(upstream::slots_per_entry, s.capacity);
    // 8 connections x 1 request: the other 22 wait, visibly, in the FIFO.
    CHECK_TRUE(dp.peak_in_flight <= upstream::slots_per_entry);
    LONGS_EQUAL(0, dp.peak_running_beyond_capacity);
    CHECK_TRUE(dp.peak_queue >= 30 - upstream::slots_per_entry);
    CHECK_TRUE(s.queued_total - before >= 30 - upstream::slots_per_entry);
    LONGS_EQUAL(0, s.queue_depth);
  }
  // No churn: both bursts ran on the same at most eight connections.
  CHECK_TRUE(dp.doh->connections_opened() <= upstream::slots_per_entry);
  CHECK_TRUE(stat("connections") <= static_cast<long long>(upstream::slots_per_entry));
  expect_stat("answers", 60);
}

TEST(DohCapacityAndRetry, Http2StreamLimitIsLearnedAndTheRestWaitInThePool) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({"--response-delay-ms", "100"}, true);
  // A server allowing 2 concurrent streams per connection: 8 x 2 = 16.
  const auto port = start_h2_front(backend, {"--frontend-http2-max-concurrent-streams=2"});
  make_pool(options(port));
  // The first bursts teach the limit: it shows once curl holds transfers
  // back with every slot connected (the first or the second burst, as the
  // cold race goes). Until then curl places streams beyond what the server
  // allows; each refusal makes curl retire that connection and re-send on
  // another, and a retired connection may be re-dialled by the next burst.
  // So the limit counts as learned after the first burst that ran entirely
  // within it; from then on no burst may open a connection.
  std::optional<std::uint64_t> learned_after;
  int churn_free_rounds = 0;
  for (int round = 0; round < 6 && churn_free_rounds < 2; ++round) {
    dp.reset_peaks();
    const auto before = dp.snap().queued_total;
    pool_burst(30, log::cat("h2cap", round, "-"));
    const auto s = dp.snap();
    UT_PRINT(log::cat("HTTP/2 (2 streams) burst ", round, ": capacity ", s.capacity, ", stream limit ",
                      dp.doh->stream_limit(), ", peak in flight ", dp.peak_in_flight, ", beyond capacity ",
                      dp.peak_running_beyond_capacity, ", peak queue ", dp.peak_queue, ", queued ",
                      s.queued_total - before, ", connections opened ", dp.doh->connections_opened())
                 .c_str());
    STRCMP_EQUAL("HTTP/2", dp.doh->http_version().c_str());
    CHECK_TRUE(dp.doh->peak_open_connections() <= upstream::slots_per_entry);
    if (!learned_after) {
      if (round >= 1 && dp.doh->stream_limit() == 2 && dp.peak_running_beyond_capacity == 0)
        learned_after = dp.doh->connections_opened();
      continue;
    }
    LONGS_EQUAL(2, dp.doh->stream_limit());
    LONGS_EQUAL(2 * upstream::slots_per_entry, s.capacity);
    CHECK_TRUE(dp.peak_in_flight <= 2 * upstream::slots_per_entry);
    LONGS_EQUAL(0, dp.peak_running_beyond_capacity);
    CHECK_TRUE(dp.peak_queue >= 30 - 2 * upstream::slots_per_entry);
    // No churn: once learned, bursts run on the connections already open.
    LONGS_EQUAL(*learned_after, dp.doh->connections_opened());
    ++churn_free_rounds;
  }
  CHECK_TEXT(learned_after.has_value(), "the stream limit was never learned within 6 bursts");
  LONGS_EQUAL(2, churn_free_rounds);
}

TEST(DohCapacityAndRetry, Http2WithoutAStreamLimitAdmitsTheWholeEntryCap) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({"--response-delay-ms", "100"}, true);
  const auto port = start_h2_front(backend);
  make_pool(options(port));
  pool_burst(30, "h2free");  // cold: 8 until the first answer shows HTTP/2
  dp.reset_peaks();
  pool_burst(30, "h2free2");
  const auto s = dp.snap();
  LONGS_EQUAL(upstream::max_in_flight_per_entry, s.capacity);
  LONGS_EQUAL(30, dp.peak_in_flight);  // a warm burst is not held back
  LONGS_EQUAL(0, dp.peak_queue);
  LONGS_EQUAL(1, dp.doh->connections_opened());
}

TEST(DohCapacityAndRetry, Http2ConnectionClosedWhileIdleIsRecoveredByOneRedial) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  const auto backend = start_fixture({}, true);
  const auto h2 = start_h2_front(backend);
  // The relay closes a connection idle for 300 ms when the client's next
  // request arrives: the request went out on a reused connection and EOF
  // comes back before any answer byte.
  const auto port = start_relay(h2, 0, {"--close-when-idle-ms", "300"});
  make_pool(options(port));
  const auto first = pool_query(1, "before-idle.example");
  CHECK_TRUE(first.ok);
  run_for(600);
  const auto second = pool_query(2, "after-idle.example");
  if (!second.ok) FAIL(log::cat("after idle close: ", describe(second.cause), ": ", second.detail).c_str());
  CHECK_TRUE(answers_name(second.response, "after-idle.example"));
  const auto st = dp.doh->stats();
  LONGS_EQUAL(1, st.redials);
  LONGS_EQUAL(1, st.reuse_recoveries);
  LONGS_EQUAL(2, st.connections_new);
  STRCMP_EQUAL("HTTP/2", dp.doh->http_version().c_str());
  // Not the upstream's failure: no health mark, one attempt, both ok.
  const auto s = dp.snap();
  CHECK_TRUE(s.health == upstream::HealthState::healthy);
  LONGS_EQUAL(0, s.consecutive_failures);
  LONGS_EQUAL(2, s.outcomes[static_cast<std::size_t>(Cause::ok)]);
  LONGS_EQUAL(1, second.attempts);
}

TEST(DohCapacityAndRetry, Http1ConnectionClosedWhileIdleCostsNoFailureEither) {
  REQUIRE_FIXTURES();
  const auto backend = start_fixture();
  const auto port = start_relay(backend, 0, {"--close-when-idle-ms", "300"});
  make_pool(options(port));
  CHECK_TRUE(pool_query(1, "h1-before-idle.example").ok);
  run_for(600);
  const auto second = pool_query(2, "h1-after-idle.example");
  if (!second.ok) FAIL(log::cat("after idle close: ", describe(second.cause), ": ", second.detail).c_str());
  const auto st = dp.doh->stats();
  UT_PRINT(log::cat("HTTP/1.1 idle close: redials ", st.redials, ", recoveries ", st.reuse_recoveries,
                    ", connections ", st.connections_new)
               .c_str());
  // curl retries an HTTP/1.1 request that got nothing on a reused
  // connection by itself; either way at most the one redial, and it recovered.
  CHECK_TRUE(st.redials <= 1);
  LONGS_EQUAL(st.redials, st.reuse_recoveries);
  LONGS_EQUAL(0, dp.snap().consecutive_failures);
}

TEST(DohCapacityAndRetry, NoRetryOnAFreshConnection) {
  REQUIRE_FIXTURES();
  // Half the body, then the connection closes (CURLE_PARTIAL_FILE: eof, a
  // lifecycle cause), on the connection dialed for the exchange: final.
  const auto port = start_fixture({"--truncated-body"});
  make_transport(options(port));
  exchange_fails(Cause::eof, "cut-fresh.example");
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(0, st.redials);
  LONGS_EQUAL(0, st.reuse_recoveries);
  expect_stat("requests", 1);  // sent exactly once
}

TEST(DohCapacityAndRetry, NoRetryAfterResponseBytesOnAReusedConnection) {
  REQUIRE_FIXTURES();
  // The first answer whole; the second, on the reused connection, cut after
  // its headers and half its body: the server processed the query, so a
  // resend would be a second query, not a recovery.
  const auto port = start_fixture({"--truncate-after", "1"});
  make_transport(options(port));
  exchange_ok(1, "whole.example");
  exchange_fails(Cause::eof, "cut-reused.example");
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(1, st.exchanges_reused);
  LONGS_EQUAL(0, st.redials);
  LONGS_EQUAL(0, st.reuse_recoveries);
  expect_stat("requests", 2);
}
