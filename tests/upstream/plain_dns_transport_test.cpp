// PlainDnsTransport on the wire, against the household-router server on
// loopback: answers over UDP, the TCP retry of a truncated answer, spoofed
// datagrams ignored, the one retransmit, a closed port failing at once, and
// an ID and source port of its own for every exchange.
#include <netinet/in.h>
#include <sys/socket.h>

#include <set>
#include <vector>

#include "upstream/plain_dns_transport_fixture.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::ExchangeResult;
using upstream::PlainDnsOptions;

TEST_GROUP_BASE(PlainDnsTransport, test::PlainDnsTransportFixture){};

TEST(PlainDnsTransport, AnswersOverUdpWithTheClientsId) {
  serve(router());
  const dns::Bytes answer = exchange_ok(0x1234, "nas.lan");
  STRCMP_EQUAL("192.168.1.10", first_a(answer).c_str());
  LONGS_EQUAL(1, server->stats().udp_queries);
  LONGS_EQUAL(0, server->stats().tcp_queries);
  // The wire carried an ID of the transport's own, not the client's.
  LONGS_EQUAL(1, server->seen().size());
  const auto st = transport->stats();
  LONGS_EQUAL(1, st.exchanges_new);
  LONGS_EQUAL(0, st.open_sessions);  // the socket closed with the exchange
  STRCMP_EQUAL("dns", transport->kind());
}

TEST(PlainDnsTransport, NegativeAndErrorAnswersAreHandedBackAsAnswers) {
  // Judging an rcode is the pool's business (answer_verdict): the transport
  // hands back whatever validly answers the query.
  serve(router());
  const dns::Bytes nx = exchange_ok(7, "printer.lan");
  LONGS_EQUAL(static_cast<int>(dns::Rcode::nxdomain), dns::parse_header(nx)->rcode());
  LONGS_EQUAL(1, dns::parse_header(nx)->nscount);  // the zone's SOA (RFC 2308)
  server->behaviour().servfail = true;
  const dns::Bytes sf = exchange_ok(8, "nas.lan");
  LONGS_EQUAL(static_cast<int>(dns::Rcode::servfail), dns::parse_header(sf)->rcode());
}

TEST(PlainDnsTransport, TruncatedAnswerIsAskedAgainOverTcp) {
  fixture::plain::Behaviour b = router();
  b.truncate_udp = true;
  serve(b);
  const dns::Bytes answer = exchange_ok(0x0102, "nas.lan");
  CHECK_FALSE(dns::parse_header(answer)->tc());
  STRCMP_EQUAL("192.168.1.10", first_a(answer).c_str());
  LONGS_EQUAL(1, server->stats().udp_queries);
  LONGS_EQUAL(1, server->stats().tcp_queries);
  LONGS_EQUAL(1, transport->tcp_retries());
  LONGS_EQUAL(1, transport->stats().connections_new);
  // The connection was ours alone, and closed after its answer.
  run_until([&] { return server->open_connections() == 0; }, 5000, "the TCP connection to close");
  LONGS_EQUAL(0, transport->stats().open_sessions);
}

TEST(PlainDnsTransport, TcpRefusedAfterTruncationIsConnectFailed) {
  fixture::plain::Behaviour b = router();
  b.truncate_udp = true;
  b.tcp = false;
  serve(b);
  Outcome out;
  finish(out, 3, "nas.lan");
  check_failed(out, Cause::connect_failed, "(TCP)");
}

TEST(PlainDnsTransport, TcpClosedBeforeTheAnswerIsEof) {
  fixture::plain::Behaviour b = router();
  b.truncate_udp = true;
  b.tcp_close_unanswered = true;
  serve(b);
  Outcome out;
  finish(out, 4, "nas.lan");
  check_failed(out, Cause::eof, "after 0 octets");
  LONGS_EQUAL(1, server->stats().tcp_queries);
}

TEST(PlainDnsTransport, TcpConnectThatHangsTimesOut) {
  // The router's TCP port is a listener whose accept queue is full (backlog
  // 0 holds one connection, never accepted): the kernel drops the
  // transport's SYN, so its connect neither completes nor fails.
  loop::UniqueFd listener, filler;
  fixture::plain::Behaviour b = router();
  b.truncate_udp = true;
  b.tcp = false;
  for (int attempt = 0; attempt < 20 && !server; ++attempt) {
    listener.reset(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    CHECK_EQUAL(0, ::bind(listener.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa));
    CHECK_EQUAL(0, ::listen(listener.get(), 0));
    CHECK_EQUAL(0, ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&sa), &len));
    filler.reset(::socket(AF_INET, SOCK_STREAM, 0));
    CHECK_EQUAL(0, ::connect(filler.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa));
    // UDP on the same port, unless something else holds it there.
    auto candidate = std::make_unique<fixture::plain::Responder>(base.get(), b);
    fixture::SockAddr at = *fixture::parse_loopback(log::cat("127.0.0.1:", ntohs(sa.sin_port)));
    std::string err;
    if (candidate->listen(at, err)) {
      server = std::move(candidate);
      port = ntohs(sa.sin_port);
    }
  }
  if (!server) FAIL("no port free for both UDP and a TCP listener");
  PlainDnsOptions o;
  o.tcp_connect_timeout = std::chrono::milliseconds(50);
  make_transport(port, o);
  Outcome out;
  finish(out, 5, "nas.lan");
  check_failed(out, Cause::connect_failed, "timed out after 50 ms");
  LONGS_EQUAL(0, transport->stats().connections_new);
}

TEST(PlainDnsTransport, TcpConnectDeadlineEndsWithTheConnect) {
  // The connect deadline bounds the dial only: a server slow to answer on
  // an established connection is the pool's attempt budget's business.
  fixture::plain::Behaviour b = router();
  b.truncate_udp = true;
  b.tcp_silent = true;
  PlainDnsOptions o;
  o.tcp_connect_timeout = std::chrono::milliseconds(20);
  serve(b, o);
  Outcome out;
  start(out, 6, "nas.lan");
  run_until([&] { return server->stats().tcp_queries == 1; }, 5000, "the TCP query");
  run_for(150);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(1, transport->stats().connections_new);
  LONGS_EQUAL(1, transport->stats().open_sessions);
}

TEST(PlainDnsTransport, SpoofedDatagramsAreIgnoredAndTheAnswerTaken) {
  fixture::plain::Behaviour b = router();
  b.spoof = true;
  serve(b);
  const dns::Bytes answer = exchange_ok(0x4242, "nas.lan");
  // Both lies arrived first, from the server's own address and port.
  LONGS_EQUAL(2, server->stats().spoofs_sent);
  LONGS_EQUAL(2, transport->ignored_datagrams());
  STRCMP_EQUAL("192.168.1.10", first_a(answer).c_str());
}

TEST(PlainDnsTransport, AnswerFromAnotherAddressOrPortIsNeverSeen) {
  serve(silent());
  Outcome out;
  start(out, 0x0707, "nas.lan");
  run_until([&] { return server->stats().udp_queries == 1; }, 5000, "the query");
  // The right answer (ID and question as sent) from a socket that is not
  // the server's: the connected socket never delivers it.
  const auto parsed = dns::parse_query(query_for(server->seen()[0].id, "nas.lan"));
  const dns::Bytes forged = fixture::plain::zone_answer(*parsed.query, server->behaviour().zone);
  loop::UniqueFd forger(::socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(server->seen()[0].source_port);
  CHECK_TRUE(::sendto(forger.get(), forged.data(), forged.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) > 0);
  run_for(100);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(0, transport->ignored_datagrams());
}

TEST(PlainDnsTransport, LostDatagramIsSentOnceMore) {
  fixture::plain::Behaviour b = router();
  b.drop_udp_first = 1;
  PlainDnsOptions o;
  o.udp_retransmit = std::chrono::milliseconds(50);
  serve(b, o);
  const dns::Bytes answer = exchange_ok(9, "nas.lan");
  STRCMP_EQUAL("192.168.1.10", first_a(answer).c_str());
  LONGS_EQUAL(1, transport->retransmits());
  LONGS_EQUAL(2, server->stats().udp_queries);
  // The same datagram, from the same socket.
  LONGS_EQUAL(2, server->seen().size());
  LONGS_EQUAL(server->seen()[0].id, server->seen()[1].id);
  LONGS_EQUAL(server->seen()[0].source_port, server->seen()[1].source_port);
}

TEST(PlainDnsTransport, RetransmitsOnlyOnce) {
  PlainDnsOptions o;
  o.udp_retransmit = std::chrono::milliseconds(20);
  serve(silent(), o);
  Outcome out;
  start(out, 10, "nas.lan");
  run_until([&] { return server->stats().udp_queries == 2; }, 5000, "the retransmit");
  // Many retransmit intervals later, still two: the pool's attempt budget,
  // not the transport, decides when to give up.
  run_for(200);
  LONGS_EQUAL(2, server->stats().udp_queries);
  LONGS_EQUAL(1, transport->retransmits());
  LONGS_EQUAL(0, out.calls);
}

TEST(PlainDnsTransport, ClosedPortFailsBeforeAnyRetransmit) {
  // A port nothing listens on: the kernel answers with ICMP port
  // unreachable, which must end the exchange at once, not after waiting.
  std::uint16_t closed = 0;
  {
    loop::UniqueFd probe(::socket(AF_INET, SOCK_DGRAM, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    CHECK_EQUAL(0, ::bind(probe.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa));
    CHECK_EQUAL(0, ::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&sa), &len));
    closed = ntohs(sa.sin_port);
  }
  PlainDnsOptions o;
  o.udp_retransmit = std::chrono::seconds(3);
  make_transport(closed, o);
  Outcome out;
  finish(out, 11, "nas.lan");
  check_failed(out, Cause::connect_failed, "refused");
  LONGS_EQUAL(0, transport->retransmits());
  LONGS_EQUAL(0, transport->live_exchanges());
}

TEST(PlainDnsTransport, EveryExchangeHasItsOwnIdAndSourcePort) {
  serve(router());
  constexpr int n = 16;
  Outcome outs[n];
  // All in flight at once, all with the same client ID.
  for (auto& out : outs) start(out, 0x5151, "nas.lan");
  LONGS_EQUAL(n, transport->stats().open_sessions);
  run_until([&] {
    return std::all_of(std::begin(outs), std::end(outs), [](const Outcome& o) { return o.calls > 0; });
  });
  for (const auto& out : outs) {
    CHECK_TRUE(out.result.ok());
    LONGS_EQUAL(0x5151, dns::get_id(out.result.response));
  }
  LONGS_EQUAL(n, server->seen().size());
  std::set<std::uint16_t> ids, ports;
  int consecutive = 0;
  for (std::size_t i = 0; i < server->seen().size(); ++i) {
    ids.insert(server->seen()[i].id);
    ports.insert(server->seen()[i].source_port);
    if (i > 0 && server->seen()[i].id == static_cast<std::uint16_t>(server->seen()[i - 1].id + 1)) ++consecutive;
  }
  // One socket each, open together: the kernel gave each its own port.
  LONGS_EQUAL(n, ports.size());
  // Random IDs: two of 16 may collide (about 1 run in 550); more than that,
  // or IDs counting up, is no randomness (about 1 run in 600,000 for the
  // first, never for the second).
  CHECK_TRUE(ids.size() >= n - 1);
  CHECK_TRUE(consecutive < n - 1);
}
