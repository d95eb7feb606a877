#include "upstream/dot_transport.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <utility>

#include "log/log.hpp"
#include "upstream/tls_dot_session.hpp"
#include "upstream/retry_decision.hpp"

namespace nxdns::upstream {

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
    : DotTransport(sched, opts, std::move(tls), WireIdBatch::Fill{}) {
  DotSessionParams params;
  params.address = opts_.address;
  params.tls_name = opts_.tls_name;
  params.dial_timeout = opts_.dial_timeout;
  params.idle_timeout = opts_.idle_timeout;
  params.pacer = &pacer_;
  make_sessions([&](std::size_t index, DotSession::Listener& listener) -> std::unique_ptr<DotSession> {
    return std::make_unique<TlsDotSession>(base, sched_, *tls_, params, listener, index);
  });
}

DotTransport::DotTransport(loop::Scheduler& sched, const DotTransportOptions& opts, const SessionMaker& make,
                           WireIdBatch::Fill ids)
    : DotTransport(sched, opts, std::unique_ptr<TlsClientConfig>{}, std::move(ids)) {
  make_sessions(make);
}

DotTransport::DotTransport(loop::Scheduler& sched, const DotTransportOptions& opts,
                           std::unique_ptr<TlsClientConfig>&& tls, WireIdBatch::Fill ids)
    : sched_(sched),
      opts_(opts),
      tls_(std::move(tls)),
      // The TLS configuration's generator when none is given.
      wire_ids_(ids ? std::move(ids)
                    : WireIdBatch::Fill([cfg = tls_.get()](void* out, std::size_t n) { return cfg->random(out, n); })),
      pacer_(sched),
      completions_(sched, log::cat("dot ", opts.label)),
      stall_timer_(sched),
      headroom_timer_(sched),
      sweep_timer_(sched) {
  opts_.max_sessions = std::clamp<std::size_t>(opts_.max_sessions, 1, slots_per_entry);
  connection_cap_ = opts_.max_sessions;
  close_request_seen_.assign(slots_per_entry, 0);
  dial_stall_seen_.assign(slots_per_entry, 0);
}

void DotTransport::make_sessions(const SessionMaker& make) {
  DotSession::Listener& listener = *this;
  sessions_.reserve(slots_per_entry);
  for (std::size_t i = 0; i < slots_per_entry; ++i) sessions_.push_back(make(i, listener));
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
  st.resent = resent_;
  st.hedged = hedged_;
  st.outage_dials = outage_dials_;
  st.pipelining = verdict();
  st.tls_version = tls_version_;
  if (tls_) st.handshakes = tls_->handshake_stats();
  return st;
}

Transport::ExchangeId DotTransport::start(dns::ByteView query, Completion done) {
  const ExchangeId id = next_id_++;
  Exchange ex;
  ex.done = std::move(done);
  // Prepared once: every copy (placement, hedge, re-send, redial, requeue)
  // differs from it only in its wire ID. Empty when the codec rejects the
  // query; its first copy then fails (enqueue_copy).
  dns::UpstreamQueryOptions qo;
  qo.pad_block = dns::encrypted_query_pad_block;
  qo.tcp_keepalive = true;  // RFC 7828 §3.2.1: ask the server how long it keeps idle sessions
  ex.query = dns::prepare_upstream_query(query, qo);
  ex.client_id = dns::get_id(query);
  auto [it, inserted] = live_.emplace(id, std::move(ex));
  (void)inserted;
  place(id, it->second, *choose_session());
  ensure_stall_check();
  return id;
}

std::size_t DotTransport::allowed_open() const {
  if (connection_cap_ >= opts_.max_sessions) return opts_.max_sessions;
  const auto quiet = sched_.now() - cap_lowered_at_;
  const auto regained = static_cast<std::size_t>(quiet / connection_cap_recovery);
  return std::min(opts_.max_sessions, connection_cap_ + regained);
}

DotSession* DotTransport::choose_session(std::optional<std::size_t> exclude) {
  if (one_at_a_time_ && verdict() != PipeliningVerdict::serial) set_one_at_a_time(false);
  if (outage_.seen()) {
    if (DotSession* s = outage_session(exclude)) return s;
  }
  std::array<SlotView, slots_per_entry> views{};
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) views[i] = SlotView{sessions_[i]->state(), sessions_[i]->load()};
  const auto choice =
      choose_placement(verdict(), std::span<const SlotView>(views.data(), opts_.max_sessions), allowed_open(), exclude);
  if (!choice) return nullptr;
  DotSession& chosen = *sessions_[choice->slot];
  if (choice->dial) chosen.dial();
  // Headroom: dialled on the loop's next turn, still inside the burst's
  // first round trip, taking nothing until placement or a re-send gives it
  // work. Later placements of the same turn see the same open count, so
  // the largest target wins rather than the counts adding up.
  if (choice->headroom > 0) {
    headroom_target_ = std::max(headroom_target_, sessions_open() + choice->headroom);
    if (!defer_headroom()) arm_headroom();
  }
  return &chosen;
}

bool DotTransport::defer_headroom() const {
  // An upstream known to pipeline takes the whole burst on the session
  // being dialled; headroom only has to be up for the next one. Dialled
  // now, its handshake runs beside that session's on both ends (public-key
  // arithmetic on one loop thread each) and the burst waits for both.
  return verdict() == PipeliningVerdict::pipelining && !any_session_ready();
}

void DotTransport::arm_headroom() {
  if (headroom_target_ > 0 && !headroom_timer_.armed()) {
    headroom_timer_.arm(loop::Duration::zero(), [this]() { dial_headroom(); });
  }
}

std::size_t DotTransport::sessions_open() const {
  std::size_t open = 0;
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    const SessionState st = sessions_[i]->state();
    if (st != SessionState::closed && st != SessionState::draining) ++open;
  }
  return open;
}

void DotTransport::dial_headroom() {
  // Re-checked now: the cap may have dropped (edns-tcp-keepalive 0) and
  // sessions may have closed or been dialled by placement meanwhile.
  const std::size_t target = std::min(std::exchange(headroom_target_, 0), allowed_open());
  std::size_t open = sessions_open();
  for (std::size_t i = 0; i < opts_.max_sessions && open < target; ++i) {
    DotSession& s = *sessions_[i];
    if (s.state() != SessionState::closed) continue;
    s.dial();
    ++open;
  }
}

std::optional<std::uint16_t> DotTransport::enqueue_copy(ExchangeId id, Exchange& ex, DotSession& s,
                                                        std::string* why) {
  // A wire ID unique among this session's exchanges, so a response matches
  // exactly one of them (RFC 7858 §3.3); random, so it says nothing about
  // the client's.
  std::optional<std::uint16_t> wire_id;
  for (int tries = 0; tries < 256 && !wire_id; ++tries) {
    const std::optional<std::uint16_t> v = wire_ids_.next();
    if (!v) break;
    if (!s.wire_id_in_use(*v)) wire_id = *v;
  }
  if (!wire_id) {
    *why = "no DNS ID available (random generator failed)";
    return std::nullopt;
  }
  dns::Bytes copy = ex.query;
  if (copy.size() >= dns::header_size) dns::set_id(copy, *wire_id);
  std::optional<dns::StreamMessage> wire = dns::StreamMessage::from(std::move(copy));
  if (!wire) {
    // The listeners forward only queries the codec accepts; anything else
    // here is a caller bug, reported as the closest thing we have.
    *why = "query rejected by the codec before sending";
    return std::nullopt;
  }
  s.enqueue(id, *wire_id, std::move(*wire));
  return wire_id;
}

void DotTransport::place(ExchangeId id, Exchange& ex, DotSession& s) {
  const Copy copy{s.index(), s.state() == SessionState::ready, s.responses()};
  std::string why;
  if (!enqueue_copy(id, ex, s, &why)) {
    finish(id, why.rfind("no DNS ID", 0) == 0 ? Cause::local_resource : Cause::bad_response, std::move(why));
    return;
  }
  // Its only copy: an exchange is placed when it has none, or when the one
  // it had is gone with (or was taken back from) its session.
  ex.copies = Copies(copy);
  ++(copy.reused ? exchanges_reused_ : exchanges_new_);
}

void DotTransport::cancel(ExchangeId id) {
  if (completions_.drop(id)) return;
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  const Copies copies = it->second.copies;
  live_.erase(it);
  for (const Copy& c : copies) {
    DotSession* s = sessions_[c.slot].get();
    if (s->withdraw(id) != DotSession::Withdraw::written) continue;
    // Written, maybe partially: the stream position and whatever answer is on
    // its way are unknown, so the session is not trusted any further. Its
    // other exchanges follow the redial rule as if the server had dropped it.
    SessionEnd end = s->close(Cause::session_closed, "a pipelined exchange on the session was cancelled", true);
    end.exchanges.erase(std::remove_if(end.exchanges.begin(), end.exchanges.end(),
                                       [&](const SessionEnd::Carried& c) { return c.id == id; }),
                        end.exchanges.end());
    settle(*s, std::move(end));
  }
}

void DotTransport::close_all() {
  // Closing means closed: no headroom dial from before may reopen one.
  headroom_timer_.disarm();
  headroom_target_ = 0;
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
  note_life(s);
  hedge_onto(s);
  arm_headroom();  // deferred while this was the only session coming up
}

void DotTransport::hedge_onto(DotSession& ready) {
  // A cold burst before any verdict is spread over parallel dials, because
  // a serial upstream would answer one deep line one query at a time. On the
  // far more common upstream that pipelines, the spread makes the burst
  // wait for the last of its handshakes, and those queue behind each other
  // on both ends (public-key arithmetic on one thread): +0.6 on the
  // first-burst ratio (docs/performance.md). So the first session up also
  // carries a copy of everything still waiting on the others' handshakes:
  // a pipelining upstream answers the whole burst on it one round trip
  // later, a serial one is still answered by the spread. The cost, once per
  // verdict lifetime: the upstream may answer those exchanges twice.
  if (verdict() != PipeliningVerdict::unknown || one_at_a_time_) return;
  std::uint64_t copied = 0;
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    DotSession& o = *sessions_[i];
    if (&o == &ready || o.established() || !o.open()) continue;
    for (const auto& u : o.unanswered()) {
      if (ready.load() >= dot_pipeline_depth) break;
      const auto it = live_.find(u.id);
      if (it == live_.end()) continue;
      Exchange& ex = it->second;
      if (!ex.copies.only_on(o.index()) || ex.spent.resend || ex.spent.hedge) continue;
      const Copy copy{ready.index(), true, ready.responses()};
      std::string why;
      if (!enqueue_copy(u.id, ex, ready, &why)) break;  // no wire ID: the originals still go
      ex.copies.add(copy);
      ex.spent.hedge = true;
      ++copied;
    }
  }
  if (copied == 0) return;
  hedged_ += copied;
  log::debug("dot ", opts_.label, ": session ", ready.index(), " up first; it also carries ", copied,
             " exchange(s) waiting on other handshakes");
}

bool DotTransport::any_session_ready(const DotSession* except) const {
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    if (sessions_[i].get() != except && sessions_[i]->state() == SessionState::ready) return true;
  }
  return false;
}

void DotTransport::note_close_request(DotSession& s) {
  // RFC 7828 §3.3.2: the server wants this connection gone (unbound does so
  // when a client holds many). Redialling at once would only be asked to
  // close again (the field's 620 connections in 5 s): hold at most the
  // connections still open without such a request, at least one.
  std::size_t others = 0;
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    const DotSession& o = *sessions_[i];
    if (&o != &s && o.open() && o.state() != SessionState::draining) ++others;
  }
  const std::size_t cap = std::max<std::size_t>(1, others);
  if (cap < allowed_open()) {
    log::debug("dot ", opts_.label, ": upstream asked session ", s.index(), " to close; holding at most ", cap,
               " session(s)");
  }
  connection_cap_ = std::min(allowed_open(), cap);
  cap_lowered_at_ = sched_.now();
}

void DotTransport::observe_answer(DotSession& s) {
  const PipeliningVerdict before = verdict();
  detector_.observe(s.last_answer_timing());
  if (s.server_keepalive() && *s.server_keepalive() == 0 && close_request_seen_[s.index()] != s.dial_count()) {
    close_request_seen_[s.index()] = s.dial_count();
    note_close_request(s);
  }
  const PipeliningVerdict now = verdict();
  if (now == before || now == PipeliningVerdict::unknown) return;
  log::info("dot ", opts_.label, ": upstream answers pipelined queries ",
            now == PipeliningVerdict::serial ? "one at a time" : "concurrently", " (pipelining verdict: ", describe(now),
            ")");
  if (now != PipeliningVerdict::serial) return;
  const std::uint64_t before_resent = resent_;
  resend_serial_tails();
  if (resent_ > before_resent) {
    log::info("dot ", opts_.label, ": re-sent ", resent_ - before_resent,
              " exchange(s) waiting in line on a serial session to other sessions");
  }
}

void DotTransport::on_session_response(DotSession& s, ExchangeId id, dns::ByteView response) {
  // `response` points into the session's read buffer: copy it before
  // anything below can re-send or close (observe_answer may). Padding was
  // for the wire (RFC 8467); the client asked for none of it. The copy
  // strip_padding makes is the only one per answer.
  dns::Bytes out;
  if (live_.count(id) != 0) out = dns::strip_padding(response);
  // Whatever this answer settles reaches its client through zero-delay
  // hops; a waiting handshake step goes after them (handshake_pacer.hpp).
  pacer_.hold_for_answers();
  // Any answer shows the path works (an outage ends here), and every
  // answer teaches the detector, a dropped duplicate's too.
  note_life(s);
  observe_answer(s);
  const auto it = live_.find(id);
  if (it == live_.end()) return;  // the other copy of a re-sent exchange answered first
  ensure_stall_check();
  dns::set_id(out, it->second.client_id);
  if (it->second.spent.redial) {
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
  if (!dial_warnings_.first_in_window(line, sched_.now())) {
    log::debug("dot ", opts_.label, ": dial failed again: ", line);
    return;
  }
  log::warn("dot ", opts_.label, ": dial failed: ", line);
}

void DotTransport::settle(DotSession& s, SessionEnd&& end) {
  // A fresh dial failed (refused, handshake, certificate, timeout): that is
  // the upstream's answer for every exchange that waited on it, unless
  // another session of this upstream is up to take them (below).
  if (!end.was_established && end.cause != Cause::ok) report_dial_failure(end);
  // With no session established, a failed dial is all there is to judge the
  // path by (outage_watch.hpp).
  if (!end.was_established && end.cause != Cause::ok && end.cause != Cause::cancelled && !any_session_established()) {
    note_failure("a dial failed");
  }
  // Headroom deferred behind a dial that failed is not owed any more: the
  // retries below place (and dial) what is still wanted.
  if (!end.was_established && !any_session_ready(&s)) headroom_target_ = 0;
  if (end.was_established && end.exchanges.empty()) {
    log::debug("dot ", opts_.label, ": session ", s.index(), " closed (", describe(end.cause), ": ", end.detail, ")");
    return;
  }
  const bool others_up = any_session_ready(&s);
  const SessionEnding how{end.was_established, end.cause, end.partial_frame_pending, end.responses};

  std::vector<ExchangeId> redial;
  std::vector<ExchangeId> requeue;
  std::vector<ExchangeId> unwritten;
  for (const auto& c : end.exchanges) {
    const auto it = live_.find(c.id);
    if (it == live_.end()) continue;
    Exchange& ex = it->second;
    // Every copy a session carries is recorded in its exchange's copies.
    const Copy* mine = ex.copies.on(s.index());
    if (!mine) continue;
    const CarriedCopy carried{*mine, c.written, ex.copies.size() > 1, end.culprit && *end.culprit != c.id};
    switch (fate(carried, ex.spent, how, others_up)) {
      case Fate::keep:
        ex.copies.remove(s.index());
        break;
      case Fate::place_again:
        unwritten.push_back(c.id);
        break;
      case Fate::requeue:
        requeue.push_back(c.id);
        break;
      case Fate::redial:
        redial.push_back(c.id);
        break;
      case Fate::final:
        fail_carried(c.id, carried, how, end);
        break;
    }
  }
  for (const ExchangeId id : unwritten) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    ++it->second.spent.unwritten_replacements;
    ++requeued_;
    // Not onto this slot again when its dial just failed.
    DotSession* to = choose_session(end.was_established ? std::nullopt : std::optional<std::size_t>(s.index()));
    place(id, it->second, to ? *to : s);
  }
  if (!unwritten.empty()) {
    log::debug("dot ", opts_.label, ": session ", s.index(), " ended (", describe(end.cause), ") before writing ",
               unwritten.size(), " exchange(s); placed them again");
  }
  for (const ExchangeId id : requeue) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    ++requeued_;
    place(id, it->second, *choose_session());
  }
  if (!requeue.empty()) {
    log::debug("dot ", opts_.label, ": session ", s.index(), " closed by the server after ", end.responses,
               " answer(s) (", describe(end.cause), "); placed ", requeue.size(), " unanswered exchange(s) again");
  }
  if (redial.empty()) return;

  // The one redial: onto a freshly dialed session (this slot, now closed),
  // never onto another reused one that may be just as stale.
  log::debug("dot ", opts_.label, ": reused session ", s.index(), " ended (", describe(end.cause), ": ", end.detail,
             "); redialing ", redial.size(), " exchange(s)");
  s.dial();
  for (const ExchangeId id : redial) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    it->second.spent.redial = true;
    ++redials_;
    place(id, it->second, s);
  }
}

void DotTransport::fail_carried(ExchangeId id, const CarriedCopy& carried, const SessionEnding& how,
                                const SessionEnd& end) {
  // A failed dial is the upstream's answer as it stands.
  if (!how.was_established) {
    finish(id, end.cause, end.detail);
    return;
  }
  const Cause cause = failure_cause(carried, how);
  std::string detail = carried.sibling_culprit
                           ? log::cat("session closed after a sibling's ", describe(end.cause), ": ", end.detail)
                           : end.detail;
  log::debug("dot ", opts_.label, ": exchange failed (", describe(cause), ": ", detail, ")");
  finish(id, cause, std::move(detail));
}

void DotTransport::finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  Completion done = std::move(it->second.done);
  // A re-sent exchange's other copy: taken back if it is still queued; if
  // written, its answer will find no exchange and is dropped.
  const Copies copies = it->second.copies;
  live_.erase(it);
  for (const Copy& c : copies) (void)sessions_[c.slot]->withdraw(id);
  completions_.push(id, std::move(done), ExchangeResult{cause, std::move(response), std::move(detail)});
}

}  // namespace nxdns::upstream
