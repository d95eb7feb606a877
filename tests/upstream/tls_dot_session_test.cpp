// TlsDotSession on its own, below the transport: what a dial does before the
// TCP connect completes, and a TLS 1.3 ticket with nothing behind it. The
// handshake itself, resumption and the exchanges a session carries are
// covered through DotTransport (dot_transport_*_test).
#include "upstream/tls_dot_session.hpp"

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "net/endpoint.hpp"
#include "support/loop_driver.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/tls_config.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::upstream::DotSession;
using nxdns::upstream::TlsDotSession;
using nxdns::upstream::DotSessionParams;
using nxdns::upstream::SessionEnd;
using nxdns::upstream::SessionState;
using nxdns::upstream::TlsClientConfig;

namespace {

struct Recorder : DotSession::Listener {
  int ready = 0;
  int closed = 0;
  std::string closed_detail;
  void on_session_ready(DotSession&) override { ++ready; }
  void on_session_response(DotSession&, DotSession::ExchangeId, nxdns::dns::ByteView) override {}
  void on_session_closed(DotSession&, SessionEnd&& end) override {
    ++closed;
    closed_detail = end.detail;
  }
};

}  // namespace

// Declared in the order they are built; destroyed in reverse, the session's
// TLS config and the server before the loop they use.
struct SessionBench {
  nxdns::loop::EventBasePtr base{event_base_new()};
  nxdns::loop::LoopScheduler sched{base.get()};
  nxdns::test::LoopDriver driver{base.get()};
  nxdns::test::TestPki pki{"dot.test"};
  nxdns::test::TempFile ca{pki.ca_pem};
  std::unique_ptr<nxdns::test::DotTestServer> server = std::make_unique<nxdns::test::DotTestServer>(base.get(), pki);
  std::unique_ptr<TlsClientConfig> tls;
};

TEST_GROUP(TlsDotSession) {
  std::unique_ptr<SessionBench> env;

  void setup() override {
    env = std::make_unique<SessionBench>();
    std::string err;
    env->tls = TlsClientConfig::create(env->ca.path(), &err);
    if (!env->tls) FAIL(err.c_str());
  }
  void teardown() override { env.reset(); }
  DotSessionParams params(std::uint16_t port) const {
    DotSessionParams p;
    p.address = *nxdns::net::make_endpoint("127.0.0.1", port);
    p.tls_name = "dot.test";
    return p;
  }
  bool run_until(const std::function<bool()>& pred) { return env->driver.until(pred, 5000); }
};

// The ClientHello (on TLS 1.3 with its X25519 key share) is computed inside
// dial(), during the SYN's round trip, not once the connect has completed:
// a cold burst's sessions no longer compute theirs one after another at the
// moment their connects complete together. Held, it is sent once the
// connect completes and the handshake finishes as before.
TEST(TlsDotSession, TheClientHelloIsBuiltWhileTheConnectIsUnderWayAndSentOnceConnected) {
  Recorder rec;
  TlsDotSession s(env->base.get(), env->sched, *env->tls, params(env->server->port()), rec, 0);
  s.dial();
  CHECK(s.state() == SessionState::connecting);
  CHECK_TRUE(s.client_hello_waiting());
  CHECK_TRUE(run_until([&] { return rec.ready > 0 || rec.closed > 0; }));
  LONGS_EQUAL(0, rec.closed);
  LONGS_EQUAL(1, rec.ready);
  CHECK(s.state() == SessionState::ready);
  CHECK_FALSE(s.client_hello_waiting());
}

#if defined(MBEDTLS_SSL_PROTO_TLS1_3) && defined(MBEDTLS_SSL_SESSION_TICKETS)
// A TLS 1.3 server sends its NewSessionTicket once it has read our Finished,
// and here nothing after it. mbedTLS 3.x reads that record, keeps it, and
// returns WANT_READ before processing it on the next call; with no further
// byte the socket never turns readable again, so waiting for readiness left
// the ticket unread (no resumption after the next close) and, with answers
// right behind a ticket, cost them a loop turn, in which a paced handshake
// step could run first. The session takes what mbedTLS holds at once.
TEST(TlsDotSession, ANewSessionTicketWithNothingBehindItIsTakenAtOnce) {
  Recorder rec;
  TlsDotSession s(env->base.get(), env->sched, *env->tls, params(env->server->port()), rec, 0);
  s.dial();
  CHECK_TRUE(run_until([&] { return rec.ready > 0 || rec.closed > 0; }));
  LONGS_EQUAL(1, rec.ready);
  STRCMP_EQUAL("TLSv1.3", s.tls_version().c_str());
  CHECK_TRUE(run_until([&] { return s.tickets_received() > 0; }));
  LONGS_EQUAL(1, s.tickets_received());
  LONGS_EQUAL(0, rec.closed);
}
#endif

// A connect refused after the hello was built (or at once: loopback may
// refuse inside connect()) is reported from the loop as a connect failure,
// and nothing stays held.
TEST(TlsDotSession, ARefusedConnectWithAHeldHelloFailsAsAConnectFailure) {
  const std::uint16_t port = env->server->port();
  env->server.reset();  // nothing listens there any more
  Recorder rec;
  TlsDotSession s(env->base.get(), env->sched, *env->tls, params(port), rec, 0);
  s.dial();
  LONGS_EQUAL(0, rec.closed);  // never from inside dial()
  CHECK_TRUE(run_until([&] { return rec.closed > 0; }));
  CHECK(s.state() == SessionState::closed);
  CHECK_FALSE(s.client_hello_waiting());
  CHECK(rec.closed_detail.find("connect to 127.0.0.1") != std::string::npos);
}
