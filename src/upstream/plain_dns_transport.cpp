// PlainDnsTransport (plain_dns_transport.hpp): one connected UDP socket per
// exchange, a TCP connection of its own when the answer comes back truncated.
#include "upstream/plain_dns_transport.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "dns/stream_message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "upstream/tls_bio.hpp"  // classify_connect_errno, classify_io_errno

namespace nxdns::upstream {

namespace {

// The IDs come from the kernel's CSPRNG: an off-path spoofer has to guess
// ID and source port together (RFC 5452 §9.2). Without flags getrandom
// blocks only until the pool is initialised at boot; a signal may still cut
// a read short, so the rest is asked for again.
bool system_random(void* out, std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(out);
  while (n > 0) {
    const ssize_t got = ::getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// Whatever a server sends in one datagram is read whole and judged; our OPT
// asks for at most 1232 octets, but a datagram cut at the buffer could not
// be told from a malformed one.
constexpr std::size_t max_datagram = 65535;
// Datagrams read per wakeup: a stream of spoofed datagrams on one socket
// cannot keep the loop from everything else.
constexpr int datagrams_per_wakeup = 16;
// The two-octet length before a message on a stream (RFC 1035 §4.2.2).
constexpr std::size_t stream_prefix = 2;

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

std::size_t announced_length(const dns::Bytes& in) { return (std::size_t{in[0]} << 8) | in[1]; }

}  // namespace

enum class PlainPhase : std::uint8_t { udp, tcp_connecting, tcp_writing, tcp_reading };

struct PlainDnsTransport::Exchange {
  Exchange(PlainDnsTransport& t, ExchangeId i, loop::Scheduler& sched) : owner(&t), id(i), timer(sched) {}

  PlainDnsTransport* owner;
  ExchangeId id;
  Completion done;
  std::uint16_t client_id = 0;
  // The query as sent: the ID and question every answer is judged against.
  dns::Bytes wire;
  PlainPhase phase = PlainPhase::udp;
  bool retransmitted = false;
  loop::UniqueFd fd;
  loop::EventPtr read_ev;
  loop::EventPtr write_ev;  // TCP only
  // The UDP retransmit, then the TCP connect deadline.
  loop::Timer timer;
  // TCP: the framed query and how much of it is written; the answer so far
  // (its prefix included).
  dns::Bytes out;
  std::size_t out_off = 0;
  dns::Bytes in;
};

PlainDnsTransport::PlainDnsTransport(event_base* base, loop::Scheduler& sched, net::Endpoint server,
                                     PlainDnsOptions opts)
    : base_(base),
      sched_(sched),
      server_(server),
      opts_(opts),
      wire_ids_(&system_random),
      completions_(sched, log::cat("dns ", server.to_string())),
      datagram_(max_datagram) {}

PlainDnsTransport::~PlainDnsTransport() {
  // A destroyed transport calls no one back; every socket closes with its
  // exchange.
  completions_.clear();
  live_.clear();
}

Transport::ExchangeId PlainDnsTransport::start(dns::ByteView query, Completion done) {
  const ExchangeId id = next_id_++;
  auto owned = std::make_unique<Exchange>(*this, id, sched_);
  Exchange& ex = *owned;
  ex.done = std::move(done);
  ex.client_id = dns::get_id(query);
  live_.emplace(id, std::move(owned));
  ++stats_.exchanges_new;

  const std::optional<std::uint16_t> wire_id = wire_ids_.next();
  if (!wire_id) {
    finish(id, Cause::local_resource, log::cat("no DNS ID available (getrandom: ", std::strerror(errno), ")"));
    return id;
  }
  dns::UpstreamQueryOptions qo;
  qo.pad_block = 0;          // nothing here is encrypted: padding would hide nothing
  qo.tcp_keepalive = false;  // every connection is closed after its one answer
  qo.id = *wire_id;
  ex.wire = dns::prepare_upstream_query(query, qo);
  if (ex.wire.empty()) {
    // The listeners forward only queries the codec accepts; anything else
    // here is a caller bug, reported as the closest thing we have.
    finish(id, Cause::bad_response, "query rejected by the codec before sending");
    return id;
  }
  open_udp(ex);
  return id;
}

void PlainDnsTransport::open_udp(Exchange& ex) {
  const int fd = ::socket(server_.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    finish(ex.id, classify_connect_errno(err), log::cat("socket: ", std::strerror(err)));
    return;
  }
  ex.fd.reset(fd);
  // Connected: the kernel binds a fresh random source port, delivers only
  // datagrams from the server's address and port, and reports the server's
  // ICMP errors (port unreachable: ECONNREFUSED) on this socket.
  if (::connect(fd, server_.sa(), server_.len) != 0) {
    const int err = errno;
    finish(ex.id, classify_connect_errno(err), log::cat("connect to ", server_.to_string(), ": ", std::strerror(err)));
    return;
  }
  ex.read_ev.reset(event_new(base_, fd, EV_READ | EV_PERSIST, &PlainDnsTransport::on_socket, &ex));
  if (!ex.read_ev || event_add(ex.read_ev.get(), nullptr) != 0) {
    finish(ex.id, Cause::local_resource, "event_new failed");
    return;
  }
  // Sent now: a completion never runs inside start() (finish() queues it),
  // so even a failed send cannot re-enter the caller.
  if (!send_datagram(ex)) return;
  ex.timer.arm(opts_.udp_retransmit, [this, &ex]() {
    const ExchangeId id = ex.id;
    try {
      on_retransmit(ex);
    } catch (...) {
      internal_error(id);
    }
  });
}

bool PlainDnsTransport::send_datagram(Exchange& ex) {
  if (::send(ex.fd.get(), ex.wire.data(), ex.wire.size(), MSG_NOSIGNAL) >= 0) return true;
  const int err = errno;
  // A full socket buffer loses this copy as the network might: the
  // retransmit, or the pool's next attempt, covers it.
  if (would_block(err) || err == EINTR) return true;
  finish(ex.id, classify_connect_errno(err), log::cat("send to ", server_.to_string(), ": ", std::strerror(err)));
  return false;
}

void PlainDnsTransport::on_retransmit(Exchange& ex) {
  // Once: a router that lost two datagrams in a row is better asked again
  // by the pool, within its attempt budget, than flooded.
  if (ex.phase != PlainPhase::udp || ex.retransmitted) return;
  ex.retransmitted = true;
  ++retransmits_;
  (void)send_datagram(ex);
}

void PlainDnsTransport::on_socket(evutil_socket_t, short what, void* arg) {
  auto* ex = static_cast<Exchange*>(arg);
  PlainDnsTransport& self = *ex->owner;
  const ExchangeId id = ex->id;
  try {
    self.on_ready(*ex, what);
  } catch (...) {
    self.internal_error(id);
  }
}

void PlainDnsTransport::on_ready(Exchange& ex, short what) {
  switch (ex.phase) {
    case PlainPhase::udp: read_datagrams(ex); return;
    case PlainPhase::tcp_connecting:
      if (what & EV_WRITE) finish_connect(ex);
      return;
    case PlainPhase::tcp_writing:
      if (what & EV_WRITE) write_tcp(ex);
      return;
    case PlainPhase::tcp_reading:
      if (what & EV_READ) read_tcp(ex);
      return;
  }
}

void PlainDnsTransport::read_datagrams(Exchange& ex) {
  for (int i = 0; i < datagrams_per_wakeup; ++i) {
    const ssize_t n = ::recv(ex.fd.get(), datagram_.data(), datagram_.size(), 0);
    if (n < 0) {
      const int err = errno;
      if (would_block(err)) return;
      if (err == EINTR) continue;
      // ECONNREFUSED: the address answered that nothing serves DNS there.
      // Said at once, so a router without a DNS server costs one round trip.
      finish(ex.id, classify_connect_errno(err), log::cat("recv from ", server_.to_string(), ": ", std::strerror(err)));
      return;
    }
    const dns::ByteView datagram(datagram_.data(), static_cast<std::size_t>(n));
    const dns::ResponseError v = dns::validate_response(ex.wire, datagram);
    if (v != dns::ResponseError::none) {
      // Not an answer to this query (another ID or question: a spoofer who
      // guessed the port, or a confused server). Ignored, and the exchange
      // keeps waiting: racing the real answer ends nothing.
      ++ignored_datagrams_;
      log::debug("dns ", server_.to_string(), ": ignored a datagram: ", dns::describe(v));
      continue;
    }
    if (dns::parse_header(datagram)->tc()) {
      // RFC 7766 §5: a truncated answer is asked again over TCP.
      ask_over_tcp(ex);
      return;
    }
    accept_answer(ex, datagram);
    return;
  }
}

void PlainDnsTransport::ask_over_tcp(Exchange& ex) {
  ++tcp_retries_;
  // The UDP socket goes now: whatever else arrives on it has nothing to add.
  ex.timer.disarm();
  ex.read_ev.reset();
  ex.fd.reset();
  ex.phase = PlainPhase::tcp_connecting;
  std::optional<dns::StreamMessage> framed = dns::StreamMessage::from(ex.wire);
  if (!framed) {
    finish(ex.id, Cause::bad_response, "query cannot be framed for TCP");
    return;
  }
  const auto prefix = framed->prefix();
  ex.out.assign(prefix.begin(), prefix.end());
  ex.out.insert(ex.out.end(), framed->message().begin(), framed->message().end());
  ex.out_off = 0;

  const int fd = ::socket(server_.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    finish(ex.id, classify_connect_errno(err), log::cat("socket (TCP): ", std::strerror(err)));
    return;
  }
  ex.fd.reset(fd);
  // One small query, written at once; never held back for coalescing.
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ex.read_ev.reset(event_new(base_, fd, EV_READ | EV_PERSIST, &PlainDnsTransport::on_socket, &ex));
  ex.write_ev.reset(event_new(base_, fd, EV_WRITE | EV_PERSIST, &PlainDnsTransport::on_socket, &ex));
  if (!ex.read_ev || !ex.write_ev) {
    finish(ex.id, Cause::local_resource, "event_new failed");
    return;
  }
  if (::connect(fd, server_.sa(), server_.len) != 0 && errno != EINPROGRESS) {
    const int err = errno;
    finish(ex.id, classify_connect_errno(err),
           log::cat("connect to ", server_.to_string(), " (TCP): ", std::strerror(err)));
    return;
  }
  // Writable means the connect finished, one way or the other (SO_ERROR).
  if (event_add(ex.write_ev.get(), nullptr) != 0) {
    finish(ex.id, Cause::local_resource, "event_add failed");
    return;
  }
  ex.timer.arm(opts_.tcp_connect_timeout, [this, &ex]() {
    const ExchangeId id = ex.id;
    try {
      finish(id, Cause::connect_failed,
             log::cat("connect to ", server_.to_string(), " (TCP) timed out after ",
                      std::chrono::duration_cast<std::chrono::milliseconds>(opts_.tcp_connect_timeout).count(), " ms"));
    } catch (...) {
      internal_error(id);
    }
  });
}

void PlainDnsTransport::finish_connect(Exchange& ex) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(ex.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    finish(ex.id, classify_connect_errno(err),
           log::cat("connect to ", server_.to_string(), " (TCP): ", std::strerror(err)));
    return;
  }
  ex.timer.disarm();
  ++stats_.connections_new;
  ex.phase = PlainPhase::tcp_writing;
  write_tcp(ex);
}

void PlainDnsTransport::write_tcp(Exchange& ex) {
  while (ex.out_off < ex.out.size()) {
    const ssize_t n = ::send(ex.fd.get(), ex.out.data() + ex.out_off, ex.out.size() - ex.out_off, MSG_NOSIGNAL);
    if (n < 0) {
      const int err = errno;
      if (would_block(err)) return;  // the write event calls again
      if (err == EINTR) continue;
      finish(ex.id, classify_io_errno(err), log::cat("send to ", server_.to_string(), " (TCP): ", std::strerror(err)));
      return;
    }
    ex.out_off += static_cast<std::size_t>(n);
  }
  event_del(ex.write_ev.get());
  ex.phase = PlainPhase::tcp_reading;
  if (event_add(ex.read_ev.get(), nullptr) != 0) finish(ex.id, Cause::local_resource, "event_add failed");
}

void PlainDnsTransport::read_tcp(Exchange& ex) {
  for (;;) {
    const std::size_t have = ex.in.size();
    const std::size_t want = have < stream_prefix ? stream_prefix : stream_prefix + announced_length(ex.in);
    ex.in.resize(want);
    const ssize_t n = ::recv(ex.fd.get(), ex.in.data() + have, want - have, 0);
    if (n < 0) {
      const int err = errno;
      ex.in.resize(have);
      if (would_block(err)) return;
      if (err == EINTR) continue;
      finish(ex.id, classify_io_errno(err),
             log::cat("recv from ", server_.to_string(), " (TCP): ", std::strerror(err)));
      return;
    }
    if (n == 0) {
      ex.in.resize(have);
      finish(ex.id, Cause::eof,
             log::cat("connection closed by ", server_.to_string(), " after ", have, " octets of the TCP answer"));
      return;
    }
    ex.in.resize(have + static_cast<std::size_t>(n));
    if (ex.in.size() < stream_prefix) continue;
    const std::size_t length = announced_length(ex.in);
    if (length == 0) {
      finish(ex.id, Cause::bad_response, "zero-length frame in the TCP answer");
      return;
    }
    if (ex.in.size() < stream_prefix + length) continue;

    const dns::ByteView answer = dns::ByteView(ex.in).subspan(stream_prefix);
    const dns::ResponseError v = dns::validate_response(ex.wire, answer);
    if (v != dns::ResponseError::none) {
      // The connection is ours alone: a wrong answer on it is the server's
      // fault, not someone else's guess.
      finish(ex.id, Cause::bad_response, log::cat("invalid DNS response over TCP: ", dns::describe(v)));
      return;
    }
    accept_answer(ex, answer);
    return;
  }
}

void PlainDnsTransport::accept_answer(Exchange& ex, dns::ByteView answer) {
  dns::Bytes response(answer.begin(), answer.end());
  dns::set_id(response, ex.client_id);
  finish(ex.id, Cause::ok, {}, std::move(response));
}

void PlainDnsTransport::internal_error(ExchangeId id) noexcept {
  try {
    log::error("dns ", server_.to_string(), ": internal error (out of memory?)");
    finish(id, Cause::local_resource, "internal error (out of memory?)");
  } catch (...) {
    // Even the completion could not be queued: the exchange is dropped, and
    // the pool's attempt budget answers its caller.
    live_.erase(id);
  }
}

void PlainDnsTransport::cancel(ExchangeId id) {
  if (completions_.drop(id)) return;
  live_.erase(id);  // its sockets close, its timer disarms
}

void PlainDnsTransport::close_all() {
  std::vector<ExchangeId> ids;
  ids.reserve(live_.size());
  for (const auto& [id, ex] : live_) ids.push_back(id);
  for (const ExchangeId id : ids) finish(id, Cause::cancelled, "transport closed");
}

TransportStats PlainDnsTransport::stats() const {
  TransportStats st = stats_;
  st.open_sessions = 0;
  for (const auto& [id, ex] : live_) {
    if (ex->fd) ++st.open_sessions;
  }
  return st;
}

void PlainDnsTransport::finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  // Taken out first: its socket, events and timer go when this returns,
  // including when this runs inside one of its own callbacks.
  std::unique_ptr<Exchange> ex = std::move(it->second);
  live_.erase(it);
  completions_.push(id, std::move(ex->done), ExchangeResult{cause, std::move(response), std::move(detail)});
}

}  // namespace nxdns::upstream
