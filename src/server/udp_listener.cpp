#include "server/udp_listener.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "log/log.hpp"
#include "server/bound_socket.hpp"

namespace nxdns::server {

namespace {

// Makes `msg` carry one PKTINFO control message, so the answer leaves from
// the address the query arrived at. `control` must hold CMSG_SPACE(sizeof T).
template <class Pktinfo>
void set_source(msghdr& msg, std::uint8_t* control, int level, int type, const Pktinfo& info) {
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(Pktinfo));
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = level;
  c->cmsg_type = type;
  c->cmsg_len = CMSG_LEN(sizeof(Pktinfo));
  std::memcpy(CMSG_DATA(c), &info, sizeof info);
}

}  // namespace

// Where an answer goes, and from which local address it must leave.
struct UdpListener::Reply {
  sockaddr_storage peer{};
  socklen_t peer_len = 0;
  bool have_v4_pktinfo = false;
  bool have_v6_pktinfo = false;
  in_pktinfo v4{};
  in6_pktinfo v6{};
};

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
  l->alive_ = std::make_shared<UdpListener*>(l.get());
  return l;
}

UdpListener::~UdpListener() {
  if (alive_) *alive_ = nullptr;
}

void UdpListener::stop_accepting() {
  if (ev_) event_del(ev_.get());
}

void UdpListener::on_readable() {
  for (int i = 0; i < udp_reads_per_wakeup; ++i) {
    Reply to;
    iovec iov{buf_.data(), buf_.size()};
    alignas(cmsghdr) std::uint8_t control[256];
    msghdr msg{};
    msg.msg_name = &to.peer;
    msg.msg_namelen = sizeof to.peer;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_.get(), &msg, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      // ICMP errors from earlier sends surface here (ECONNREFUSED etc.):
      // count them and keep serving.
      state_.reject(Rejection::receive_failed);
      log::debug("udp ", local_.to_string(), ": recvmsg: ", std::strerror(errno));
      continue;
    }
    to.peer_len = msg.msg_namelen;
    if (msg.msg_flags & MSG_TRUNC) {
      state_.reject(Rejection::udp_truncated_datagram);
      continue;
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
        std::memcpy(&to.v4, CMSG_DATA(c), sizeof to.v4);
        to.v4.ipi_ifindex = 0;  // let routing pick the interface; keep the source address
        to.have_v4_pktinfo = true;
      } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
        std::memcpy(&to.v6, CMSG_DATA(c), sizeof to.v6);
        to.have_v6_pktinfo = true;  // ifindex kept: link-local sources need it
      }
    }
    const dns::ByteView packet(buf_.data(), static_cast<std::size_t>(n));
    const auto* peer = reinterpret_cast<const sockaddr*>(&to.peer);
    if (state_.access.decide(peer) == Access::refuse) {
      // Outside access_control: REFUSED (RFC 1035 §4.1.1: "for policy
      // reasons"), never forwarded, never tracked in the client table.
      state_.reject(Rejection::udp_access_refused);
      auto refused = engine_.refuse(packet, query::Protocol::udp);
      if (!refused.empty()) send_reply(to, refused);
      continue;
    }
    if (packet.size() > dns::max_client_query) {
      // No single-question query is this long (dns::max_client_query says
      // why); answered FORMERR from the header alone, never parsed further.
      state_.reject(Rejection::udp_query_too_large);
      // The engine's parse refuses it first thing (ParseError::too_large).
      auto res = engine_.submit(packet, query::Protocol::udp, nullptr);
      if (res.kind == query::Engine::Admission::answered) send_reply(to, res.reply);
      continue;
    }
    FamilyState& fam = state_.family(local_.family());
    if (fam.udp_in_flight >= udp_in_flight_cap) {
      // Over the cap the client gets REFUSED at once (documented), so it can
      // try another server instead of timing out.
      state_.reject(Rejection::udp_in_flight_cap);
      auto refused = engine_.refuse(packet, query::Protocol::udp);
      if (!refused.empty()) send_reply(to, refused);
      continue;
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
      if (!refused.empty()) send_reply(to, refused);
      continue;
    }
    std::weak_ptr<UdpListener*> weak = alive_;
    auto res = engine_.submit(packet, query::Protocol::udp, [weak, to, client](dns::Bytes&& answer) {
      auto alive = weak.lock();
      if (!alive || !*alive) return;
      UdpListener* self = *alive;
      FamilyState& f = self->state_.family(self->local_.family());
      if (f.udp_in_flight > 0) --f.udp_in_flight;
      self->state_.clients.release_udp(client);
      self->send_reply(to, answer);
    });
    switch (res.kind) {
      case query::Engine::Admission::forwarded:
        ++fam.udp_in_flight;
        state_.clients.hold_udp(client);
        break;
      case query::Engine::Admission::answered:
        send_reply(to, res.reply);
        break;
      case query::Engine::Admission::dropped:
        break;
    }
  }
}

void UdpListener::send_reply(const Reply& to, dns::ByteView bytes) {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) std::uint8_t control[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  msghdr msg{};
  msg.msg_name = const_cast<sockaddr_storage*>(&to.peer);
  msg.msg_namelen = to.peer_len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (to.have_v4_pktinfo) {
    set_source(msg, control, IPPROTO_IP, IP_PKTINFO, to.v4);
  } else if (to.have_v6_pktinfo) {
    set_source(msg, control, IPPROTO_IPV6, IPV6_PKTINFO, to.v6);
  }
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
