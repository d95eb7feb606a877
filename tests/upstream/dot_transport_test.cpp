// DotTransport's exchange against a real TLS server on loopback (in-process,
// same event loop): framing, padding and one connection reused, and each
// refusal — a dial that fails, a certificate that does not verify, a
// response that does not match its query, a CA file the factory cannot use.
// Placement, recovery, cancellation and idle handling have files of their
// own (dot_transport_*_test.cpp); the fixture is dot_transport_fixture.hpp.
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "upstream/dot_transport_fixture.hpp"
#include "upstream/tls_config.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::DotTransport;

namespace {

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

TEST_GROUP_BASE(DotTransport, test::DotTransportFixture){};

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
  run_until_all(out);
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
