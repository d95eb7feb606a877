// PlainDnsTransport's contract with the pool: completions never run inside
// start() or cancel(), a cancelled exchange never completes and leaves no
// socket behind, close_all() completes what is outstanding as cancelled,
// and a destroyed transport calls no one back. Last, the same server as a
// program (nxdns-fixture-plain-dns), as the integration tests run it.
#include <cerrno>
#include <string>
#include <vector>

#include "support/skipped_cases.hpp"
#include "upstream/doh_test_support.hpp"
#include "upstream/plain_dns_transport_fixture.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::ExchangeResult;
using upstream::PlainDnsOptions;

TEST_GROUP_BASE(PlainDnsTransportLifecycle, test::PlainDnsTransportFixture){};

TEST(PlainDnsTransportLifecycle, AFailureInsideStartCompletesLater) {
  serve(router());
  Outcome out;
  // Not a query the codec accepts: the exchange fails inside start().
  const dns::Bytes junk = {0x12, 0x34, 0x01};
  transport->start(junk, [&out](ExchangeResult&& r) {
    ++out.calls;
    out.result = std::move(r);
  });
  LONGS_EQUAL(0, out.calls);
  run_until([&] { return out.calls > 0; });
  check_failed(out, Cause::bad_response, "codec");
  LONGS_EQUAL(0, server->stats().udp_queries);
}

TEST(PlainDnsTransportLifecycle, CancelRunsNoCompletionAndClosesTheSocket) {
  serve(silent());
  const int fds_before = open_fds();
  Outcome out;
  const auto id = start(out, 12, "nas.lan");
  LONGS_EQUAL(fds_before + 1, open_fds());
  run_until([&] { return server->stats().udp_queries == 1; }, 5000, "the query");
  LONGS_EQUAL(1, transport->stats().open_sessions);
  transport->cancel(id);
  LONGS_EQUAL(fds_before, open_fds());
  LONGS_EQUAL(0, transport->stats().open_sessions);
  LONGS_EQUAL(0, transport->live_exchanges());
  run_for(50);
  LONGS_EQUAL(0, out.calls);
}

TEST(PlainDnsTransportLifecycle, CancelDuringTheTcpRetryClosesTheConnection) {
  fixture::plain::Behaviour b = router();
  b.truncate_udp = true;
  serve(b);
  const int fds_before = open_fds();
  Outcome out;
  const auto id = start(out, 13, "nas.lan");
  // Stopped in the loop turn that read the truncated answer: the TCP
  // connection is being dialled.
  run_until([&] { return transport->tcp_retries() == 1; }, 5000, "the TCP retry");
  LONGS_EQUAL(1, transport->stats().open_sessions);
  transport->cancel(id);
  LONGS_EQUAL(0, transport->stats().open_sessions);
  LONGS_EQUAL(0, transport->live_exchanges());
  // The server accepts what the kernel had already connected, then sees
  // the close.
  run_until([&] { return server->stats().tcp_connections == 1 && server->open_connections() == 0; }, 5000,
            "the server to see the connection closed");
  LONGS_EQUAL(fds_before, open_fds());
  LONGS_EQUAL(0, out.calls);
}

TEST(PlainDnsTransportLifecycle, CancelOfAFinishedExchangeSuppressesItsCompletion) {
  serve(silent());
  Outcome out;
  const auto id = start(out, 14, "nas.lan");
  transport->close_all();  // finished: its completion waits for the loop
  transport->cancel(id);
  run_for(50);
  LONGS_EQUAL(0, out.calls);
}

TEST(PlainDnsTransportLifecycle, CloseAllCompletesOutstandingAsCancelled) {
  serve(silent());
  const int fds_before = open_fds();
  Outcome a, b;
  start(a, 15, "nas.lan");
  start(b, 16, "nas.lan");
  run_until([&] { return server->stats().udp_queries == 2; }, 5000, "both queries");
  transport->close_all();
  LONGS_EQUAL(0, a.calls);  // later, from the loop
  LONGS_EQUAL(fds_before, open_fds());
  run_until([&] { return a.calls > 0 && b.calls > 0; });
  check_failed(a, Cause::cancelled, "closed");
  check_failed(b, Cause::cancelled, "closed");
  LONGS_EQUAL(1, a.calls);
  LONGS_EQUAL(1, b.calls);
}

TEST(PlainDnsTransportLifecycle, DestroyedTransportCallsNoOneBack) {
  serve(silent());
  Outcome a, b;
  start(a, 17, "nas.lan");
  start(b, 18, "nas.lan");
  transport->close_all();
  transport.reset();
  run_for(50);
  LONGS_EQUAL(0, a.calls);
  LONGS_EQUAL(0, b.calls);
}

TEST(PlainDnsTransportLifecycle, TheFixtureProgramServesAndCounts) {
  const std::string program = test::fixture_program("nxdns-fixture-plain-dns");
  if (program.empty()) SKIP_CASE("nxdns-fixture-plain-dns not built (build the fixture targets)");
  test::TempDir dir;
  test::TestProcess fx;
  // A lost first datagram, two lies before the answer, TC: every behaviour
  // an integration test may ask of the home router, in one exchange.
  const int rc = fx.start(test::with_emulator({program, "--listen", "127.0.0.1:0", "--port-file", dir.file("port"),
                                               "--stats-file", dir.file("stats"), "--a", "nas.lan=192.168.1.10",
                                               "--drop-udp-first", "1", "--spoof", "--truncate-udp"}),
                          dir.file("log"));
  if (rc == ENOEXEC) SKIP_CASE("fixture programs cannot be executed here (cross build without binfmt_misc)");
  LONGS_EQUAL(0, rc);
  const auto fx_port = test::wait_port_file(dir.file("port"));
  if (!fx_port) FAIL(("no port file; log: " + test::read_text(dir.file("log"))).c_str());
  PlainDnsOptions o;
  o.udp_retransmit = std::chrono::milliseconds(50);
  make_transport(*fx_port, o);
  const dns::Bytes answer = exchange_ok(0x2222, "NAS.lan");
  STRCMP_EQUAL("192.168.1.10", first_a(answer).c_str());
  LONGS_EQUAL(2, transport->ignored_datagrams());
  LONGS_EQUAL(1, transport->tcp_retries());
  LONGS_EQUAL(0, fx.stop());
  const std::string stats = test::read_text(dir.file("stats"));
  const std::string expected =
      "{\"udp_queries\":2,\"udp_dropped\":1,\"udp_answers\":1,\"spoofs_sent\":2,\"tcp_connections\":1,"
      "\"tcp_queries\":1,\"tcp_answers\":1}\n";
  STRCMP_EQUAL(expected.c_str(), stats.c_str());
  // The same counters on stdout at exit, after the listen line.
  const std::string log = test::read_text(dir.file("log"));
  CHECK_TRUE(log.rfind("listening 127.0.0.1:" + std::to_string(*fx_port) + "\n", 0) == 0);
  CHECK_TRUE(log.find("stats " + expected) != std::string::npos);
}
