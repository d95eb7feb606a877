// Fault injection at the listeners' C boundary: recvmsg, sendmsg, accept4
// and the UDP listener's batched recvmmsg and sendmmsg are interposed with
// the linker's --wrap, so errors that are hard to cause on a real wire (ICMP
// errors surfacing on recv, ENOBUFS on send, EMFILE on accept) are injected
// exactly. A batched call takes one scripted result per datagram, so a
// script reads the same whether the listener reads one datagram a call or
// many.
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <csetjmp>
#include <memory>

#include "loop/loop_scheduler.hpp"
#include "query/engine.hpp"
#include "server/tcp_listener.hpp"
#include "server/udp_listener.hpp"
#include "upstream/fake_transport.hpp"

extern "C" {
#include <cmocka.h>
}

using namespace nxdns;

// ---- wrapped C functions -------------------------------------------------
extern "C" {
ssize_t __real_recvmsg(int fd, msghdr* msg, int flags);
ssize_t __real_sendmsg(int fd, const msghdr* msg, int flags);
int __real_accept4(int fd, sockaddr* addr, socklen_t* len, int flags);
int __real_recvmmsg(int fd, mmsghdr* vec, unsigned vlen, int flags, timespec* timeout);
int __real_sendmmsg(int fd, mmsghdr* vec, unsigned vlen, int flags);
}

namespace {
// Scripted results: each call pops the next; an empty script means "real".
struct Script {
  static constexpr int capacity = 8192;  // above server::udp_in_flight_cap
  int results[capacity];
  int errnos[capacity];
  int n = 0, next = 0;
  int calls = 0;
  void push(int r, int e) {
    assert_true(n < capacity);
    results[n] = r;
    errnos[n] = e;
    ++n;
  }
  bool pop(int* r) {
    ++calls;
    if (next >= n) return false;
    errno = errnos[next];
    *r = results[next++];
    return true;
  }
  // A batched call stops before a result it cannot give in the same call
  // (an error after some datagrams): the next call pops it again.
  void unpop() {
    --calls;
    --next;
  }
  void reset() { *this = Script{}; }
};
Script recv_script, send_script, accept_script;
// Calls of each wrapped function, scripted or not (syscalls per wakeup).
struct Calls {
  int recvmsg = 0, recvmmsg = 0, sendmsg = 0, sendmmsg = 0;
  int real_sent = 0;  // datagrams the real send calls took
} calls;
// A query to hand out when the recv script says "packet" (result -100).
std::uint8_t injected[512];
std::size_t injected_len = 0;
}  // namespace

namespace {
// The scripted packet (result -100) into `msg`: the injected query from one
// of eight loopback clients in turn, so the in-flight cap binds before any
// one client's share (server::udp_client_share) does.
ssize_t deliver_injected(msghdr* msg) {
  std::memcpy(msg->msg_iov[0].iov_base, injected, injected_len);
  auto* sin = static_cast<sockaddr_in*>(msg->msg_name);
  std::memset(sin, 0, sizeof *sin);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(9);  // discard port on loopback: nobody reads it
  static std::uint32_t next_client = 0;
  sin->sin_addr.s_addr = htonl(0x7F000001 + (next_client++ % 8));
  msg->msg_namelen = sizeof(sockaddr_in);
  msg->msg_controllen = 0;
  msg->msg_flags = 0;
  return static_cast<ssize_t>(injected_len);
}
}  // namespace

extern "C" ssize_t __wrap_recvmsg(int fd, msghdr* msg, int flags) {
  ++calls.recvmsg;
  int r;
  if (!recv_script.pop(&r)) return __real_recvmsg(fd, msg, flags);
  if (r == -100) return deliver_injected(msg);
  return r;
}

extern "C" int __wrap_recvmmsg(int fd, mmsghdr* vec, unsigned vlen, int flags, timespec* timeout) {
  ++calls.recvmmsg;
  for (unsigned i = 0; i < vlen; ++i) {
    int r;
    if (!recv_script.pop(&r)) {
      if (i > 0) return static_cast<int>(i);
      return __real_recvmmsg(fd, vec, vlen, flags, timeout);
    }
    if (r == -100) {
      vec[i].msg_len = static_cast<unsigned>(deliver_injected(&vec[i].msg_hdr));
      continue;
    }
    if (i == 0) return r;  // errno set by pop
    recv_script.unpop();   // an error after datagrams: the next call reports it
    return static_cast<int>(i);
  }
  return static_cast<int>(vlen);
}

extern "C" ssize_t __wrap_sendmsg(int fd, const msghdr* msg, int flags) {
  ++calls.sendmsg;
  int r;
  if (!send_script.pop(&r)) {
    const ssize_t n = __real_sendmsg(fd, msg, flags);
    if (n >= 0) ++calls.real_sent;
    return n;
  }
  return r;
}

extern "C" int __wrap_sendmmsg(int fd, mmsghdr* vec, unsigned vlen, int flags) {
  ++calls.sendmmsg;
  for (unsigned i = 0; i < vlen; ++i) {
    int r;
    if (!send_script.pop(&r)) {
      const int more = __real_sendmmsg(fd, vec + i, vlen - i, flags);
      if (more > 0) calls.real_sent += more;
      if (i == 0) return more;
      return static_cast<int>(i) + (more > 0 ? more : 0);
    }
    if (r >= 0) {
      vec[i].msg_len = static_cast<unsigned>(r);
      continue;
    }
    if (i == 0) return r;  // errno set by pop
    send_script.unpop();
    return static_cast<int>(i);
  }
  return static_cast<int>(vlen);
}

extern "C" int __wrap_accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  int r;
  if (!accept_script.pop(&r)) return __real_accept4(fd, addr, len, flags);
  return r;
}

// ---- rig ------------------------------------------------------------------
namespace {

struct Rig {
  loop::EventBasePtr base{event_base_new()};
  std::unique_ptr<loop::LoopScheduler> sched = std::make_unique<loop::LoopScheduler>(base.get());
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<query::Engine> engine;
  server::ListenerState state;

  Rig() {
    std::vector<upstream::EntrySpec> specs;
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    pool = std::make_unique<upstream::Pool>(*sched, std::move(specs), upstream::PoolOptions{});
    engine = std::make_unique<query::Engine>(*sched, *pool, query::EngineOptions{});
  }
  ~Rig() {
    engine.reset();
    pool.reset();
    sched.reset();
  }
  void run_for_ms(int ms) {
    timeval tv{0, ms * 1000};
    event_base_loopexit(base.get(), &tv);
    event_base_dispatch(base.get());
  }
};

// Port 0: the kernel picks a free one (config never allows it; tests do).
net::Endpoint loopback_any_port() { return *net::make_endpoint("127.0.0.1", 0); }

void make_injected_query() {
  auto name = dns::name_from_text("fault.test");
  auto q = dns::make_query(0x4242, *name, 1, std::nullopt);
  std::memcpy(injected, q.data(), q.size());
  injected_len = q.size();
}

int reset_scripts(void**) {
  recv_script.reset();
  send_script.reset();
  accept_script.reset();
  calls = Calls{};
  return 0;
}

}  // namespace

// ICMP port-unreachable from an earlier answer surfaces as ECONNREFUSED on
// the next recvmsg. It must be counted and skipped, not end the read loop or
// the listener.
static void udp_receive_errors_are_counted_and_survived(void**) {
  Rig rig;
  std::string why;
  auto l = server::UdpListener::open(rig.base.get(), loopback_any_port(), *rig.engine, rig.state, &why);
  assert_non_null(l.get());
  make_injected_query();
  recv_script.push(-1, ECONNREFUSED);
  recv_script.push(-1, EINTR);
  recv_script.push(-100, 0);  // a real query after the errors
  recv_script.push(-1, EAGAIN);
  l->on_readable();
  assert_int_equal(rig.state.rejected(server::Rejection::receive_failed), 1);
  // The query after the errors was still admitted.
  assert_int_equal(rig.fake->live(), 1);
  assert_int_equal(rig.state.v4.udp_in_flight, 1);
}

// A full socket buffer (ENOBUFS) loses the answer: counted, in-flight
// accounting still released, the listener keeps serving.
static void udp_send_failure_is_counted_and_releases_the_slot(void**) {
  Rig rig;
  std::string why;
  auto l = server::UdpListener::open(rig.base.get(), loopback_any_port(), *rig.engine, rig.state, &why);
  assert_non_null(l.get());
  make_injected_query();
  recv_script.push(-100, 0);
  recv_script.push(-1, EAGAIN);
  l->on_readable();
  assert_int_equal(rig.fake->live(), 1);
  send_script.push(-1, ENOBUFS);
  rig.fake->answer_oldest();
  rig.run_for_ms(20);  // the pool delivers from the loop
  assert_int_equal(send_script.calls, 1);
  assert_int_equal(rig.state.rejected(server::Rejection::send_failed), 1);
  assert_int_equal(rig.state.v4.udp_in_flight, 0);
}

// Over the in-flight cap a client gets REFUSED at once, not silence.
static void udp_over_the_cap_is_refused(void**) {
  Rig rig;
  std::string why;
  auto l = server::UdpListener::open(rig.base.get(), loopback_any_port(), *rig.engine, rig.state, &why);
  assert_non_null(l.get());
  make_injected_query();
  for (std::uint32_t i = 0; i < server::udp_in_flight_cap + 1; ++i) recv_script.push(-100, 0);
  recv_script.push(-1, EAGAIN);
  // One wakeup reads at most udp_reads_per_wakeup datagrams (fairness), so
  // the one past the cap arrives on a later one.
  l->on_readable();
  assert_int_equal(rig.fake->live(), server::udp_reads_per_wakeup);
  for (std::uint32_t i = 1; i <= server::udp_in_flight_cap / server::udp_reads_per_wakeup; ++i) l->on_readable();
  // Past the upstream's own 64 exchanges the rest wait in the pool's FIFO.
  assert_int_equal(rig.state.v4.udp_in_flight, server::udp_in_flight_cap);
  assert_int_equal(rig.state.rejected(server::Rejection::udp_in_flight_cap), 1);
  assert_int_equal(rig.engine->counters().replies_by_rcode[0][5], 1);  // REFUSED sent
}

// Answers given at once leave together: ten datagrams answered in the same
// wakeup (NOTIMP here: an opcode nxdns does not implement) cost one read
// call and one send call, not ten of each (a syscall per datagram each way
// would be the hit path's largest cost after the engine's own).
static void udp_wakeup_reads_and_answers_in_one_call_each(void**) {
  Rig rig;
  std::string why;
  auto l = server::UdpListener::open(rig.base.get(), loopback_any_port(), *rig.engine, rig.state, &why);
  assert_non_null(l.get());
  make_injected_query();
  injected[2] = static_cast<std::uint8_t>(injected[2] | 0x10);  // opcode 2 (STATUS)
  for (int i = 0; i < 10; ++i) recv_script.push(-100, 0);
  recv_script.push(-1, EAGAIN);
  l->on_readable();
  assert_int_equal(rig.engine->counters().replies_by_rcode[0][4], 10);  // NOTIMP, each counted
  assert_int_equal(calls.recvmsg + calls.recvmmsg, 1);
  assert_int_equal(calls.sendmsg + calls.sendmmsg, 1);
  assert_int_equal(rig.state.rejected(server::Rejection::send_failed), 0);
}

// A send that fails in the middle of a batch loses that answer alone:
// counted once, the answers after it still go out.
static void udp_batch_send_failure_loses_one_answer(void**) {
  Rig rig;
  std::string why;
  auto l = server::UdpListener::open(rig.base.get(), loopback_any_port(), *rig.engine, rig.state, &why);
  assert_non_null(l.get());
  make_injected_query();
  injected[2] = static_cast<std::uint8_t>(injected[2] | 0x10);
  for (int i = 0; i < 5; ++i) recv_script.push(-100, 0);
  recv_script.push(-1, EAGAIN);
  send_script.push(40, 0);
  send_script.push(40, 0);
  send_script.push(-1, ENOBUFS);
  l->on_readable();
  assert_int_equal(send_script.next, 3);  // every scripted result used once
  assert_int_equal(rig.state.rejected(server::Rejection::send_failed), 1);
  assert_int_equal(calls.real_sent, 2);  // the two after the failure went out
}

// EMFILE on accept leaves the connection in the backlog and the socket
// readable. The listener must pause instead of spinning, then resume.
static void accept_emfile_pauses_then_resumes(void**) {
  Rig rig;
  std::string why;
  auto l = server::TcpListener::open(rig.base.get(), *rig.sched, loopback_any_port(), *rig.engine, rig.state, &why);
  assert_non_null(l.get());
  accept_script.push(-1, EMFILE);
  const int c = ::socket(AF_INET, SOCK_STREAM, 0);
  assert_int_equal(::connect(c, l->local().sa(), l->local().len), 0);
  rig.run_for_ms(50);
  // One failed accept, then no busy loop while paused.
  assert_int_equal(accept_script.calls, 1);
  assert_int_equal(rig.state.rejected(server::Rejection::accept_failed), 1);
  assert_int_equal(rig.state.tcp_accepted, 0);
  // After the pause the real accept4 takes the waiting connection.
  rig.run_for_ms(150);
  assert_true(accept_script.calls >= 2);
  assert_int_equal(rig.state.tcp_accepted, 1);
  assert_int_equal(l->connections(), 1);
  ::close(c);
}

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test_setup(udp_receive_errors_are_counted_and_survived, reset_scripts),
      cmocka_unit_test_setup(udp_send_failure_is_counted_and_releases_the_slot, reset_scripts),
      cmocka_unit_test_setup(udp_over_the_cap_is_refused, reset_scripts),
      cmocka_unit_test_setup(udp_wakeup_reads_and_answers_in_one_call_each, reset_scripts),
      cmocka_unit_test_setup(udp_batch_send_failure_loses_one_answer, reset_scripts),
      cmocka_unit_test_setup(accept_emfile_pauses_then_resumes, reset_scripts),
  };
  return cmocka_run_group_tests_name("server_listener_faults", tests, nullptr, nullptr);
}
