#pragma once
// The fixture of the DohTransport tests (doh_transport_test.cpp,
// doh_transport_capacity_test.cpp, doh_transport_retry_test.cpp): a loop,
// a scratch directory, and the loopback servers a test starts —
// nxdns-fixture-doh over HTTPS/1.1 directly, behind nghttpx for HTTP/2, and
// nxdns-delay-relay adding round-trip time — plus a pool of one DoH entry
// for the capacity and retry tests.
#include <event2/event.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
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
#include "support/query_helpers.hpp"
#include "support/skipped_cases.hpp"
#include "upstream/curl_multi.hpp"
#include "upstream/doh_test_support.hpp"
#include "upstream/doh_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::test {

using upstream::Cause;
using upstream::CurlMulti;
using upstream::DohTransport;
using upstream::DohTransportOptions;
using upstream::ExchangeResult;
using upstream::Transport;

struct DohTransportFixture : public Utest, public test::QueryHelpers {
  struct Outcome {
    int calls = 0;
    ExchangeResult result;
  };

  static double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

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
    for (const char* name : {"nxdns-test-pki", "nxdns-fixture-doh", "nxdns-delay-relay"}) {
      if (test::fixture_program(name).empty()) {
        no_fixtures = log::cat(name, " not built in ", test::fixture_dir(), " (build the fixture targets)");
        return;
      }
    }
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

  // The one nghttpx command line: TLS + HTTP/2 on `port` in front of the
  // --plain fixture on `backend`, logging to <log_name>.log. The first start
  // and a restart on the same port both use it, so a restarted proxy is the
  // same proxy.
  std::vector<std::string> h2_front_argv(std::uint16_t port, std::uint16_t backend, const std::string& log_name,
                                         const std::vector<std::string>& extra = {}) {
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
                                     "--errorlog-file=" + dir->file(log_name + ".log"),
                                     dir->file("pki/server.key"),
                                     dir->file("pki/server.pem")};
    argv.insert(argv.end() - 2, extra.begin(), extra.end());
    return argv;
  }

  // nghttpx terminating TLS + HTTP/2 in front of a --plain fixture.
  std::uint16_t start_h2_front(std::uint16_t backend, std::vector<std::string> extra = {}) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::uint16_t port = test::free_loopback_port();
      if (front->start(h2_front_argv(port, backend, "nghttpx", extra), dir->file("nghttpx.out")) != 0) {
        FAIL("cannot start nghttpx");
      }
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

// A pool of one DoH entry, driven from the test's loop (capacity, and the
// one retry through a pool).
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

struct DohPoolFixture : public DohTransportFixture {
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
    DohTransportFixture::teardown();
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

}  // namespace nxdns::test

// A case that needs the fixture programs, or nghttpx too, starts with these:
// where they cannot run it is skipped (support/skipped_cases.hpp), never
// passed. The nghttpx cases are named Http2* so that they run as their own
// ctest entry (tests/upstream/CMakeLists.txt).
#define REQUIRE_FIXTURES()                                    \
  do {                                                        \
    if (!no_fixtures.empty()) SKIP_CASE(no_fixtures.c_str()); \
  } while (0)

#define REQUIRE_NGHTTPX()                                                        \
  do {                                                                           \
    if (nghttpx.empty()) SKIP_CASE("nghttpx not found (Debian: nghttp2-proxy)"); \
  } while (0)
