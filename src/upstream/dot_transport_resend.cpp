// DotTransport's second chances: the unanswered tail of a session whose
// upstream proved serial, and exchanges a session left unanswered while it
// answered others or went silent (a stall), are re-sent once on other
// sessions, at most one duplicate per exchange (docs/architecture.md,
// "Re-sends").
// Placement, the exchange lifecycle and session ends are in
// dot_transport.cpp.
#include "upstream/dot_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <vector>

#include "log/log.hpp"
#include "upstream/stall_deadline.hpp"

namespace nxdns::upstream {

void DotTransport::resend_serial_tails() {
  // The upstream proved serial while sessions carry deep lines placed when
  // it looked pipelining (or before anything was known): the first
  // dot_spread_depth of each line are next at the server; the rest would
  // wait one service time each behind them. Their queries are already
  // written, so each gets one duplicate on another session (placed by the
  // serial policy: spread over the sessions dialled as headroom); queries
  // not yet written simply move.
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    DotSession& s = *sessions_[i];
    if (!s.established()) continue;
    const auto line = s.unanswered();
    for (std::size_t k = dot_spread_depth; k < line.size(); ++k) {
      const auto it = live_.find(line[k].id);
      if (it == live_.end()) continue;
      Exchange& ex = it->second;
      if (ex.spent.resend || !ex.copies.only_on(s.index())) continue;
      if (!line[k].written) {
        if (s.withdraw(line[k].id) != DotSession::Withdraw::removed) continue;
        DotSession* to = choose_session(i);
        place(line[k].id, ex, to ? *to : s);
        continue;
      }
      if (!add_duplicate(line[k].id, ex, i)) return;
    }
  }
}

bool DotTransport::add_duplicate(ExchangeId id, Exchange& ex, std::size_t exclude) {
  DotSession* to = choose_session(exclude);
  if (!to) return false;
  const Copy copy{to->index(), to->state() == SessionState::ready, to->responses()};
  std::string why;
  if (!enqueue_copy(id, ex, *to, &why)) return true;
  ex.copies.add(copy);
  ex.spent.resend = true;
  ++resent_;
  return true;
}

void DotTransport::set_one_at_a_time(bool on) {
  if (on == one_at_a_time_) return;
  one_at_a_time_ = on;
  for (auto& s : sessions_) s->set_max_outstanding(on ? 1 : SIZE_MAX);
}

void DotTransport::ensure_stall_check() {
  if (stall_timer_.armed() || live_.empty()) return;
  // Half the shortest left-behind limit: a stall is seen within 1.5 of its
  // deadline, and a busy transport pays one scan of its sessions per period,
  // not one per answer.
  const auto floor = detector_.latency_floor();
  constexpr loop::Duration shortest = std::chrono::milliseconds(50), longest = std::chrono::milliseconds(500);
  const loop::Duration period = floor ? std::clamp<loop::Duration>(*floor * 2, shortest, longest) : shortest;
  stall_timer_.arm(period, [this]() {
    try {
      check_stalls();
    } catch (const std::exception& e) {
      log::error("dot ", opts_.label, ": stall check: ", e.what());
    }
    ensure_stall_check();
  });
}

void DotTransport::check_stalls() {
  const loop::TimePoint now = sched_.now();
  const auto floor = detector_.latency_floor();
  // An upstream proven to pipeline (answers that came together or out of
  // order) that is slow on one query is a recursive resolver's cache miss,
  // not a frontend that drops queries: the straggler gets its one duplicate
  // elsewhere and nothing else changes. Several left behind at once on one
  // session are not one slow query (stall_action()).
  const bool proven = verdict() == PipeliningVerdict::pipelining;
  for (std::size_t i = 0; i < opts_.max_sessions; ++i) {
    DotSession& s = *sessions_[i];
    // Part of an answer is buffered: some exchange's query was evidently
    // processed, and which one is unknown until its frame completes, so
    // none of them is re-sent (retry_decision's rule: once a response byte
    // has arrived, a second send could duplicate work the server did).
    if (!s.established() || s.partial_frame_pending()) continue;
    // Counted first, acted on once per session (stall_action()).
    std::vector<ExchangeId> due;
    std::size_t left_behind = 0;
    for (const auto& u : s.unanswered()) {
      if (!u.written) continue;
      const auto it = live_.find(u.id);
      if (it == live_.end()) continue;
      Exchange& ex = it->second;
      const auto stall =
          stall_deadline(StallInputs{u.written_at, s.newest_answered_written(), s.last_answer_at(), floor});
      if (!stall || stall->at > now) continue;
      // Counted before anything is re-sent: a stall that shows the outage
      // sends its duplicate to a fresh dial, not to another suspect session.
      // Checked on copies that already have their duplicate too: on a slow
      // upstream the evidence comes after the deadline that sent it.
      if (!ex.stall_counted && stall_shows_outage(stall->kind, now - u.written_at, floor)) {
        ex.stall_counted = true;
        note_failure("an exchange stalled");
      }
      if (ex.spent.resend || !ex.copies.only_on(s.index())) continue;
      if (stall->kind == StallKind::left_behind) ++left_behind;
      due.push_back(u.id);
    }
    const StallAction action = stall_action(proven, left_behind, due.size() - left_behind);
    if (action == StallAction::close_and_resend) {
      // Left behind by a session that answers its siblings: a frontend that
      // drops part of what it gets.
      resend_stalled(s);
      continue;
    }
    if (action != StallAction::duplicate) continue;
    // Merely silent, or one straggler on a proven pipelining upstream (a
    // resolver's cache miss): only a duplicate; one slow answer is no
    // reason to stop pipelining.
    for (const ExchangeId id : due) {
      const auto it = live_.find(id);
      if (it == live_.end()) continue;
      log::debug("dot ", opts_.label, ": exchange unanswered past its stall deadline on session ", s.index(),
                 "; re-sending it once on another session");
      if (!add_duplicate(id, it->second, i)) break;
    }
  }
  check_outage();
}

void DotTransport::resend_stalled(DotSession& s) {
  // The session answers some of what it is given and not the rest (or went
  // silent far past the upstream's latency). Nothing more is expected from
  // it: it is closed, what it still carried is sent once more on fresh
  // sessions, and the upstream is treated as non-pipelining (one query per
  // session on the wire) until the verdict ages out.
  const PipeliningVerdict before = verdict();
  detector_.observe_stall(sched_.now());
  set_one_at_a_time(true);
  log::info("dot ", opts_.label, ": session ", s.index(), " left pipelined queries unanswered after ", s.responses(),
            " answer(s); re-sending them on fresh sessions, one query per session at a time",
            before == PipeliningVerdict::serial ? "" : " (pipelining verdict: serial)");
  SessionEnd end = s.close(Cause::session_closed, "left pipelined queries unanswered", true);
  std::vector<ExchangeId> again;
  std::vector<SessionEnd::Carried> rest;
  for (const auto& c : end.exchanges) {
    const auto it = live_.find(c.id);
    if (it == live_.end()) continue;
    Exchange& ex = it->second;
    if (c.written && !ex.spent.resend && ex.copies.only_on(s.index())) {
      ex.spent.resend = true;
      ++resent_;
      again.push_back(c.id);
    } else {
      rest.push_back(c);
    }
  }
  end.exchanges = std::move(rest);
  settle(s, std::move(end));
  for (const ExchangeId id : again) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    place(id, it->second, *choose_session());
  }
}

}  // namespace nxdns::upstream
