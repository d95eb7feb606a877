#include "upstream/dot_transport.hpp"

#include <algorithm>
#include <exception>

#include "log/log.hpp"
#include "upstream/retry_decision.hpp"

namespace nxdns::upstream {

namespace {

// RFC 8467 §4.1: pad queries to a multiple of 128 octets so that their size
// says little about the name asked.
constexpr std::size_t query_pad_block = 128;
// The same dial failure repeated within this window logs at debug: one warn
// per distinct problem, not one per slot of a burst.
constexpr auto warn_repeat_window = std::chrono::seconds(60);

}  // namespace

std::unique_ptr<DotTransport> DotTransport::create(event_base* base, loop::Scheduler& sched,
                                                   const DotTransportOptions& opts, std::string* error) {
  std::string why;
  auto tls = TlsClientConfig::create(opts.ca_file, &why);
  if (!tls) {
    if (error) *error = log::cat("upstream ", opts.label, ": ", why);
    return nullptr;
  }
  return std::make_unique<DotTransport>(base, sched, opts, std::move(tls));
}

DotTransport::DotTransport(event_base* base, loop::Scheduler& sched, const DotTransportOptions& opts,
                           std::unique_ptr<TlsClientConfig> tls)
    : base_(base),
      sched_(sched),
      opts_(opts),
      tls_(std::move(tls)),
      completions_(sched, log::cat("dot ", opts.label)) {
  opts_.max_sessions = std::clamp<std::size_t>(opts_.max_sessions, 1, slots_per_entry);
  DotSessionParams params;
  params.address = opts_.address;
  params.tls_name = opts_.tls_name;
  params.dial_timeout = opts_.dial_timeout;
  params.idle_timeout = opts_.idle_timeout;
  DotSession::Listener& listener = *this;
  sessions_.reserve(slots_per_entry);
  for (std::size_t i = 0; i < slots_per_entry; ++i) {
    sessions_.push_back(std::make_unique<DotSession>(base_, sched_, *tls_, params, listener, i));
  }
}

DotTransport::~DotTransport() {
  // Sessions close quietly (no listener calls); completions still waiting
  // are dropped: a destroyed transport calls no one back.
  completions_.clear();
  for (auto& s : sessions_) {
    if (s->open()) (void)s->close(Cause::cancelled, {}, true);
  }
}

TransportStats DotTransport::stats() const {
  TransportStats st;
  for (const auto& s : sessions_) {
    if (s->established()) ++st.open_sessions;
  }
  st.connections_new = connections_new_;
  st.exchanges_new = exchanges_new_;
  st.exchanges_reused = exchanges_reused_;
  st.redials = redials_;
  st.reuse_recoveries = reuse_recoveries_;
  st.requeued = requeued_;
  st.tls_version = tls_version_;
  st.handshakes = tls_->handshake_stats();
  return st;
}

Transport::ExchangeId DotTransport::start(dns::ByteView query, Completion done) {
  const ExchangeId id = next_id_++;
  Exchange ex;
  ex.done = std::move(done);
  ex.query.assign(query.begin(), query.end());
  ex.client_id = dns::get_id(query);
  auto [it, inserted] = live_.emplace(id, std::move(ex));
  (void)inserted;
  place(id, it->second, choose_session());
  return id;
}

DotSession& DotTransport::choose_session() {
  DotSession* best_ready = nullptr;
  DotSession* best_open = nullptr;
  DotSession* free_slot = nullptr;
  DotSession* best_draining = nullptr;
  bool all_loaded = true;
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    DotSession& s = *sessions_[i];
    const std::size_t load = s.load();
    switch (s.state()) {
      case SessionState::closed:
        if (!free_slot) free_slot = &s;
        break;
      case SessionState::draining:
        if (!best_draining || load < best_draining->load()) best_draining = &s;
        break;
      case SessionState::connecting:
      case SessionState::handshaking:
      case SessionState::ready: {
        const bool ready = s.state() == SessionState::ready;
        if (load < dot_spread_depth) all_loaded = false;
        if (ready && (!best_ready || load < best_ready->load())) best_ready = &s;
        // Least loaded overall; on a tie an established session wins (no
        // handshake to wait for).
        if (!best_open || load < best_open->load() ||
            (load == best_open->load() && ready && best_open->state() != SessionState::ready)) {
          best_open = &s;
        }
        break;
      }
    }
  }
  // Cheapest: an established session with spare depth.
  if (best_ready && best_ready->load() < dot_spread_depth) return *best_ready;
  // Everything open is loaded (or nothing is open): dial a free slot in
  // parallel. Being the least loaded (empty), it takes this exchange and
  // queues it until its handshake completes.
  if (all_loaded && free_slot) {
    free_slot->dial();
    return *free_slot;
  }
  if (best_open) return *best_open;
  // Every allowed slot is draining: it still answers what it is given.
  return *best_draining;
}

void DotTransport::place(ExchangeId id, Exchange& ex, DotSession& s) {
  // A wire ID unique among this session's exchanges, so a response matches
  // exactly one of them (RFC 7858 §3.3); random, so it says nothing about
  // the client's.
  std::optional<std::uint16_t> wire_id;
  for (int tries = 0; tries < 256 && !wire_id; ++tries) {
    std::uint16_t v = 0;
    if (!tls_->random(&v, sizeof v)) break;
    if (!s.wire_id_in_use(v)) wire_id = v;
  }
  if (!wire_id) {
    finish(id, Cause::local_resource, "no DNS ID available (random generator failed)");
    return;
  }
  dns::UpstreamQueryOptions qo;
  qo.pad_block = query_pad_block;
  qo.tcp_keepalive = true;  // RFC 7828 §3.2.1: ask the server how long it keeps idle sessions
  qo.id = *wire_id;
  std::optional<dns::StreamMessage> wire = dns::StreamMessage::from(dns::prepare_upstream_query(ex.query, qo));
  if (!wire) {
    // The listeners forward only queries the codec accepts; anything else
    // here is a caller bug, reported as the closest thing we have.
    finish(id, Cause::bad_response, "query rejected by the codec before sending");
    return;
  }
  ex.session = &s;
  ex.reused = s.state() == SessionState::ready;
  ex.answers_before = s.responses();
  ++(ex.reused ? exchanges_reused_ : exchanges_new_);
  s.enqueue(id, *wire_id, std::move(*wire));
}

void DotTransport::cancel(ExchangeId id) {
  if (completions_.drop(id)) return;
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  DotSession* s = it->second.session;
  live_.erase(it);
  if (!s) return;
  if (s->withdraw(id) != DotSession::Withdraw::written) return;
  // Written, maybe partially: the stream position and whatever answer is on
  // its way are unknown, so the session is not trusted any further. Its
  // other exchanges follow the redial rule as if the server had dropped it.
  SessionEnd end = s->close(Cause::session_closed, "a pipelined exchange on the session was cancelled", true);
  end.exchanges.erase(std::remove_if(end.exchanges.begin(), end.exchanges.end(),
                                     [&](const SessionEnd::Carried& c) { return c.id == id; }),
                      end.exchanges.end());
  settle(*s, std::move(end));
}

void DotTransport::close_all() {
  for (auto& s : sessions_) {
    if (!s->open()) continue;
    SessionEnd end = s->close(Cause::cancelled, "transport closed", true);
    for (const auto& c : end.exchanges) finish(c.id, Cause::cancelled, "transport closed");
  }
}

void DotTransport::on_session_ready(DotSession& s) {
  ++connections_new_;
  tls_version_ = s.tls_version();
  log::debug("dot ", opts_.label, ": session ", s.index(), " established (", tls_version_, ")");
}

void DotTransport::on_session_response(DotSession&, ExchangeId id, dns::Bytes&& response) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  dns::set_id(response, it->second.client_id);
  // Padding was for the wire (RFC 8467); the client asked for none of it.
  dns::Bytes out = dns::strip_padding(response);
  if (it->second.redialed) {
    // A stale reused session, recovered: normal churn (servers close idle
    // connections at will), visible as a counter, never as a failure.
    ++reuse_recoveries_;
    log::debug("dot ", opts_.label, ": exchange recovered by its one redial");
  }
  finish(id, Cause::ok, {}, std::move(out));
}

void DotTransport::on_session_closed(DotSession& s, SessionEnd&& end) { settle(s, std::move(end)); }

void DotTransport::report_dial_failure(const SessionEnd& end) {
  const std::string line = log::cat(describe(end.cause), ": ", end.detail);
  const auto now = sched_.now();
  if (line == last_warn_ && now - last_warn_at_ < warn_repeat_window) {
    log::debug("dot ", opts_.label, ": dial failed again: ", line);
    return;
  }
  last_warn_ = line;
  last_warn_at_ = now;
  log::warn("dot ", opts_.label, ": dial failed: ", line);
}

void DotTransport::settle(DotSession& s, SessionEnd&& end) {
  if (!end.was_established) {
    // A fresh dial failed (refused, handshake, certificate, timeout): that is
    // the upstream's answer for every exchange that waited on it.
    if (end.cause != Cause::ok) report_dial_failure(end);
    for (const auto& c : end.exchanges) finish(c.id, end.cause, end.detail);
    return;
  }
  if (end.exchanges.empty()) {
    log::debug("dot ", opts_.label, ": session ", s.index(), " closed (", describe(end.cause), ": ", end.detail, ")");
    return;
  }

  std::vector<ExchangeId> retry;
  std::vector<ExchangeId> requeue;
  for (const auto& c : end.exchanges) {
    const auto it = live_.find(c.id);
    if (it == live_.end()) continue;
    Cause cause = end.cause;
    std::string detail = end.detail;
    if (end.culprit && *end.culprit != c.id) {
      cause = Cause::session_closed;
      detail = log::cat("session closed after a sibling's ", describe(end.cause), ": ", end.detail);
    }
    if (cause == Cause::ok) cause = Cause::session_closed;  // closed on purpose while still carrying it
    // The connection answered others after this exchange was placed on it,
    // then ended (server close, reset, torn down with a sibling) with this
    // one unanswered and no byte of any answer pending: typically a server
    // that limits queries per connection (RFC 7766 §6.2.4: clients SHOULD
    // retry unanswered queries). The one-redial rule's `reused` test cannot
    // see this (with pipelining, exchanges ride on connections they did not
    // find open), yet the connection proved the upstream works: the exchange
    // is placed again without spending its redial. It cannot loop: each
    // re-placement was paid for by an answer on the connection it left.
    if (end.responses > it->second.answers_before && !end.partial_frame_pending && is_connection_lifecycle(cause)) {
      requeue.push_back(c.id);
      continue;
    }
    const RetryDecision d = it->second.redialed ? RetryDecision::final
                                                : retry_decision(it->second.reused, end.partial_frame_pending, cause);
    if (d == RetryDecision::retry) {
      retry.push_back(c.id);
    } else {
      log::debug("dot ", opts_.label, ": exchange failed (", describe(cause), ": ", detail, ")");
      finish(c.id, cause, std::move(detail));
    }
  }
  for (const ExchangeId id : requeue) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    ++requeued_;
    place(id, it->second, choose_session());
  }
  if (!requeue.empty()) {
    log::debug("dot ", opts_.label, ": session ", s.index(), " closed by the server after ", end.responses,
               " answer(s) (", describe(end.cause), "); placed ", requeue.size(), " unanswered exchange(s) again");
  }
  if (retry.empty()) return;

  // The one redial: onto a freshly dialed session (this slot, now closed),
  // never onto another reused one that may be just as stale.
  log::debug("dot ", opts_.label, ": reused session ", s.index(), " ended (", describe(end.cause), ": ", end.detail,
             "); redialing ", retry.size(), " exchange(s)");
  s.dial();
  for (const ExchangeId id : retry) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    it->second.redialed = true;
    ++redials_;
    place(id, it->second, s);
  }
}

void DotTransport::finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  Completion done = std::move(it->second.done);
  live_.erase(it);
  completions_.push(id, std::move(done), ExchangeResult{cause, std::move(response), std::move(detail)});
}

}  // namespace nxdns::upstream
