#pragma once
// The fixture of the PlainDnsTransport tests (plain_dns_transport_test.cpp,
// plain_dns_transport_lifecycle_test.cpp): a loop, the household-router
// server of nxdns-fixture-plain-dns run in process on 127.0.0.1 (same event
// loop, so the test reads the ID and source port of every query it saw), and
// a transport to it.
#include <dirent.h>
#include <event2/event.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "net/endpoint.hpp"
#include "plain_dns_responder.hpp"
#include "support/loop_driver.hpp"
#include "support/query_helpers.hpp"
#include "upstream/plain_dns_transport.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::test {

using upstream::Cause;
using upstream::ExchangeResult;
using upstream::PlainDnsOptions;
using upstream::PlainDnsTransport;
using upstream::Transport;

struct PlainDnsTransportFixture : public Utest, public test::QueryHelpers {
  struct Outcome {
    int calls = 0;
    ExchangeResult result;
  };

  loop::EventBasePtr base;
  std::unique_ptr<loop::LoopScheduler> sched;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<fixture::plain::Responder> server;
  std::unique_ptr<PlainDnsTransport> transport;
  std::uint16_t port = 0;

  void setup() override {
    base.reset(event_base_new());
    sched = std::make_unique<loop::LoopScheduler>(base.get());
    driver = std::make_unique<test::LoopDriver>(base.get());
  }
  void teardown() override {
    transport.reset();
    server.reset();
    driver.reset();
    sched.reset();
    base.reset();
  }

  // The router's zone most tests share.
  static fixture::plain::Behaviour router() {
    fixture::plain::Behaviour b;
    CHECK_TRUE(b.zone.add("nas.lan=192.168.1.10", fixture::plain::type_a).empty());
    return b;
  }
  // A router that reads every datagram and answers none.
  static fixture::plain::Behaviour silent() {
    fixture::plain::Behaviour b = router();
    b.drop_udp_first = 1000000;
    return b;
  }

  // Starts the server on 127.0.0.1 (a free port for UDP and TCP) and a
  // transport to it.
  void serve(fixture::plain::Behaviour b, PlainDnsOptions o = {}) {
    server = std::make_unique<fixture::plain::Responder>(base.get(), std::move(b));
    fixture::SockAddr at = *fixture::parse_loopback("127.0.0.1:0");
    std::string err;
    if (!server->listen(at, err)) FAIL(err.c_str());
    port = fixture::port_of(at.get());
    make_transport(port, o);
  }
  void make_transport(std::uint16_t to_port, PlainDnsOptions o = {}) {
    transport = std::make_unique<PlainDnsTransport>(base.get(), *sched, *net::make_endpoint("127.0.0.1", to_port), o);
  }

  void run_until(const std::function<bool()>& pred, int ms = 5000, const char* what = "condition") {
    if (!driver->until(pred, ms)) FAIL(log::cat("timed out waiting for ", what).c_str());
  }
  void run_for(int ms) { driver->run_for(ms); }

  Transport::ExchangeId start(Outcome& out, std::uint16_t id, const std::string& name) {
    return transport->start(query_for(id, name), [&out](ExchangeResult&& r) {
      ++out.calls;
      out.result = std::move(r);
    });
  }
  void finish(Outcome& out, std::uint16_t id, const std::string& name) {
    start(out, id, name);
    run_until([&] { return out.calls > 0; }, 5000, "the exchange's callback");
  }
  // An exchange that must succeed; its answer carries the client's ID.
  dns::Bytes exchange_ok(std::uint16_t id, const std::string& name) {
    Outcome out;
    finish(out, id, name);
    if (!out.result.ok()) {
      FAIL(log::cat("exchange failed: ", describe(out.result.cause), ": ", out.result.detail).c_str());
    }
    LONGS_EQUAL(1, out.calls);
    LONGS_EQUAL(id, dns::get_id(out.result.response));
    CHECK_TRUE(answers_name(out.result.response, name));
    return out.result.response;
  }
  static void check_failed(const Outcome& out, Cause cause, const std::string& detail_part) {
    STRCMP_EQUAL(describe(cause), describe(out.result.cause));
    if (out.result.detail.find(detail_part) == std::string::npos)
      FAIL(log::cat("detail '", out.result.detail, "' lacks '", detail_part, "'").c_str());
  }

  // The first A record's address in `answer` ("" when there is none).
  static std::string first_a(const dns::Bytes& answer) {
    const auto h = dns::parse_header(answer);
    const auto q = dns::parse_question_of(answer);
    if (!h || !q || h->ancount == 0) return {};
    dns::Bytes owner;
    const auto nr = dns::read_name(answer, dns::header_size + q->name.size() + 4, owner);
    const std::size_t at = nr.next;
    if (nr.error != dns::ParseError::none || answer.size() < at + 14) return {};
    if (answer[at] != 0 || answer[at + 1] != fixture::plain::type_a) return {};
    return log::cat(int{answer[at + 10]}, ".", int{answer[at + 11]}, ".", int{answer[at + 12]}, ".",
                    int{answer[at + 13]});
  }

  // Descriptors this process has open now.
  static int open_fds() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
      while (::readdir(d) != nullptr) ++n;
      ::closedir(d);
    }
    return n;
  }
};

}  // namespace nxdns::test
