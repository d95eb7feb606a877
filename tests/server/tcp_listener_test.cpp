#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "loop/loop_scheduler.hpp"
#include "query/engine.hpp"
#include "server/tcp_listener.hpp"
#include "upstream/fake_transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {

struct TcpRig {
  loop::EventBasePtr base{event_base_new()};
  std::unique_ptr<loop::LoopScheduler> sched = std::make_unique<loop::LoopScheduler>(base.get());
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<query::Engine> engine;
  server::ListenerState state;
  std::unique_ptr<server::TcpListener> listener;
  std::vector<int> clients;

  TcpRig() {
    std::vector<upstream::EntrySpec> specs;
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    pool = std::make_unique<upstream::Pool>(*sched, std::move(specs), upstream::PoolOptions{});
    engine = std::make_unique<query::Engine>(*sched, *pool, query::EngineOptions{});
    std::string why;
    listener = server::TcpListener::open(base.get(), *sched, *net::make_endpoint("127.0.0.1", 0), *engine, state, &why);
    CHECK_TRUE(listener != nullptr);
  }
  ~TcpRig() {
    for (int c : clients) ::close(c);
    engine->cancel_all();
    listener.reset();
    engine.reset();
    pool.reset();
    sched.reset();
  }
  // From `source` (a 127/8 address), so tests can be several clients.
  int connect_client(const char* source = nullptr) {
    const int c = ::socket(AF_INET, SOCK_STREAM, 0);
    if (source) {
      auto from = net::make_endpoint(source, 0);
      CHECK_EQUAL(0, ::bind(c, from->sa(), from->len));
    }
    CHECK_EQUAL(0, ::connect(c, listener->local().sa(), listener->local().len));
    clients.push_back(c);
    return c;
  }
  void spin(int ms = 10) {
    timeval tv{0, ms * 1000};
    event_base_loopexit(base.get(), &tv);
    event_base_dispatch(base.get());
  }
};

dns::Bytes framed_query(std::uint16_t id) {
  auto q = dns::make_query(id, *dns::name_from_text("tcp.test"), 1, std::nullopt);
  dns::Bytes f{static_cast<std::uint8_t>(q.size() >> 8), static_cast<std::uint8_t>(q.size())};
  f.insert(f.end(), q.begin(), q.end());
  return f;
}

void send_all(int fd, const dns::Bytes& b) { CHECK_EQUAL(static_cast<ssize_t>(b.size()), ::send(fd, b.data(), b.size(), 0)); }

// Reads one framed message (or returns empty on EOF) after pumping the loop.
dns::Bytes read_frame(TcpRig& rig, int fd) {
  dns::Bytes buf;
  for (int i = 0; i < 100; ++i) {
    rig.spin(5);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) continue;
    std::uint8_t tmp[4096];
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n <= 0) return {};
    buf.insert(buf.end(), tmp, tmp + n);
    if (buf.size() >= 2 && buf.size() >= 2u + ((buf[0] << 8) | buf[1])) return dns::Bytes(buf.begin() + 2, buf.end());
  }
  return {};
}

bool closed_by_server(TcpRig& rig, int fd) {
  for (int i = 0; i < 100; ++i) {
    rig.spin(5);
    std::uint8_t b;
    const ssize_t n = ::recv(fd, &b, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
  return false;
}

}  // namespace

TEST_GROUP(TcpListener){};

TEST(TcpListener, PipelinedQueriesAreAnsweredInCompletionOrder) {
  TcpRig rig;
  const int c = rig.connect_client();
  auto a = framed_query(0x0A0A), b = framed_query(0x0B0B);
  a.insert(a.end(), b.begin(), b.end());
  send_all(c, a);  // both frames in one segment
  rig.spin(20);
  CHECK_EQUAL(2u, rig.fake->live());
  // Answer the second query first.
  rig.fake->finish(2, upstream::Cause::ok);
  auto first = read_frame(rig, c);
  CHECK_EQUAL(0x0B0B, dns::get_id(first));
  rig.fake->finish(1, upstream::Cause::ok);
  auto second = read_frame(rig, c);
  CHECK_EQUAL(0x0A0A, dns::get_id(second));
}

TEST(TcpListener, FrameSplitByteByByteIsReassembled) {
  TcpRig rig;
  const int c = rig.connect_client();
  for (std::uint8_t byte : framed_query(0x1234)) {
    CHECK_EQUAL(1, ::send(c, &byte, 1, 0));
    rig.spin(1);
  }
  rig.spin(10);
  CHECK_EQUAL(1u, rig.fake->live());
  rig.fake->answer_oldest();
  CHECK_EQUAL(0x1234, dns::get_id(read_frame(rig, c)));
}

TEST(TcpListener, ZeroLengthFrameClosesTheConnection) {
  TcpRig rig;
  const int c = rig.connect_client();
  send_all(c, dns::Bytes{0, 0});
  CHECK_TRUE(closed_by_server(rig, c));
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_zero_length_frame));
}

TEST(TcpListener, OversizedLengthPrefixClosesTheConnection) {
  TcpRig rig;
  const int c = rig.connect_client();
  send_all(c, dns::Bytes{0xFF, 0xFF, 1, 2, 3});
  CHECK_TRUE(closed_by_server(rig, c));
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_frame_too_large));
  CHECK_EQUAL(0u, rig.fake->started());
}

TEST(TcpListener, ClientResetAbandonsItsPendingQueries) {
  TcpRig rig;
  const int c = rig.connect_client();
  send_all(c, framed_query(1));
  rig.spin(20);
  CHECK_EQUAL(1u, rig.fake->live());
  // SO_LINGER 0: close() sends a reset, not a FIN. Nobody will read the answer.
  const linger reset{1, 0};
  CHECK_EQUAL(0, ::setsockopt(c, SOL_SOCKET, SO_LINGER, &reset, sizeof reset));
  ::close(c);
  rig.clients.clear();
  rig.spin(30);
  CHECK_EQUAL(1u, rig.fake->cancelled());
  CHECK_EQUAL(0u, rig.engine->in_flight());
  CHECK_EQUAL(0u, rig.listener->connections());
  CHECK_EQUAL(0u, rig.state.v4.tcp_connections);
}

// RFC 7766 §6.2.4 spirit: a client that writes its queries and then shuts
// down its sending side (kdig does) still reads every answer; the server
// closes only once nothing is owed.
TEST(TcpListener, HalfClosedClientGetsEveryAnswerThenEof) {
  TcpRig rig;
  const int c = rig.connect_client();
  auto both = framed_query(0x0A0A), b = framed_query(0x0B0B);
  both.insert(both.end(), b.begin(), b.end());
  send_all(c, both);
  CHECK_EQUAL(0, ::shutdown(c, SHUT_WR));
  rig.spin(20);
  CHECK_EQUAL(2u, rig.fake->live());
  CHECK_EQUAL(0u, rig.fake->cancelled());
  rig.fake->finish(2, upstream::Cause::ok);
  CHECK_EQUAL(0x0B0B, dns::get_id(read_frame(rig, c)));
  rig.fake->finish(1, upstream::Cause::ok);
  CHECK_EQUAL(0x0A0A, dns::get_id(read_frame(rig, c)));
  CHECK_TRUE(closed_by_server(rig, c));
  CHECK_EQUAL(0u, rig.listener->connections());
}

TEST(TcpListener, HalfCloseWithNothingOwedClosesAtOnce) {
  TcpRig rig;
  const int c = rig.connect_client();
  send_all(c, dns::Bytes{0x00});  // a lone prefix byte: a frame that can never complete
  CHECK_EQUAL(0, ::shutdown(c, SHUT_WR));
  CHECK_TRUE(closed_by_server(rig, c));
  CHECK_EQUAL(0u, rig.listener->connections());
  CHECK_EQUAL(0u, rig.fake->started());
}

TEST(TcpListener, ClosedClientsLateAnswerClosesTheConnection) {
  // A FIN cannot be told from a half-close, so the query stays in flight;
  // its answer goes to a socket the client has closed (the peer's kernel
  // drops it), and then the connection closes: nothing is left behind.
  ::signal(SIGPIPE, SIG_IGN);  // as the daemon does (src/app/daemon.cpp)
  TcpRig rig;
  const int c = rig.connect_client();
  send_all(c, framed_query(3));
  rig.spin(20);
  ::close(c);
  rig.clients.clear();
  rig.spin(20);
  CHECK_EQUAL(1u, rig.engine->in_flight());
  rig.fake->answer_oldest();
  rig.spin(20);
  CHECK_EQUAL(0u, rig.engine->in_flight());
  CHECK_EQUAL(0u, rig.listener->connections());
  CHECK_EQUAL(0u, rig.state.v4.tcp_connections);
}

TEST(TcpListener, ConnectionsOverTheCapAreClosedAtOnce) {
  TcpRig rig;
  // From as many addresses as the per-client share needs; accepted as they
  // come (the listen backlog is smaller than the cap).
  for (std::uint32_t i = 0; i < server::tcp_connection_cap; ++i) {
    const std::string from = "127.0.9." + std::to_string(1 + i / server::tcp_client_share);
    rig.connect_client(from.c_str());
    if (i % 16 == 15) rig.spin(5);
  }
  rig.spin(50);
  CHECK_EQUAL(server::tcp_connection_cap, rig.listener->connections());
  const int extra = rig.connect_client("127.0.9.200");
  CHECK_TRUE(closed_by_server(rig, extra));
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_connection_cap));
  // The 64 admitted connections still work.
  send_all(rig.clients[0], framed_query(0x0101));
  rig.spin(20);
  rig.fake->answer_oldest();
  CHECK_EQUAL(0x0101, dns::get_id(read_frame(rig, rig.clients[0])));
}

TEST(TcpListener, StopAcceptingDrainsThenCloses) {
  TcpRig rig;
  const int c = rig.connect_client();
  send_all(c, framed_query(7));
  rig.spin(20);
  rig.listener->stop_accepting();
  rig.fake->answer_oldest();
  CHECK_EQUAL(7, dns::get_id(read_frame(rig, c)));  // the pending answer still goes out
  CHECK_TRUE(closed_by_server(rig, c));
}

TEST(TcpListener, OneClientGetsItsShareOfConnectionsAndNoMore) {
  TcpRig rig;
  for (std::uint32_t i = 0; i < server::tcp_client_share; ++i) rig.connect_client("127.0.8.1");
  rig.spin(50);
  CHECK_EQUAL(server::tcp_client_share, rig.listener->connections());
  const int over = rig.connect_client("127.0.8.1");
  CHECK_TRUE(closed_by_server(rig, over));
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_client_share));
  // Another client is unaffected.
  const int other = rig.connect_client("127.0.8.2");
  send_all(other, framed_query(0x0202));
  rig.spin(20);
  rig.fake->answer_oldest();
  CHECK_EQUAL(0x0202, dns::get_id(read_frame(rig, other)));
}

TEST(TcpListener, ClientOutsideAccessControlGetsRefusedOverTcp) {
  TcpRig rig;
  rig.state.access = server::AccessControl({{*server::parse_cidr("127.0.7.7", nullptr), server::Access::refuse}});
  const int c = rig.connect_client("127.0.7.7");
  send_all(c, framed_query(0x0303));
  rig.spin(20);
  const auto reply = read_frame(rig, c);
  CHECK_EQUAL(0x0303, dns::get_id(reply));
  CHECK_EQUAL(5, reply[3] & 0x0F);  // REFUSED
  CHECK_EQUAL(0u, rig.engine->in_flight());  // never forwarded
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_access_refused));
}

// A refused client has nothing to gain from its connection but the REFUSED:
// it is closed after one, however many queries were pipelined behind it, so
// asking again and again cannot keep it open past the idle timeout.
TEST(TcpListener, RefusedClientGetsOneRefusedThenTheConnectionCloses) {
  TcpRig rig;
  rig.state.access = server::AccessControl({{*server::parse_cidr("127.0.7.7", nullptr), server::Access::refuse}});
  const int c = rig.connect_client("127.0.7.7");
  auto both = framed_query(0x0303), b = framed_query(0x0404);
  both.insert(both.end(), b.begin(), b.end());
  send_all(c, both);
  const auto reply = read_frame(rig, c);
  CHECK_EQUAL(0x0303, dns::get_id(reply));
  CHECK_EQUAL(5, reply[3] & 0x0F);
  CHECK_TRUE(closed_by_server(rig, c));
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_access_refused));
  CHECK_EQUAL(0u, rig.listener->connections());
  CHECK_EQUAL(0u, rig.state.v4.tcp_connections);
  CHECK_EQUAL(0u, rig.state.v4.tcp_refused_connections);
}

// However many connections a refused host opens, it holds at most the
// refused clients' budget; an allowed client still connects and is served.
TEST(TcpListener, RefusedClientsShareASmallBudgetOfConnections) {
  TcpRig rig;
  rig.state.access = server::AccessControl({{*server::parse_cidr("127.0.7.0/24", nullptr), server::Access::refuse}});
  const std::uint32_t extra = 6;
  for (std::uint32_t i = 0; i < server::tcp_refused_budget + extra; ++i) {
    // Several refused addresses: the budget is shared, not per client.
    rig.connect_client(i % 2 ? "127.0.7.7" : "127.0.7.8");
    rig.spin(5);
  }
  rig.spin(30);
  CHECK_EQUAL(server::tcp_refused_budget, rig.listener->connections());
  CHECK_EQUAL(server::tcp_refused_budget, rig.state.v4.tcp_refused_connections);
  CHECK_EQUAL(extra, rig.state.rejected(server::Rejection::tcp_refused_budget));
  CHECK_EQUAL(0u, rig.state.rejected(server::Rejection::tcp_connection_cap));
  for (std::uint32_t i = server::tcp_refused_budget; i < server::tcp_refused_budget + extra; ++i)
    CHECK_TRUE(closed_by_server(rig, rig.clients[i]));

  const int allowed = rig.connect_client("127.0.8.2");
  send_all(allowed, framed_query(0x0202));
  rig.spin(20);
  rig.fake->answer_oldest();
  CHECK_EQUAL(0x0202, dns::get_id(read_frame(rig, allowed)));

  // Each refused connection ends after its REFUSED and gives its place back.
  for (std::uint32_t i = 0; i < server::tcp_refused_budget; ++i) {
    send_all(rig.clients[i], framed_query(static_cast<std::uint16_t>(0x0700 + i)));
    CHECK_EQUAL(5, read_frame(rig, rig.clients[i])[3] & 0x0F);
    CHECK_TRUE(closed_by_server(rig, rig.clients[i]));
  }
  CHECK_EQUAL(0u, rig.state.v4.tcp_refused_connections);
  CHECK_EQUAL(1u, rig.listener->connections());
  rig.connect_client("127.0.7.7");
  rig.spin(20);
  CHECK_EQUAL(1u, rig.state.v4.tcp_refused_connections);
  CHECK_EQUAL(extra, rig.state.rejected(server::Rejection::tcp_refused_budget));
}

// A reload that takes the client's address off access_control reaches its
// open connection: what it asked before is answered, its next query gets
// REFUSED and the connection closes, giving back its client share.
TEST(TcpListener, AccessWithdrawnOnAnOpenConnectionRefusesItsNextQuery) {
  TcpRig rig;
  const int c = rig.connect_client("127.0.8.3");
  send_all(c, framed_query(0x0101));
  rig.spin(20);
  CHECK_EQUAL(1u, rig.fake->live());

  rig.state.access = server::AccessControl({{*server::parse_cidr("127.0.8.3", nullptr), server::Access::refuse}});
  rig.listener->apply_access();
  rig.fake->answer_oldest();
  const auto admitted = read_frame(rig, c);
  CHECK_EQUAL(0x0101, dns::get_id(admitted));
  CHECK_EQUAL(0, admitted[3] & 0x0F);  // admitted before the change: answered

  send_all(c, framed_query(0x0202));
  const auto refused = read_frame(rig, c);
  CHECK_EQUAL(0x0202, dns::get_id(refused));
  CHECK_EQUAL(5, refused[3] & 0x0F);
  CHECK_EQUAL(1u, rig.fake->started());  // never forwarded
  CHECK_TRUE(closed_by_server(rig, c));
  CHECK_EQUAL(1u, rig.state.rejected(server::Rejection::tcp_access_refused));
  CHECK_EQUAL(0u, rig.state.v4.tcp_connections);
  server::ClientKey key;
  key.addr = {127, 0, 8, 3};
  const server::ClientRecord* rec = rig.state.clients.table().find(key);
  CHECK_TRUE(rec == nullptr || rec->tcp_connections == 0);
}

// An unchanged ACL leaves open connections alone.
TEST(TcpListener, AccessReappliedUnchangedKeepsServing) {
  TcpRig rig;
  const int c = rig.connect_client("127.0.8.4");
  rig.listener->apply_access();
  send_all(c, framed_query(0x0505));
  rig.spin(20);
  rig.fake->answer_oldest();
  const auto a = read_frame(rig, c);
  CHECK_EQUAL(0x0505, dns::get_id(a));
  CHECK_EQUAL(0, a[3] & 0x0F);
  CHECK_EQUAL(1u, rig.listener->connections());
}
