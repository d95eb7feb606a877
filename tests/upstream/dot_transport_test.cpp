// DotTransport against a real TLS server on loopback (in-process, same
// event loop): reuse, pipelining, the one-redial rule and its limits,
// certificate failures, cancellation, idle handling.
#include "upstream/dot_transport.hpp"

#include <event2/event.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/tls_config.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::DotTransport;
using upstream::DotTransportOptions;
using upstream::ExchangeResult;
using upstream::Transport;

namespace {

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

dns::Bytes query_for(std::uint16_t id, const std::string& name) {
  return dns::make_query(id, *dns::name_from_text(name), 1, 1232);
}

bool answers_name(const dns::Bytes& response, const std::string& name) {
  const auto q = dns::parse_question_of(response);
  const auto want = dns::name_from_text(name);
  return q && want && dns::names_equal(q->name, *want);
}

// A port with nothing listening (bound, then closed again).
std::uint16_t closed_port() {
  loop::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}


}  // namespace

TEST_GROUP(DotTransport) {
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

TEST(DotTransport, TwoSequentialExchangesShareOneConnection) {
  serve();
  exchange_ok(0x1111, "one.example");
  exchange_ok(0x2222, "two.example");

  LONGS_EQUAL(1, server->accepts());
  const auto st = dot->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(1, st.exchanges_new);
  LONGS_EQUAL(1, st.exchanges_reused);
  LONGS_EQUAL(1, st.open_sessions);
  LONGS_EQUAL(0, st.redials);
  STRCMP_EQUAL(upstream::tls13_available() ? "TLSv1.3" : "TLSv1.2", st.tls_version.c_str());
  // TLS 1.3 servers send session tickets after the handshake; the session
  // took them in its stride (the exchanges above succeeded after them).
  if (upstream::tls13_available()) CHECK_TRUE(dot->session(0).tickets_received() >= 1);
}

TEST(DotTransport, QueriesAreFramedPaddedAndCarryFreshIds) {
  serve();
  exchange_ok(0x4242, "pad.example");
  LONGS_EQUAL(1, server->queries());
  const dns::Bytes& wire = server->received()[0].wire;
  // RFC 8467 §4.1: queries padded to a multiple of 128 octets.
  LONGS_EQUAL(0, wire.size() % 128);
  CHECK_TRUE(answers_name(wire, "pad.example"));
}

TEST(DotTransport, ResponsePaddingIsStrippedBeforeReturning) {
  test::DotTestServer::Behaviour b;
  b.response_padding = 40;
  serve(b);
  Outcome out;
  finish(out, 7, "padded.example");
  CHECK_TRUE(out.result.ok());
  const dns::Bytes stripped = dns::strip_padding(out.result.response);
  LONGS_EQUAL(stripped.size(), out.result.response.size());
  CHECK_TRUE(answers_name(out.result.response, "padded.example"));
}

TEST(DotTransport, PipelinedExchangesAnsweredOutOfOrderReachTheirCallers) {
  test::DotTestServer::Behaviour b;
  b.hold_until = 8;  // answer all eight in reverse order
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);

  constexpr int n = 8;
  Outcome out[n];
  // Every client uses the same ID: only the wire IDs keep them apart.
  for (int i = 0; i < n; ++i) start(out[i], 0x7777, log::cat("pipe", i, ".example"));
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (int i = 0; i < n; ++i) {
    LONGS_EQUAL(1, out[i].calls);
    CHECK_TRUE(out[i].result.ok());
    LONGS_EQUAL(0x7777, dns::get_id(out[i].result.response));
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("pipe", i, ".example")));
  }
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(8, server->queries_on(0));
  // The eight wire IDs were distinct.
  std::vector<std::uint16_t> ids;
  for (const auto& q : server->received()) ids.push_back(dns::get_id(q.wire));
  std::sort(ids.begin(), ids.end());
  CHECK_TRUE(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

TEST(DotTransport, ColdBurstSpreadsOverParallelSessions) {
  serve();
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("burst", i, ".example"));
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (int i = 0; i < n; ++i) {
    CHECK_TRUE(out[i].result.ok());
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("burst", i, ".example")));
  }
  // The burst spread over as many sessions as the placement depth asks for
  // (dialed in parallel), never more than the slots.
  const std::size_t expected = std::min<std::size_t>(upstream::slots_per_entry,
                                                     (n + upstream::dot_spread_depth - 1) / upstream::dot_spread_depth);
  CHECK_TRUE(expected > 1);
  LONGS_EQUAL(expected, server->accepts());
  LONGS_EQUAL(expected, dot->stats().connections_new);
  for (std::size_t c = 0; c < server->connection_count(); ++c) {
    CHECK_TRUE(server->queries_on(c) <= upstream::dot_spread_depth);
    CHECK_TRUE(server->queries_on(c) >= 1);
  }
}

TEST(DotTransport, WarmBurstStaysOnOpenSessions) {
  serve();
  // Open sessions with a cold burst, then run a second one on them.
  constexpr int n = 30;
  Outcome cold[n], warm[n];
  for (int i = 0; i < n; ++i) start(cold[i], 1, log::cat("cold", i, ".example"));
  run_until([&] {
    for (const auto& x : cold)
      if (x.calls == 0) return false;
    return true;
  });
  for (int i = 0; i < n; ++i) start(warm[i], 2, log::cat("warm", i, ".example"));
  run_until([&] {
    for (const auto& x : warm)
      if (x.calls == 0) return false;
    return true;
  });
  for (const auto& x : warm) CHECK_TRUE(x.result.ok());
  const std::size_t opened = dot->stats().connections_new;
  CHECK_TRUE(opened > 1);
  LONGS_EQUAL(opened, server->accepts());  // no new dial for the warm burst
  LONGS_EQUAL(n, dot->stats().exchanges_reused);
}

TEST(DotTransport, BurstAfterOneQueryPipelinesOnTheOpenSession) {
  // Issue 15 item 1: the household's usual state (one session kept open by a
  // trickle of queries). The burst rides that session in one round trip;
  // sessions dialled meanwhile are headroom and carry nothing.
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("one", i, ".example"));
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (const auto& x : out) CHECK_TRUE(x.result.ok());
  LONGS_EQUAL(n + 1, server->queries_on(0));
  LONGS_EQUAL(n + 1, server->queries());
  LONGS_EQUAL(n, dot->stats().exchanges_reused);
  LONGS_EQUAL(0, dot->resent());
  // Without a verdict the headroom is what a spread would need.
  CHECK_TRUE(server->accepts() <= 1 + (n + upstream::dot_spread_depth - 1) / upstream::dot_spread_depth);
  // Thirty answers that came back together: the upstream pipelines.
  STRCMP_EQUAL("pipelining", describe(dot->verdict()));
  STRCMP_EQUAL("pipelining", describe(dot->stats().pipelining));
}

TEST(DotTransport, HeadroomIsDialledAfterTheBurstThatAskedForIt) {
  // Issue 15: with one open session, the burst placed on it is written
  // before any headroom session costs a socket, a connect and a TLS set-up
  // (a capture showed four such dials ahead of the burst's one write).
  // Placement runs inside start(); the write and the headroom dials run
  // from the loop, the write first (its socket is already writable).
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("head", i, ".example"));
  auto not_closed = [&] {
    std::size_t k = 0;
    for (std::size_t i = 0; i < dot->session_count(); ++i) k += dot->session(i).state() != upstream::SessionState::closed;
    return k;
  };
  LONGS_EQUAL(1, not_closed());  // no headroom dialled inside start()
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (const auto& x : out) CHECK_TRUE(x.result.ok());
  LONGS_EQUAL(n + 1, server->queries_on(0));  // the burst rode the open session
  // The headroom was still dialled, on the loop's next turn.
  run_until([&] { return not_closed() > 1; }, 5000, "the headroom dials");
}

TEST(DotTransport, CloseAllAlsoDropsAHeadroomDialStillPending) {
  // The guard of the test above: a transport closed (shutdown, reload)
  // between a burst's placement and the loop's next turn stays closed.
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("gone", i, ".example"));
  dot->close_all();
  run_for(100);
  for (std::size_t i = 0; i < dot->session_count(); ++i) {
    LONGS_EQUAL(static_cast<int>(upstream::SessionState::closed), static_cast<int>(dot->session(i).state()));
  }
  for (const auto& x : out) LONGS_EQUAL(static_cast<int>(Cause::cancelled), static_cast<int>(x.result.cause));
}

TEST(DotTransport, ExchangesNeverWrittenOnAFailedDialArePlacedAgain) {
  // Issue 13 item 4: exchanges queued on a fresh session whose dial fails
  // were never seen by the server; with another session of the upstream up
  // they are placed there, not failed (and not charged to its health).
  start_server();
  auto o = options(server->port());
  o.dial_timeout = std::chrono::milliseconds(300);
  make_transport(o);
  exchange_ok(1, "first.example");
  server->behaviour().black_hole = true;  // every later connection: TCP only, never TLS
  // More than one session's pipeline depth: the rest queue on sessions still
  // dialling, which all time out.
  constexpr int n = static_cast<int>(upstream::dot_pipeline_depth) + 8;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("later", i, ".example"));
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (int i = 0; i < n; ++i) {
    if (!out[i].result.ok()) {
      FAIL(log::cat("exchange ", i, ": ", describe(out[i].result.cause), ": ", out[i].result.detail).c_str());
    }
  }
  CHECK_TRUE(server->accepts() > 1);  // the failed dials happened
  CHECK_TRUE(dot->requeued() >= 8);
  LONGS_EQUAL(n + 1, server->queries_on(0));
}

TEST(DotTransport, ExchangesNeverWrittenOnAFailedDialFailWhenNothingElseIsUp) {
  // The bound of the rule above: with no session up, a failed dial is the
  // upstream's answer, at once (no loop of dials until the budget).
  test::DotTestServer::Behaviour b;
  b.black_hole = true;
  start_server(b);
  auto o = options(server->port());
  o.dial_timeout = std::chrono::milliseconds(200);
  make_transport(o);
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], 1, log::cat("hole", i, ".example"));
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& x : out) LONGS_EQUAL(static_cast<int>(Cause::handshake_failed), static_cast<int>(x.result.cause));
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(0, dot->requeued());
}

TEST(DotTransport, PartialAnswersAreResentOnceLongBeforeTheBudget) {
  // Issue 15 item 2b: a frontend answering one query per coalesced write.
  // The exchanges it swallowed are re-sent once on fresh sessions, one
  // query on the wire per session, and all are answered.
  test::DotTestServer::Behaviour b;
  b.answer_first_of_batch = true;
  serve(b);
  exchange_ok(1, "first.example");
  constexpr int n = 12;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("part", i, ".example"));
  // Well inside a 2 s attempt budget (the stall deadline is ~100 ms here).
  run_until(
      [&] {
        for (const auto& x : out)
          if (x.calls == 0) return false;
        return true;
      },
      1500, "every answer");
  for (int i = 0; i < n; ++i) {
    if (!out[i].result.ok()) {
      FAIL(log::cat("exchange ", i, ": ", describe(out[i].result.cause), ": ", out[i].result.detail).c_str());
    }
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("part", i, ".example")));
  }
  CHECK_TRUE(server->swallowed() >= 1);
  CHECK_TRUE(dot->resent() >= 1);
  CHECK_TRUE(dot->resent() <= static_cast<std::uint64_t>(n));  // never more than one duplicate each
  STRCMP_EQUAL("serial", describe(dot->verdict()));
}

TEST(DotTransport, ServerCloseOnReusedSessionIsRecoveredByExactlyOneRedial) {
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;  // each connection answers one query, then drops the next
  serve(b);
  exchange_ok(1, "first.example");
  exchange_ok(2, "second.example");

  const auto st = dot->stats();
  LONGS_EQUAL(2, server->accepts());
  LONGS_EQUAL(1, st.redials);
  LONGS_EQUAL(1, st.reuse_recoveries);
  LONGS_EQUAL(2, st.connections_new);
  // Recovery is routine: nothing above debug.
  LONGS_EQUAL(0, logs->count(log::Level::warn, "") + logs->count(log::Level::error, ""));
  CHECK_TRUE(logs->count(log::Level::debug, "recovered") >= 1);
}

TEST(DotTransport, RedialThatAlsoFailsIsFinal) {
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;
  serve(b);
  exchange_ok(1, "first.example");
  // From now on every connection drops its first query too.
  server->behaviour().close_on_query_after = 0;
  Outcome out;
  finish(out, 2, "second.example");
  CHECK_FALSE(out.result.ok());
  CHECK_TRUE(upstream::is_connection_lifecycle(out.result.cause));
  LONGS_EQUAL(2, server->accepts());  // the original and exactly one redial
  LONGS_EQUAL(1, dot->stats().redials);
  LONGS_EQUAL(0, dot->stats().reuse_recoveries);
}

TEST(DotTransport, PrefixByteThenCloseOnReusedSessionIsFinalWithoutRedial) {
  test::DotTestServer::Behaviour b;
  b.prefix_byte_then_close_after = 1;
  serve(b);
  exchange_ok(1, "first.example");
  Outcome out;
  finish(out, 2, "second.example");
  CHECK_FALSE(out.result.ok());
  run_for(50);
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(0, dot->stats().redials);
  LONGS_EQUAL(0, dot->stats().open_sessions);
}

TEST(DotTransport, FreshDialToClosedPortFailsConnect) {
  auto o = options(closed_port());
  make_transport(o);
  Outcome out;
  start(out, 9, "refused.example");
  LONGS_EQUAL(0, out.calls);  // never from inside start()
  run_until([&] { return out.calls > 0; });
  check_failed(out, Cause::connect_failed, "refused");
  LONGS_EQUAL(0, dot->stats().redials);
  LONGS_EQUAL(1, logs->count(log::Level::warn, o.label));
}

TEST(DotTransport, FailedColdBurstIsFinalForAllAndWarnsOnce) {
  auto o = options(closed_port());
  make_transport(o);
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], 1, log::cat("down", i, ".example"));
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (const auto& x : out) {
    LONGS_EQUAL(1, x.calls);
    LONGS_EQUAL(static_cast<int>(Cause::connect_failed), static_cast<int>(x.result.cause));
  }
  LONGS_EQUAL(0, dot->stats().redials);
  // Eight parallel dials failed the same way: one warning, not eight.
  LONGS_EQUAL(1, logs->count(log::Level::warn, o.label));
  CHECK_TRUE(logs->count(log::Level::debug, "dial failed again") >= 1);
}

TEST(DotTransport, WrongTlsNameFailsTheCertificateCheck) {
  start_server();
  auto o = options(server->port());
  o.tls_name = "other.test";
  make_transport(o);
  Outcome out;
  finish(out, 3, "name.example");
  check_failed(out, Cause::certificate, "name mismatch (expected other.test)");
  LONGS_EQUAL(1, logs->count(log::Level::warn, o.label));
  LONGS_EQUAL(0, dot->stats().connections_new);
}

TEST(DotTransport, UnknownCaFailsTheCertificateCheck) {
  start_server();
  test::TestPki other("dot.test");
  test::TempFile other_ca(other.ca_pem);
  auto o = options(server->port());
  o.ca_file = other_ca.path();
  make_transport(o);
  Outcome out;
  finish(out, 3, "ca.example");
  check_failed(out, Cause::certificate, "not trusted");
}

TEST(DotTransport, CancelOfSentExchangeClosesTheSession) {
  serve(silent());
  Outcome out;
  const auto id = start(out, 5, "cancel.example");
  run_until([&] { return server->queries() == 1; });
  LONGS_EQUAL(1, dot->stats().open_sessions);
  dot->cancel(id);
  LONGS_EQUAL(0, dot->stats().open_sessions);
  run_until([&] { return server->closed_by_client() == 1; });
  run_for(20);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(0, dot->live_exchanges());
}

TEST(DotTransport, CancelOfSentExchangeSendsSiblingsThroughTheRedialRule) {
  start_server();
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);
  exchange_ok(1, "warm.example");  // the session is reused from here on
  server->behaviour().hold_until = 100;  // hold what comes next
  Outcome a, sibling;
  const auto id = start(a, 2, "a.example");
  start(sibling, 3, "sibling.example");
  run_until([&] { return server->queries() == 3; });
  server->behaviour().hold_until = 0;  // the redial's connection answers
  dot->cancel(id);
  run_until([&] { return sibling.calls > 0; });
  CHECK_TRUE(sibling.result.ok());
  CHECK_TRUE(answers_name(sibling.result.response, "sibling.example"));
  LONGS_EQUAL(0, a.calls);
  LONGS_EQUAL(1, dot->stats().redials);
  LONGS_EQUAL(1, dot->stats().reuse_recoveries);
  LONGS_EQUAL(2, server->accepts());
}

TEST(DotTransport, ServerClosingAfterEachAnswerLosesNoPipelinedExchange) {
  // A server that ends every connection after one answer (a per-connection
  // query limit): the exchanges pipelined behind the answered one were never
  // on a reused session, yet they are routine churn, not failures.
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;  // all six pipelined on one connection at a time
  make_transport(o);
  constexpr int n = 6;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("once", i, ".example"));
  run_until([&] {
    for (const auto& x : out)
      if (x.calls == 0) return false;
    return true;
  });
  for (int i = 0; i < n; ++i) {
    if (!out[i].result.ok()) {
      FAIL(log::cat("exchange ", i, ": ", describe(out[i].result.cause), ": ", out[i].result.detail).c_str());
    }
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("once", i, ".example")));
  }
  LONGS_EQUAL(n, server->accepts());  // one connection per answer
  LONGS_EQUAL(5 + 4 + 3 + 2 + 1, dot->requeued());
  LONGS_EQUAL(dot->requeued(), dot->stats().requeued);
  LONGS_EQUAL(0, dot->stats().redials);  // the one redial stays unspent
  LONGS_EQUAL(0, logs->count(log::Level::warn, "") + logs->count(log::Level::error, ""));
}

TEST(DotTransport, ServerClosingBeforeAnyAnswerIsFinalNotRequeued) {
  // No answer on the connection: nothing shows the server works, so the
  // strict rule applies (fresh session: final), and nothing loops.
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 0;
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], 1, log::cat("never", i, ".example"));
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& x : out) {
    CHECK_FALSE(x.result.ok());
    CHECK_TRUE(upstream::is_connection_lifecycle(x.result.cause));
  }
  run_for(50);
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(0, dot->requeued());
  LONGS_EQUAL(0, dot->stats().redials);
}

TEST(DotTransport, CancelOfUnsentExchangeKeepsTheSession) {
  serve();
  exchange_ok(1, "warm.example");
  Outcome out;
  const auto id = start(out, 2, "never.example");
  dot->cancel(id);  // still queued: never reached TLS
  run_for(50);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(1, server->queries());
  LONGS_EQUAL(1, dot->stats().open_sessions);
  exchange_ok(3, "after.example");
  LONGS_EQUAL(1, server->accepts());
}

TEST(DotTransport, CancelOfAnAnsweredExchangeSuppressesItsCompletion) {
  test::DotTestServer::Behaviour b;
  b.hold_until = 2;  // both answers, in reverse order, in one record
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);
  Outcome first;
  const auto first_id = start(first, 1, "first.example");
  int second_calls = 0;
  const dns::Bytes q = query_for(2, "second.example");
  dot->start(q, [&](ExchangeResult&& r) {
    ++second_calls;
    CHECK_TRUE(r.ok());
    // The first answer is already in hand, its completion queued behind
    // this one: a cancel now must still keep it from ever running.
    dot->cancel(first_id);
  });
  run_until([&] { return second_calls > 0; });
  run_for(30);
  LONGS_EQUAL(1, second_calls);
  LONGS_EQUAL(0, first.calls);
  LONGS_EQUAL(2, server->answers());
  // Nothing was on the wire any more: the session stays.
  LONGS_EQUAL(1, dot->stats().open_sessions);
}

TEST(DotTransport, IdlePeerCloseIsNoticedWithoutAQuery) {
  serve();
  exchange_ok(1, "idle.example");
  LONGS_EQUAL(1, dot->stats().open_sessions);
  server->close_all_connections();
  run_until([&] { return dot->stats().open_sessions == 0; }, 2000, "the idle close to be noticed");
  LONGS_EQUAL(1, server->queries());
  // The next exchange dials afresh; nothing to redial.
  exchange_ok(2, "next.example");
  LONGS_EQUAL(2, server->accepts());
  LONGS_EQUAL(0, dot->stats().redials);
}

TEST(DotTransport, WrongIdIsBadResponseAndClosesTheSession) {
  test::DotTestServer::Behaviour b;
  b.wrong_id = true;
  serve(b);
  Outcome out;
  finish(out, 4, "id.example");
  LONGS_EQUAL(static_cast<int>(Cause::bad_response), static_cast<int>(out.result.cause));
  LONGS_EQUAL(0, dot->stats().open_sessions);
  run_until([&] { return server->closed_by_client() == 1; });
}

TEST(DotTransport, WrongQuestionIsBadResponseAndClosesTheSession) {
  test::DotTestServer::Behaviour b;
  b.wrong_question = true;
  serve(b);
  Outcome out;
  finish(out, 4, "question.example");
  check_failed(out, Cause::bad_response, "question");
  LONGS_EQUAL(0, dot->stats().open_sessions);
  // Closed politely: the TLS layer was fine, the answer was not.
  run_until([&] { return server->close_notify_from_client() == 1; });
}

TEST(DotTransport, ServerKeepaliveShortensTheIdleTimeout) {
  test::DotTestServer::Behaviour b;
  b.keepalive = 5;  // 500 ms: the client must close at ~400 ms
  serve(b);
  exchange_ok(1, "keepalive.example");
  const auto t0 = std::chrono::steady_clock::now();
  run_until([&] { return dot->stats().open_sessions == 0; }, 3000, "the keepalive idle close");
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK_TRUE(waited < std::chrono::milliseconds(2500));
  CHECK_TRUE(waited >= std::chrono::milliseconds(150));
  run_until([&] { return server->close_notify_from_client() == 1; });
}

TEST(DotTransport, KeepaliveZeroDrainsTheSession) {
  test::DotTestServer::Behaviour b;
  b.keepalive = 0;
  serve(b);
  exchange_ok(1, "drain.example");
  run_until([&] { return dot->stats().open_sessions == 0; }, 1000, "the drain");
  exchange_ok(2, "again.example");
  LONGS_EQUAL(2, server->accepts());
}

TEST(DotTransport, DefaultIdleTimeoutClosesTheSession) {
  start_server();
  auto o = options(server->port());
  o.idle_timeout = std::chrono::milliseconds(100);
  make_transport(o);
  exchange_ok(1, "idle.example");
  run_until([&] { return dot->stats().open_sessions == 0; }, 2000, "the idle timeout");
  run_until([&] { return server->close_notify_from_client() == 1; });
}

TEST(DotTransport, BlackHoleTimesOutTheDial) {
  test::DotTestServer::Behaviour b;
  b.black_hole = true;
  start_server(b);
  auto o = options(server->port());
  o.dial_timeout = std::chrono::milliseconds(200);
  make_transport(o);
  Outcome out;
  finish(out, 1, "void.example");
  check_failed(out, Cause::handshake_failed, "timed out");
}

TEST(DotTransport, CloseAllCompletesOutstandingWithCancelledLater) {
  serve(silent());
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], 1, log::cat("closeall", i, ".example"));
  run_until([&] { return server->queries() == 3; });
  dot->close_all();
  for (const auto& x : out) LONGS_EQUAL(0, x.calls);  // not from inside close_all()
  LONGS_EQUAL(0, dot->stats().open_sessions);
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& x : out) LONGS_EQUAL(static_cast<int>(Cause::cancelled), static_cast<int>(x.result.cause));
  run_until([&] { return server->close_notify_from_client() == 1; });
}

TEST(DotTransport, DestructionRunsNoCompletion) {
  serve(silent());
  Outcome out;
  start(out, 1, "gone.example");
  run_until([&] { return server->queries() == 1; });
  Outcome queued;
  start(queued, 2, "queued.example");
  dot.reset();
  run_for(50);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(0, queued.calls);
}

TEST(DotTransport, CompletionMayDestroyTheTransport) {
  serve();
  Outcome second;
  const dns::Bytes q = query_for(1, "first.example");
  // Two answers due in the same flush; the first one's completion destroys
  // the transport: the second must not run (nor crash).
  int calls = 0;
  dot->start(q, [&](ExchangeResult&&) {
    ++calls;
    dot.reset();
  });
  dot->start(q, [&](ExchangeResult&&) { ++calls; });
  run_until([&] { return calls > 0; });
  run_for(20);
  LONGS_EQUAL(1, calls);
}

TEST(DotTransport, FactoryReportsAnUnreadableCaFile) {
  auto o = options(853);
  o.ca_file = "/nonexistent/nxdns-ca.pem";
  std::string err;
  auto t = DotTransport::create(base.get(), *sched, o, &err);
  CHECK_TRUE(t == nullptr);
  CHECK_TRUE(err.find("/nonexistent/nxdns-ca.pem") != std::string::npos);
  CHECK_TRUE(err.find(o.label) != std::string::npos);
}

TEST(DotTransport, FactoryRejectsACaFileWithoutCertificates) {
  test::TempFile junk("this is not a certificate\n");
  auto o = options(853);
  o.ca_file = junk.path();
  std::string err;
  auto t = DotTransport::create(base.get(), *sched, o, &err);
  CHECK_TRUE(t == nullptr);
  CHECK_TRUE(err.find(junk.path()) != std::string::npos);
}

TEST(DotTransport, AfterAnIdleCloseAPipeliningUpstreamGetsHeadroomOnlyOnceTheBurstSessionIsUp) {
  // Issue 15, "sessions closed while idle": the verdict says the upstream
  // pipelines, so the burst rides the one session being dialled. A headroom
  // dial beside it would run its handshake at the same time on both ends
  // and the burst would wait for both; it waits until that session is up.
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  auto burst = [&](const char* tag, std::size_t* most_while_none_ready) {
    Outcome out[n];
    for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat(tag, i, ".example"));
    run_until([&] {
      std::size_t opening = 0;
      bool ready = false;
      for (std::size_t i = 0; i < dot->session_count(); ++i) {
        const auto st = dot->session(i).state();
        ready = ready || st == upstream::SessionState::ready;
        opening += st != upstream::SessionState::closed;
      }
      if (!ready && most_while_none_ready) *most_while_none_ready = std::max(*most_while_none_ready, opening);
      for (const auto& x : out)
        if (x.calls == 0) return false;
      return true;
    });
    for (const auto& x : out) CHECK_TRUE(x.result.ok());
  };
  burst("warm", nullptr);
  STRCMP_EQUAL("pipelining", describe(dot->verdict()));
  server->close_all_connections();
  run_until([&] { return dot->stats().open_sessions == 0; }, 2000, "the idle close to be noticed");
  const std::size_t accepts_before = server->accepts();
  std::size_t most = 0;
  burst("after-idle", &most);
  LONGS_EQUAL(1, most);  // one dial while nothing was up: the burst's own
  LONGS_EQUAL(n, server->queries_on(accepts_before));  // the burst rode it
  // The headroom is still dialled, once that session is up.
  run_until([&] { return server->accepts() > accepts_before + 1; }, 5000, "the deferred headroom dial");
}
