#include "server/tcp_connection.hpp"

#include <netinet/in.h>

#include <cstring>

#include <event2/buffer.h>

#include <algorithm>
#include <array>

#include "log/log.hpp"
#include "dns/stream_message.hpp"
#include "server/tcp_framing.hpp"

namespace nxdns::server {

TcpConnection::TcpConnection(event_base* base, loop::Scheduler& sched, loop::UniqueFd fd, query::Engine& engine,
                             ListenerState& state, const ClientKey& client, bool outside_access, Closed on_closed)
    : sched_(sched),
      engine_(engine),
      state_(state),
      on_closed_(std::move(on_closed)),
      client_(client),
      outside_access_(outside_access),
      refusing_(outside_access),
      idle_(sched),
      closing_(sched) {
  bev_.reset(bufferevent_socket_new(base, fd.get(), BEV_OPT_CLOSE_ON_FREE));
  if (!bev_) return;  // fd closes with `fd`
  fd.release();
  bufferevent_setcb(
      bev_.get(), [](bufferevent*, void* a) { static_cast<TcpConnection*>(a)->on_read(); },
      [](bufferevent*, void* a) { static_cast<TcpConnection*>(a)->on_write(); },
      [](bufferevent*, short what, void* a) { static_cast<TcpConnection*>(a)->on_event(what); }, this);
  // The write timeout only runs while output is pending: a client that stops
  // reading its answers is cut off, one that is merely quiet is not.
  const auto ws = std::chrono::duration_cast<std::chrono::seconds>(tcp_write_stall_timeout).count();
  timeval wt{static_cast<time_t>(ws), 0};
  bufferevent_set_timeouts(bev_.get(), nullptr, &wt);
  bufferevent_enable(bev_.get(), EV_READ | EV_WRITE);
  arm_idle();
}

TcpConnection::~TcpConnection() {
  for (auto id : pending_) engine_.abandon(id);
}

void TcpConnection::arm_idle() {
  // Idle means: no query outstanding and no complete frame for the timeout.
  // Dribbling partial frames does not count as activity (slowloris).
  idle_.arm(tcp_idle_timeout, [this] {
    if (!pending_.empty()) return;
    state_.reject(Rejection::tcp_idle_timeout);
    close("idle timeout");
  });
}

void TcpConnection::on_read() {
  if (!bev_) return;
  evbuffer* in = bufferevent_get_input(bev_.get());
  while (!reading_stopped_ && pending_.size() < max_pending_per_connection) {
    // The scan sees at most one maximal frame, however much the client has
    // queued behind it: in place when libevent holds it in one chunk (the
    // usual case), else copied into a bounded scratch buffer (no allocation).
    std::array<std::uint8_t, tcp_length_prefix + max_tcp_query_frame> scratch;
    const std::size_t avail = std::min(evbuffer_get_length(in), scratch.size());
    evbuffer_iovec first{};
    const std::uint8_t* head = scratch.data();
    if (avail > 0 && evbuffer_peek(in, static_cast<ev_ssize_t>(avail), nullptr, &first, 1) == 1 &&
        first.iov_len >= avail) {
      head = static_cast<const std::uint8_t*>(first.iov_base);
    } else {
      evbuffer_copyout(in, scratch.data(), avail);
    }
    const FrameScan scan = next_frame(dns::ByteView(head, avail), max_tcp_query_frame);
    if (scan.kind == FrameScan::Kind::need_more) break;
    if (scan.kind == FrameScan::Kind::zero_length) {
      state_.reject(Rejection::tcp_zero_length_frame);
      close("zero-length frame");
      return;
    }
    if (scan.kind == FrameScan::Kind::too_large) {
      state_.reject(Rejection::tcp_frame_too_large);
      close("frame too large");
      return;
    }
    dns::Bytes frame(head + scan.offset, head + scan.offset + scan.length);
    evbuffer_drain(in, scan.consumed());
    if (const std::optional<Rejection> why = refusal()) {
      state_.reject(*why);
      dns::Bytes refused = engine_.refuse(frame, query::Protocol::tcp);
      if (refused.empty()) {
        close("unreadable frame");
        return;
      }
      write_frame(std::move(refused));
      if (!bev_) return;
      if (*why == Rejection::tcp_access_refused) {
        // The client has nothing more to gain here, and a connection kept
        // open (each REFUSED re-arming the idle timer) would hold a place
        // for as long as it keeps asking.
        finish("refused by access_control");
        return;
      }
      arm_idle();
      continue;
    }
    // The id is known only after submit returns; the reply looks it up.
    auto id_box = std::make_shared<query::Engine::QueryId>(0);
    // The client's address, for the blocking groups.
    sockaddr_storage peer{};
    if (client_.family == AF_INET6) {
      auto* v6 = reinterpret_cast<sockaddr_in6*>(&peer);
      v6->sin6_family = AF_INET6;
      std::memcpy(&v6->sin6_addr, client_.addr.data(), 16);
    } else {
      auto* v4 = reinterpret_cast<sockaddr_in*>(&peer);
      v4->sin_family = AF_INET;
      std::memcpy(&v4->sin_addr, client_.addr.data(), 4);
    }
    auto res = engine_.submit(
        frame, query::Protocol::tcp,
        [this, life = life_.watch(), id_box](dns::Bytes&& reply) {
          if (!life.alive()) return;
          answer(*id_box, std::move(reply));
        },
        query::Engine::HitDelivery::from_loop, reinterpret_cast<const sockaddr*>(&peer));
    switch (res.kind) {
      case query::Engine::Admission::forwarded:
        *id_box = res.id;
        pending_.insert(res.id);
        idle_.disarm();
        break;
      case query::Engine::Admission::answered:
        write_frame(std::move(res.reply));
        arm_idle();
        break;
      case query::Engine::Admission::dropped:
        // Not even a header: the stream cannot be trusted to be DNS.
        close("unreadable frame");
        return;
    }
    if (!bev_) return;
  }
  update_reading();
}

std::optional<Rejection> TcpConnection::refusal() {
  if (refusing_) return Rejection::tcp_access_refused;
  switch (state_.clients.admit_tcp_query(client_, sched_.now())) {
    case ClientVerdict::admit: return std::nullopt;
    case ClientVerdict::over_rate: return Rejection::tcp_client_rate;
    case ClientVerdict::over_share: return Rejection::tcp_client_share;
    case ClientVerdict::table_full: return Rejection::client_table_full;
  }
  return std::nullopt;
}

void TcpConnection::answer(query::Engine::QueryId id, dns::Bytes&& reply) {
  pending_.erase(id);
  if (!bev_) return;
  write_frame(std::move(reply));
  if (!bev_) return;
  if (pending_.empty()) arm_idle();
  update_reading();
  // More frames may already be buffered behind the pipelining limit.
  if (!reading_stopped_ && pending_.size() < max_pending_per_connection &&
      evbuffer_get_length(bufferevent_get_input(bev_.get())) >= 2)
    on_read();
}

void TcpConnection::write_frame(dns::Bytes&& reply) {
  if (!bev_) return;
  const std::optional<dns::StreamMessage> framed = dns::StreamMessage::from(std::move(reply));
  if (!framed) {
    // The engine never hands over a TCP reply the prefix cannot state
    // (dns::answer_for_client); should one come, the client is told by the
    // close instead of waiting for an answer that will never be framed.
    state_.reject(Rejection::send_failed);
    close("reply too large for a TCP frame");
    return;
  }
  evbuffer* out = bufferevent_get_output(bev_.get());
  const auto len = framed->prefix();
  if (evbuffer_add(out, len.data(), len.size()) != 0 ||
      evbuffer_add(out, framed->message().data(), framed->size()) != 0) {
    state_.reject(Rejection::send_failed);
    close("write failed");
    return;
  }
  if (evbuffer_get_length(out) > max_tcp_output_backlog) {
    state_.reject(Rejection::tcp_write_stalled);
    close("client does not read its answers");
  }
}

void TcpConnection::update_reading() {
  if (!bev_) return;
  // Back-pressure: stop reading while the client has the maximum number of
  // queries outstanding or has not taken its answers.
  const bool want = !reading_stopped_ && !peer_done_writing_ && pending_.size() < max_pending_per_connection &&
                    evbuffer_get_length(bufferevent_get_output(bev_.get())) <= max_tcp_output_backlog / 2;
  if (want)
    bufferevent_enable(bev_.get(), EV_READ);
  else
    bufferevent_disable(bev_.get(), EV_READ);
}

void TcpConnection::on_write() {
  if (!bev_) return;
  if (draining_ && pending_.empty()) {
    close("drained");
    return;
  }
  if (peer_done_writing_) {
    close_when_answered("client closed; every answer sent");
    return;
  }
  update_reading();
}

void TcpConnection::on_event(short what) {
  if (what & BEV_EVENT_TIMEOUT) {
    state_.reject(Rejection::tcp_write_stalled);
    close("write stalled");
    return;
  }
  if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
    // EOF is a half-close: the client sent its last query (shutdown
    // SHUT_WR) and still reads. RFC 7766 §6.2.4 spirit: answer
    // everything already received, then close. libevent has stopped reading.
    peer_done_writing_ = true;
    on_read();  // frames still buffered behind the pipelining limit
    if (bev_) close_when_answered("client closed");
    return;
  }
  // A reset or other error: the client will never read an answer.
  close("socket error");
}

void TcpConnection::close_when_answered(const char* why) {
  if (!bev_) return;
  // A partial frame left in the input can never complete: ignore it.
  if (pending_.empty() && !has_complete_frame() && evbuffer_get_length(bufferevent_get_output(bev_.get())) == 0)
    close(why);
}

bool TcpConnection::has_complete_frame() const {
  evbuffer* in = bufferevent_get_input(bev_.get());
  const std::size_t have = evbuffer_get_length(in);
  if (have < tcp_length_prefix) return false;
  std::uint8_t len[tcp_length_prefix];
  evbuffer_copyout(in, len, sizeof len);
  return have >= tcp_length_prefix + ((std::size_t{len[0]} << 8) | len[1]);
}

void TcpConnection::finish(const char* why) {
  reading_stopped_ = true;
  draining_ = true;
  if (!bev_) return;
  bufferevent_disable(bev_.get(), EV_READ);
  // Otherwise on_write closes it once the last answer is out.
  if (pending_.empty() && evbuffer_get_length(bufferevent_get_output(bev_.get())) == 0) close(why);
}

void TcpConnection::close(const char* why) {
  if (!bev_) return;
  log::debug("tcp: closing connection: ", why);
  bev_.reset();
  idle_.disarm();
  life_.revoke();
  for (auto id : pending_) engine_.abandon(id);
  pending_.clear();
  // Hand back to the owner from the loop, never from inside our own callback.
  closing_.arm(loop::Duration::zero(), [this] { on_closed_(this); });
}

}  // namespace nxdns::server
