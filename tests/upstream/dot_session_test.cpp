// DotSession on its own, below the transport: what a dial does before the
// TCP connect completes. The handshake itself, tickets and the exchanges a
// session carries are covered through DotTransport (dot_transport_*_test).
#include "upstream/dot_session.hpp"

#include <event2/event.h>

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

TEST_GROUP(DotSession) {
  nxdns::loop::EventBasePtr base;
  std::unique_ptr<nxdns::loop::LoopScheduler> sched;
  std::unique_ptr<nxdns::test::LoopDriver> driver;
  std::unique_ptr<nxdns::test::TestPki> pki;
  std::unique_ptr<nxdns::test::TempFile> ca;
  std::unique_ptr<nxdns::test::DotTestServer> server;
  std::unique_ptr<TlsClientConfig> tls;

  void setup() override {
    base.reset(event_base_new());
    sched = std::make_unique<nxdns::loop::LoopScheduler>(base.get());
    driver = std::make_unique<nxdns::test::LoopDriver>(base.get());
    pki = std::make_unique<nxdns::test::TestPki>("dot.test");
    ca = std::make_unique<nxdns::test::TempFile>(pki->ca_pem);
    server = std::make_unique<nxdns::test::DotTestServer>(base.get(), *pki);
    std::string err;
    tls = TlsClientConfig::create(ca->path(), &err);
    if (!tls) FAIL(err.c_str());
  }
  void teardown() override {
    tls.reset();
    server.reset();
    ca.reset();
    pki.reset();
    driver.reset();
    sched.reset();
    base.reset();
  }
  DotSessionParams params() const {
    DotSessionParams p;
    p.address = *nxdns::net::make_endpoint("127.0.0.1", server->port());
    p.tls_name = "dot.test";
    return p;
  }
};

// The ClientHello (on TLS 1.3 with its X25519 key share) is computed inside
// dial(), during the SYN's round trip, not once the connect has completed:
// a cold burst's sessions no longer compute theirs one after another at the
// moment their connects complete together. Held, it is sent once the
// connect completes and the handshake finishes as before.
TEST(DotSession, TheClientHelloIsBuiltWhileTheConnectIsUnderWayAndSentOnceConnected) {
  Recorder rec;
  DotSession s(base.get(), *sched, *tls, params(), rec, 0);
  s.dial();
  CHECK(s.state() == SessionState::connecting);
  CHECK_TRUE(s.client_hello_waiting());
  CHECK_TRUE(driver->until([&] { return rec.ready > 0 || rec.closed > 0; }, 5000));
  LONGS_EQUAL(0, rec.closed);
  LONGS_EQUAL(1, rec.ready);
  CHECK(s.state() == SessionState::ready);
  CHECK_FALSE(s.client_hello_waiting());
}

// A connect refused after the hello was built (or at once: loopback may
// refuse inside connect()) is reported from the loop as a connect failure,
// and nothing stays held.
TEST(DotSession, ARefusedConnectWithAHeldHelloFailsAsAConnectFailure) {
  const std::uint16_t port = server->port();
  server.reset();  // nothing listens there any more
  DotSessionParams p;
  p.address = *nxdns::net::make_endpoint("127.0.0.1", port);
  p.tls_name = "dot.test";
  Recorder rec;
  DotSession s(base.get(), *sched, *tls, p, rec, 0);
  s.dial();
  LONGS_EQUAL(0, rec.closed);  // never from inside dial()
  CHECK_TRUE(driver->until([&] { return rec.closed > 0; }, 5000));
  CHECK(s.state() == SessionState::closed);
  CHECK_FALSE(s.client_hello_waiting());
  CHECK(rec.closed_detail.find("connect to 127.0.0.1") != std::string::npos);
}
