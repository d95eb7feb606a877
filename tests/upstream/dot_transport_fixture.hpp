#pragma once
// The fixture of the DotTransport tests (dot_transport_test.cpp and the
// dot_transport_*_test.cpp files, one topic each): a loop, a test PKI, the
// in-process TLS server on loopback (same event loop) scripted per test, a
// transport to it, and the log lines the transport wrote.
#include <event2/event.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "support/query_helpers.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/dot_transport.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::test {

using upstream::Cause;
using upstream::DotTransport;
using upstream::DotTransportOptions;
using upstream::ExchangeResult;
using upstream::Transport;

struct DotTransportFixture : public Utest, public test::QueryHelpers {
  struct Outcome {
    int calls = 0;
    ExchangeResult result;
  };

  struct LogLines {
    std::vector<std::pair<log::Level, std::string>> lines;
    static void sink(log::Level l, std::string_view msg, void* ctx) {
      static_cast<LogLines*>(ctx)->lines.emplace_back(l, std::string(msg));
    }
    std::size_t count(log::Level l, const std::string& needle) const {
      std::size_t n = 0;
      for (const auto& [lvl, text] : lines) {
        if (lvl == l && text.find(needle) != std::string::npos) ++n;
      }
      return n;
    }
  };

  loop::EventBasePtr base;
  std::unique_ptr<loop::LoopScheduler> sched;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<test::TestPki> pki;
  std::unique_ptr<test::TempFile> ca;
  std::unique_ptr<test::DotTestServer> server;
  std::unique_ptr<DotTransport> dot;
  std::unique_ptr<LogLines> logs;

  void setup() override {
    logs = std::make_unique<LogLines>();
    log::set_sink(&LogLines::sink, logs.get());
    log::set_level(log::Level::debug);
    base.reset(event_base_new());
    sched = std::make_unique<loop::LoopScheduler>(base.get());
    driver = std::make_unique<test::LoopDriver>(base.get());
    pki = std::make_unique<test::TestPki>("dot.test");
    ca = std::make_unique<test::TempFile>(pki->ca_pem);
  }
  void teardown() override {
    dot.reset();
    server.reset();
    ca.reset();
    pki.reset();
    driver.reset();
    sched.reset();
    base.reset();
    log::set_sink(nullptr, nullptr);
    log::set_level(log::Level::info);
    logs.reset();
  }

  void start_server(test::DotTestServer::Behaviour b = {}) {
    server = std::make_unique<test::DotTestServer>(base.get(), *pki, b);
  }

  DotTransportOptions options(std::uint16_t port) {
    DotTransportOptions o;
    o.address = *net::make_endpoint("127.0.0.1", port);
    o.tls_name = "dot.test";
    o.ca_file = ca->path();
    o.label = log::cat("tls://127.0.0.1:", port);
    return o;
  }

  void make_transport(const DotTransportOptions& o) {
    std::string err;
    dot = DotTransport::create(base.get(), *sched, o, &err);
    if (!dot) FAIL(err.c_str());
  }
  void make_transport() { make_transport(options(server->port())); }
  // A server that reads queries and never answers.
  static test::DotTestServer::Behaviour silent() {
    test::DotTestServer::Behaviour b;
    b.silent = true;
    return b;
  }
  // The set-up most tests share: a server scripted by `b` and a transport
  // to it with the default options.
  void serve(test::DotTestServer::Behaviour b = {}) {
    start_server(b);
    make_transport();
  }

  // Runs the loop until `pred` holds; fails the test after `ms`.
  void run_until(const std::function<bool()>& pred, int ms = 5000, const char* what = "condition") {
    if (!driver->until(pred, ms)) FAIL(log::cat("timed out waiting for ", what).c_str());
  }
  // Runs the loop until every exchange of `outs` has completed; fails the
  // test after `ms`.
  template <std::size_t N>
  void run_until_all(const Outcome (&outs)[N], int ms = 5000, const char* what = "every exchange's callback") {
    run_until([&] { return std::all_of(std::begin(outs), std::end(outs), [](const Outcome& o) { return o.calls > 0; }); },
              ms, what);
  }
  // Runs the loop until no session is connecting or handshaking. A cold
  // burst's handshakes take one loop turn each (handshake_pacer.hpp), so the
  // spread's later sessions may come up after the burst has its answers.
  void run_until_dials_done(int ms = 5000) {
    run_until(
        [&] {
          for (std::size_t i = 0; i < dot->session_count(); ++i) {
            const auto st = dot->session(i).state();
            if (st == upstream::SessionState::connecting || st == upstream::SessionState::handshaking) return false;
          }
          return true;
        },
        ms, "the burst's dials to finish");
  }
  // Runs the loop for `ms` regardless.
  void run_for(int ms) {
    driver->run_for(ms);
  }

  Transport::ExchangeId start(Outcome& out, std::uint16_t id, const std::string& name) {
    const dns::Bytes q = query_for(id, name);
    return dot->start(q, [&out](ExchangeResult&& r) {
      ++out.calls;
      out.result = std::move(r);
    });
  }

  // Starts an exchange and runs the loop until its callback ran (once).
  void finish(Outcome& out, std::uint16_t id, const std::string& name) {
    start(out, id, name);
    run_until([&] { return out.calls > 0; }, 5000, "the exchange's callback");
  }

  // A failed exchange: its cause, and a detail that names what went wrong.
  static void check_failed(const Outcome& out, Cause cause, const std::string& detail_part) {
    LONGS_EQUAL(static_cast<int>(cause), static_cast<int>(out.result.cause));
    if (out.result.detail.find(detail_part) == std::string::npos)
      FAIL(log::cat("detail '", out.result.detail, "' lacks '", detail_part, "'").c_str());
  }

  void exchange_ok(std::uint16_t id, const std::string& name) {
    Outcome out;
    finish(out, id, name);
    if (!out.result.ok()) {
      FAIL(log::cat("exchange failed: ", describe(out.result.cause), ": ", out.result.detail).c_str());
    }
    LONGS_EQUAL(id, dns::get_id(out.result.response));
    CHECK_TRUE(answers_name(out.result.response, name));
  }
};

}  // namespace nxdns::test
