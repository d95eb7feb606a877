// DotTransport through a WAN outage (outage_watch.hpp): failures with no
// sign of life between them make the outage seen; while it is, the sessions
// from before it and the dials that had their chance are suspect, and the
// next exchanges go on a dial made for them at once, taking along what waits
// on the suspect ones. The first session that shows life again ends it, and
// a fresh one retires the connections that showed none since it began.
// Placement, the exchange lifecycle and session ends are in
// dot_transport.cpp; stalls and re-sends in dot_transport_resend.cpp.
#include "upstream/dot_transport.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <span>
#include <utility>

#include "log/log.hpp"
#include "upstream/stall_deadline.hpp"

namespace nxdns::upstream {

namespace {

bool dialling(const DotSession& s) {
  return s.state() == SessionState::connecting || s.state() == SessionState::handshaking;
}

long long ms(loop::Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

}  // namespace

SlotTrust DotTransport::trust(const DotSession& s) const {
  return slot_trust(SessionLife{s.state(), s.dialed_at(), s.alive_at()}, outage_.since(), sched_.now(),
                    detector_.latency_floor());
}

bool DotTransport::any_session_established() const {
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    if (sessions_[i]->established()) return true;
  }
  return false;
}

void DotTransport::note_failure(const char* what) {
  const bool before = outage_.seen();
  outage_.failure(sched_.now());
  if (before || !outage_.seen()) return;
  // Debug: two slow answers from a resolver look the same for a moment, and
  // a real outage is reported by the pool's failure episode anyway.
  log::debug("dot ", opts_.label, ": no sign of life from the upstream for ", ms(sched_.now() - outage_.since()),
             " ms (", what, "); its connections from before are not trusted, new exchanges go on fresh dials");
}

void DotTransport::note_life(DotSession& s) {
  const loop::TimePoint since = outage_.since();
  if (outage_.life()) end_outage(s, since);
}

void DotTransport::end_outage(DotSession& proof, loop::TimePoint since) {
  last_outage_dial_.reset();
  if (proof.dialed_at() < since) {
    // A connection from before the outage answered: the path came back as
    // it was (or was only slow), and its siblings may well work too.
    log::debug("dot ", opts_.label, ": upstream reachable again after ", ms(sched_.now() - since),
               " ms, on a connection from before");
    return;
  }
  // A connection dialled since answered: the ones that showed no life since
  // the outage began are on the old path (a router back with a new address
  // black-holes them for good), and older dials went into it
  // (retire_after_outage()).
  // All of them close first, then what they carried is placed again: a
  // placement in between could pick one still waiting to be closed.
  const loop::TimePoint proof_dialed = proof.dialed_at();
  std::vector<std::pair<DotSession*, SessionEnd>> ended;
  std::vector<ExchangeId> orphans;
  std::size_t retired = 0;
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    DotSession& o = *sessions_[i];
    if (&o == &proof || !retire_after_outage(SessionLife{o.state(), o.dialed_at(), o.alive_at()}, since, proof_dialed)) {
      continue;
    }
    ++retired;
    if (o.established()) {
      ended.emplace_back(&o, o.close(Cause::session_closed, "no sign of life since the upstream became unreachable", true));
    } else {
      const std::vector<ExchangeId> left = release_dial(o);
      orphans.insert(orphans.end(), left.begin(), left.end());
    }
  }
  // Established ones: their exchanges follow the usual rules (a redial, the
  // copy elsewhere carrying on).
  for (auto& [o, end] : ended) settle(*o, std::move(end));
  for (const ExchangeId id : orphans) {
    const auto it = live_.find(id);
    if (it != live_.end()) rehome_or_fail(id, it->second, *choose_session());
  }
  const std::string line = log::cat("dot ", opts_.label, ": upstream reachable again after ", ms(sched_.now() - since),
                                     " ms; closed ", retired, " connection(s) from before");
  if (retired > 0) {
    log::info(line);
  } else {
    log::debug(line);
  }
}

DotSession* DotTransport::outage_session(std::optional<std::size_t> exclude) {
  std::array<bool, slots_per_entry> carries_live{};
  for (const auto& [id, ex] : live_) {
    for (const Copy& c : ex.copies) carries_live[c.slot] = true;
  }
  std::array<OutageSlotView, slots_per_entry> views{};
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    const DotSession& s = *sessions_[i];
    views[i] = OutageSlotView{s.state(), s.load(), trust(s), s.dialed_at(), carries_live[i]};
  }
  const std::size_t depth = verdict() == PipeliningVerdict::pipelining ? dot_pipeline_depth : dot_spread_depth;
  const auto choice = outage_placement(std::span<const OutageSlotView>(views.data(), opts_.max_sessions),
                                       allowed_open(), depth, exclude);
  if (!choice) return nullptr;
  DotSession& s = *sessions_[choice->slot];
  if (!choice->dial) return &s;
  std::vector<ExchangeId> orphans;
  if (choice->replace) {
    if (s.established()) {
      // Carries nothing anyone waits for (outage_placement).
      (void)s.close(Cause::ok, "not trusted after an outage", true);
    } else {
      orphans = release_dial(s);
    }
  }
  s.dial();
  ++outage_dials_;
  last_outage_dial_ = sched_.now();
  log::debug("dot ", opts_.label, ": upstream unreachable; session ", s.index(), " dialled fresh for the next exchanges");
  for (const ExchangeId id : orphans) {
    const auto it = live_.find(id);
    if (it != live_.end()) rehome_or_fail(id, it->second, s);
  }
  schedule_sweep(s);
  return &s;
}

void DotTransport::schedule_sweep(DotSession& fresh) {
  // On the loop's next turn, never inside placement: the exchange being
  // placed (or re-sent) must not be swept onto the dial beside its own copy.
  // One turn costs nothing: the dial's SYN is out for a round trip anyway.
  sweep_slot_ = fresh.index();
  sweep_dial_ = fresh.dial_count();
  if (sweep_timer_.armed()) return;
  sweep_timer_.arm(loop::Duration::zero(), [this]() {
    try {
      DotSession& s = *sessions_[sweep_slot_];
      if (outage_.seen() && s.open() && s.dial_count() == sweep_dial_) sweep_onto(s);
    } catch (const std::exception& e) {
      log::error("dot ", opts_.label, ": outage sweep: ", e.what());
    }
  });
}

std::vector<Transport::ExchangeId> DotTransport::release_dial(DotSession& s) {
  // Never established: nothing it carried was written, so every copy on it
  // simply moves (the server never saw it).
  SessionEnd end = s.close(Cause::cancelled, "superseded by a fresh dial", false);
  std::vector<ExchangeId> orphans;
  for (const auto& c : end.exchanges) {
    const auto it = live_.find(c.id);
    if (it == live_.end()) continue;
    Copies& copies = it->second.copies;
    if (!copies.on(s.index())) continue;
    // Its other copy, if any, carries it on alone.
    copies.remove(s.index());
    if (copies.empty()) orphans.push_back(c.id);
  }
  return orphans;
}

std::optional<Copy> DotTransport::rehome(ExchangeId id, Exchange& ex, DotSession& to) {
  std::string why;
  if (!enqueue_copy(id, ex, to, &why)) return std::nullopt;
  return Copy{to.index(), to.state() == SessionState::ready, to.responses()};
}

void DotTransport::rehome_or_fail(ExchangeId id, Exchange& ex, DotSession& to) {
  // Its last copy is gone with a released dial: without a new one nothing
  // would ever complete it.
  if (const std::optional<Copy> copy = rehome(id, ex, to)) {
    ex.copies.add(*copy);
  } else {
    finish(id, Cause::local_resource, "no DNS ID available (random generator failed)");
  }
}

bool DotTransport::rescuable(const Exchange& ex) const {
  // An exchange between two homes (being placed, or settled after its
  // session ended) is its caller's business.
  if (ex.copies.empty()) return false;
  for (const Copy& c : ex.copies) {
    if (!sessions_[c.slot]->open()) return false;
  }
  bool good_copy = false;
  for (const Copy& c : ex.copies) {
    const DotSession& s = *sessions_[c.slot];
    if (trust(s) != SlotTrust::suspect) good_copy = true;
    else if (dialling(s)) return true;  // never written there: it can move
  }
  return !good_copy && ex.copies.size() == 1;
}

void DotTransport::sweep_onto(DotSession& fresh) {
  const std::size_t depth = verdict() == PipeliningVerdict::pipelining ? dot_pipeline_depth : dot_spread_depth;
  std::vector<ExchangeId> ids;
  ids.reserve(live_.size());
  for (const auto& [id, ex] : live_) {
    if (rescuable(ex)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());  // oldest first
  for (const ExchangeId id : ids) {
    if (fresh.load() >= depth) break;
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    Exchange& ex = it->second;
    if (ex.copies.on(fresh.index())) continue;
    // A copy waiting on a suspect dial moves: it was never written.
    bool moved = false;
    for (std::size_t k = 0; k < ex.copies.size(); ++k) {
      DotSession& c = *sessions_[ex.copies[k].slot];
      if (!dialling(c) || trust(c) != SlotTrust::suspect) continue;
      if (c.withdraw(id) != DotSession::Withdraw::removed) continue;
      moved = true;
      if (const std::optional<Copy> copy = rehome(id, ex, fresh)) {
        ex.copies[k] = *copy;
        break;
      }
      // No wire ID: the exchange keeps its other copy, if it has one.
      ex.copies.remove_at(k);
      if (ex.copies.empty()) finish(id, Cause::local_resource, "no DNS ID available (random generator failed)");
      break;
    }
    if (moved) continue;
    // Written on a suspect session (or nowhere to move): a copy here as
    // well, not its re-send, so at most two copies on the wire at once.
    if (ex.copies.size() < Copies::max) {
      if (const std::optional<Copy> copy = rehome(id, ex, fresh)) ex.copies.add(*copy);
    }
  }
}

void DotTransport::check_outage() {
  const loop::TimePoint now = sched_.now();
  const auto floor = detector_.latency_floor();
  // With nothing established, a dial that keeps exchanges waiting past the
  // silent deadline is the path's failure to show.
  if (!any_session_established()) {
    for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
      const DotSession& s = *sessions_[i];
      if (!dialling(s) || s.load() == 0 || dial_stall_seen_[i] == s.dial_count()) continue;
      const auto stall = stall_deadline(StallInputs{s.dialed_at(), std::nullopt, std::nullopt, floor});
      if (!stall || stall->at > now) continue;
      dial_stall_seen_[i] = s.dial_count();
      note_failure("a dial stalled");
    }
  }
  if (!outage_.seen()) return;
  // Exchanges still waiting on suspect sessions get a fresh dial (at most
  // one per interval; placement makes one for every new exchange anyway).
  if (last_outage_dial_ && now - *last_outage_dial_ < outage_redial_interval) return;
  const bool waiting = std::any_of(live_.begin(), live_.end(), [&](const auto& kv) { return rescuable(kv.second); });
  if (!waiting) return;
  // A dial made here takes them (schedule_sweep()); so does a fresh session
  // made since by placement.
  if (DotSession* s = outage_session(std::nullopt)) schedule_sweep(*s);
}

}  // namespace nxdns::upstream
