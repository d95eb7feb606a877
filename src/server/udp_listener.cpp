#include "server/udp_listener.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "log/log.hpp"
#include "server/bound_socket.hpp"

namespace nxdns::server {

namespace {

// No UDP datagram but an IPv6 jumbogram (RFC 2675) is longer: a longer one
// is counted as truncated, a shorter one too long for a query is answered
// FORMERR from its header.
constexpr std::size_t max_udp_datagram = 65536;

}  // namespace

std::unique_ptr<UdpListener> UdpListener::open(event_base* base, const net::Endpoint& ep, query::Engine& engine,
                                               ListenerState& state, std::string* why) {
  auto l = std::make_unique<UdpListener>(Key{}, engine, state);
  l->fd_ = bind_socket(ep, SOCK_DGRAM, why);
  if (!l->fd_) return nullptr;
  l->local_ = local_endpoint(l->fd_.get());
  l->ev_.reset(event_new(
      base, l->fd_.get(), EV_READ | EV_PERSIST,
      [](evutil_socket_t, short, void* arg) { static_cast<UdpListener*>(arg)->on_readable(); }, l.get()));
  if (!l->ev_ || event_add(l->ev_.get(), nullptr) != 0) {
    if (why) *why = log::cat("cannot watch udp ", ep.to_string(), ": libevent failure");
    return nullptr;
  }
  return l;
}

void UdpListener::stop_accepting() {
  if (ev_) event_del(ev_.get());
}

void UdpListener::on_readable() {
  int reads = 0;
  while (reads < udp_reads_per_wakeup) {
    const std::size_t want =
        std::min<std::size_t>(ReceiveBatch::capacity, static_cast<std::size_t>(udp_reads_per_wakeup - reads));
    // MSG_TRUNC: each msg_len is the datagram's real length, so one longer
    // than a slot is still recognised as too long (ReceiveBatch).
    const int n = ::recvmmsg(fd_.get(), inbox_.prepare(want), static_cast<unsigned>(want), MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      ++reads;
      if (errno == EINTR) continue;
      // ICMP errors from earlier sends surface here (ECONNREFUSED etc.):
      // count them and keep serving.
      state_.reject(Rejection::receive_failed);
      log::debug("udp ", local_.to_string(), ": recvmmsg: ", std::strerror(errno));
      continue;
    }
    reads += n;
    for (int i = 0; i < n; ++i) {
      const auto slot = static_cast<std::size_t>(i);
      const msghdr& msg = inbox_.header(slot);
      if ((msg.msg_flags & MSG_TRUNC) && inbox_.length(slot) > max_udp_datagram) {
        state_.reject(Rejection::udp_truncated_datagram);
        continue;
      }
      handle(return_address_of(msg), inbox_.bytes(slot), inbox_.length(slot));
    }
    // Fewer than asked: the socket was empty a moment ago. Readiness is
    // level-triggered, so anything that arrived since wakes us again; an
    // extra recvmmsg only to read EAGAIN would cost a syscall per wakeup.
    if (static_cast<std::size_t>(n) < want) break;
  }
  flush_outbox();
}

void UdpListener::handle(const ReturnAddress& to, dns::ByteView packet, std::size_t real_length) {
  const sockaddr* peer = to.sa();
  if (state_.access.decide(peer) == Access::refuse) {
    // Outside access_control: REFUSED (RFC 1035 §4.1.1: "for policy
    // reasons"), never forwarded, never tracked in the client table.
    state_.reject(Rejection::udp_access_refused);
    auto refused = engine_.refuse(packet, query::Protocol::udp);
    if (!refused.empty()) queue_reply(to, std::move(refused));
    return;
  }
  if (real_length > dns::max_client_query) {
    // No single-question query is this long (dns::max_client_query says
    // why); answered FORMERR from the header alone, never parsed further.
    // `packet` holds max_client_query + 1 octets of it: enough for that.
    state_.reject(Rejection::udp_query_too_large);
    // The engine's parse refuses it first thing (ParseError::too_large).
    auto res = engine_.submit(packet, query::Protocol::udp, nullptr);
    if (res.kind == query::Engine::Admission::answered) queue_reply(to, std::move(res.reply));
    return;
  }
  FamilyState& fam = state_.family(local_.family());
  if (fam.udp_in_flight >= udp_in_flight_cap) {
    // Over the cap the client gets REFUSED at once (documented), so it can
    // try another server instead of timing out.
    state_.reject(Rejection::udp_in_flight_cap);
    auto refused = engine_.refuse(packet, query::Protocol::udp);
    if (!refused.empty()) queue_reply(to, std::move(refused));
    return;
  }
  const ClientKey client = client_key(peer);
  const ClientVerdict verdict = state_.clients.admit_udp_query(client, loop::Clock::now());
  if (verdict != ClientVerdict::admit) {
    // This client's share or rate is spent: it alone gets REFUSED, the
    // slots it would have taken stay free for everyone else.
    state_.reject(verdict == ClientVerdict::over_share  ? Rejection::udp_client_share
                  : verdict == ClientVerdict::over_rate ? Rejection::udp_client_rate
                                                        : Rejection::client_table_full);
    auto refused = engine_.refuse(packet, query::Protocol::udp);
    if (!refused.empty()) queue_reply(to, std::move(refused));
    return;
  }
  // Cache hits come back now (HitDelivery::now) and leave with this
  // wakeup's sendmmsg: no timer, no second pass from the loop.
  auto res = engine_.submit(
      packet, query::Protocol::udp,
      [this, life = life_.watch(), to, client](dns::Bytes&& answer) {
        if (!life.alive()) return;
        FamilyState& f = state_.family(local_.family());
        if (f.udp_in_flight > 0) --f.udp_in_flight;
        state_.clients.release_udp(client);
        send_reply(to, answer);
      },
      query::Engine::HitDelivery::now, peer);
  switch (res.kind) {
    case query::Engine::Admission::forwarded:
      ++fam.udp_in_flight;
      state_.clients.hold_udp(client);
      break;
    case query::Engine::Admission::answered:
      // Answered now (cache hit, FORMERR, local answer): nothing is held.
      queue_reply(to, std::move(res.reply));
      break;
    case query::Engine::Admission::dropped:
      break;
  }
}

void UdpListener::queue_reply(const ReturnAddress& to, dns::Bytes&& bytes) {
  if (outbox_.full()) flush_outbox();  // cannot happen: one answer per datagram read
  outbox_.add(to, std::move(bytes));
}

void UdpListener::flush_outbox() {
  std::span<mmsghdr> batch = outbox_.messages();
  std::size_t sent = 0;
  while (sent < batch.size()) {
    const int n = ::sendmmsg(fd_.get(), batch.data() + sent, static_cast<unsigned>(batch.size() - sent), 0);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // The datagram at `sent` failed (EAGAIN/ENOBUFS: the socket buffer is
    // full). UDP gives no delivery promise; the client retries. Count it,
    // as a single send would, and go on with the rest.
    state_.reject(Rejection::send_failed);
    log::debug("udp ", local_.to_string(), ": sendmmsg: ", std::strerror(errno));
    ++sent;
  }
  outbox_.clear();
}

void UdpListener::send_reply(const ReturnAddress& to, dns::ByteView bytes) {
  iovec iov{};
  alignas(cmsghdr) std::uint8_t control[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  msghdr msg{};
  fill_send_header(msg, iov, control, to, bytes);
  for (;;) {
    if (::sendmsg(fd_.get(), &msg, 0) >= 0) return;
    if (errno == EINTR) continue;
    // EAGAIN/ENOBUFS: the socket buffer is full. UDP gives no delivery
    // promise; the client retries. Count it rather than queue unboundedly.
    state_.reject(Rejection::send_failed);
    log::debug("udp ", local_.to_string(), ": sendmsg: ", std::strerror(errno));
    return;
  }
}

}  // namespace nxdns::server
