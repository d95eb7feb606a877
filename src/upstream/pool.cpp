#include "upstream/pool.hpp"

#include <algorithm>
#include <cassert>

#include "log/log.hpp"
#include "upstream/answer_verdict.hpp"

namespace nxdns::upstream {

struct Pool::Entry {
  std::size_t index;
  std::string label;
  int priority;
  std::unique_ptr<Transport> transport;
  Health health;
  std::uint32_t in_flight = 0;
  std::uint32_t peak_in_flight = 0;
  std::list<Ticket> waiters;  // exact FIFO; requests keep their iterator
  std::uint64_t queued_total = 0;
  loop::Duration queued_time{};
  std::array<std::uint64_t, cause_count> outcomes{};
  std::array<std::uint64_t, 16> error_answers{};  // by header RCODE
  Cause last_failure = Cause::ok;
  LatencyHistogram latency;
  // Reload: admits nothing new; retired once its last exchange is over
  // (sessions closed, transport destroyed; the position may be reused).
  bool draining = false;
  bool retired = false;

  Entry(EntrySpec&& s, HealthPolicy hp)
      : index(s.index), label(std::move(s.label)), priority(s.priority), transport(std::move(s.transport)), health(hp) {}
};

bool Pool::tried(const Request& r, std::size_t e) { return e < r.tried.size() && r.tried[e]; }

Pool::Pool(loop::Scheduler& sched, std::vector<EntrySpec> entries, PoolOptions opts)
    : sched_(sched), opts_(std::move(opts)), retire_(sched), deliver_timer_(sched) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const EntrySpec& a, const EntrySpec& b) { return a.priority < b.priority; });
  entries_.reserve(entries.size());
  for (auto& s : entries) add_entry(std::move(s));
  sort_order();
}

void Pool::add_entry(EntrySpec&& spec) {
  std::size_t e = entries_.size();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i]->retired) {
      e = i;
      break;
    }
  }
  auto en = std::make_unique<Entry>(std::move(spec), opts_.health);
  if (e == entries_.size()) {
    entries_.push_back(std::move(en));
  } else {
    entries_[e] = std::move(en);
    // Requests that tried the retired entry at this position have not
    // tried this one.
    for (auto& [t, r] : requests_)
      if (e < r.tried.size()) r.tried[e] = false;
  }
  if (entries_[e]->transport) entries_[e]->transport->on_capacity_grew([this, e] { pump(e); });
}

void Pool::sort_order() {
  order_.clear();
  for (std::size_t e = 0; e < entries_.size(); ++e)
    if (!entries_[e]->draining) order_.push_back(e);
  std::stable_sort(order_.begin(), order_.end(), [this](std::size_t a, std::size_t b) {
    const Entry& x = *entries_[a];
    const Entry& y = *entries_[b];
    return x.priority != y.priority ? x.priority < y.priority : x.index < y.index;
  });
}

std::size_t Pool::entry_count() const { return order_.size(); }

std::size_t Pool::draining_count() const {
  std::size_t n = 0;
  for (const auto& en : entries_) n += en->draining && !en->retired;
  return n;
}

void Pool::apply(PoolChange change) {
  if (change.attempt_budget) opts_.attempt_budget = *change.attempt_budget;
  if (change.on_drained) on_drained_ = std::move(change.on_drained);
  // Look every index up before anything moves: a kept entry may take an
  // index another one gives up in the same reload.
  auto serving = [this](std::size_t index) -> std::optional<std::size_t> {
    for (const std::size_t e : order_)
      if (entries_[e]->index == index) return e;
    return std::nullopt;
  };
  std::vector<std::pair<std::size_t, PoolChange::Kept>> kept;
  for (const auto& k : change.keep)
    if (auto e = serving(k.old_index)) kept.emplace_back(*e, k);
  std::vector<std::size_t> drained;
  for (const std::size_t i : change.drain)
    if (auto e = serving(i)) drained.push_back(*e);
  for (const auto& [e, k] : kept) {
    entries_[e]->index = k.new_index;
    entries_[e]->priority = k.priority;
  }
  for (auto& spec : change.start) add_entry(std::move(spec));
  // Drained entries leave the failover order before their waiters move on.
  for (const std::size_t e : drained) entries_[e]->draining = true;
  sort_order();
  for (const std::size_t e : drained) begin_drain(e);
}

void Pool::begin_drain(std::size_t e) {
  Entry& en = *entries_[e];
  // Waiters never reached the upstream: they go on to the other entries
  // now, in their arrival order, keeping their deadlines.
  const std::vector<Ticket> waiting(en.waiters.begin(), en.waiters.end());
  for (const Ticket t : waiting) {
    auto it = requests_.find(t);
    if (it == requests_.end()) continue;
    Request& r = it->second;
    leave_queue(r);
    advance(r);
  }
  if (en.in_flight == 0) retire_.arm(loop::Duration::zero(), [this] { retire_drained(); });
}

void Pool::retire_drained() {
  for (auto& en : entries_) {
    if (!en->draining || en->retired || en->in_flight != 0) continue;
    en->transport->on_capacity_grew(nullptr);
    en->transport->close_all();
    if (on_drained_) on_drained_(en->index, en->label);
    en->transport.reset();
    en->retired = true;
  }
}

std::size_t Pool::admission_cap(std::size_t e) const {
  // The transport's real capacity (DoH: connections x streams the server
  // allows), so that waiting happens here, in the visible FIFO.
  const Entry& en = *entries_[e];
  return std::clamp<std::size_t>(en.transport->capacity(), 1, max_in_flight_per_entry);
}

Pool::~Pool() {
  retire_.disarm();
  for (auto& en : entries_) {
    if (en->transport) en->transport->on_capacity_grew(nullptr);
  }
  // Abandon in-flight exchanges before the transports go, so no completion
  // can reach a destroyed pool.
  for (auto& [t, r] : requests_) {
    if (r.phase == Request::Phase::in_flight) entries_[r.entry]->transport->cancel(r.exchange);
  }
  requests_.clear();
}

Pool::Ticket Pool::submit(dns::Bytes query, loop::TimePoint deadline, Done done) {
  const Ticket t = next_ticket_++;
  Request& r = requests_.try_emplace(t, sched_, t, std::move(query), deadline, std::move(done), entries_.size()).first->second;
  advance(r);
  return t;
}

bool Pool::other_healthy_candidate(const Request& r, std::size_t except) const {
  const auto now = sched_.now();
  for (const std::size_t e : order_) {
    if (e != except && !tried(r, e) && entries_[e]->health.admits(now)) return true;
  }
  return false;
}

void Pool::advance(Request& r) {
  r.phase = Request::Phase::choosing;
  const auto now = sched_.now();
  if (now >= r.deadline) {
    // Nothing may start any more; the caller is about to give up too.
    if (!r.best_error.empty()) {
      finish(r, r.best_error_index, Cause::ok, {}, std::move(r.best_error));
      r.outcome.error_answer = true;
    } else {
      finish(r, r.last_index, r.attempts == 0 ? Cause::attempt_timeout : r.last_cause,
             r.attempts == 0 ? std::string("the total budget ran out") : r.last_detail);
    }
    return;
  }
  // First pass: untried entries that admit a new exchange (not in backoff,
  // not half-open with the probe taken), in priority order.
  for (const std::size_t e : order_) {
    if (!tried(r, e) && entries_[e]->health.admits(now)) {
      r.chosen_healthy = true;
      try_acquire(r, e);
      return;
    }
  }
  // Last resort: an untried entry in backoff is better than no answer.
  for (const std::size_t e : order_) {
    if (!tried(r, e)) {
      r.chosen_healthy = false;
      try_acquire(r, e);
      return;
    }
  }
  // Every entry was tried. An attempt that only ran out of its attempt
  // budget gets one more at the same entry while the deadline allows: with
  // one upstream, a 2 s attempt budget and a 5 s total, SERVFAIL at 2 s
  // would leave 3 s unused. The transport's cancel() closed the session that
  // carried the abandoned exchange, so the retry runs on another session.
  // Without a deadline there is no telling whether time is left: no retry.
  if (r.attempts > 0 && r.last_cause == Cause::attempt_timeout && !r.timeout_retry_used &&
      r.deadline != loop::TimePoint::max() && !entries_[r.entry]->draining) {
    r.timeout_retry_used = true;
    r.chosen_healthy = false;
    try_acquire(r, r.entry);
    return;
  }
  if (!r.best_error.empty()) {
    // Every entry answered with an error (or failed): relay the best answer
    // received rather than making one up.
    finish(r, r.best_error_index, Cause::ok, {}, std::move(r.best_error));
    r.outcome.error_answer = true;
    return;
  }
  if (r.attempts == 0) {
    finish(r, r.last_index, Cause::connect_failed, "no upstream entries");
  } else {
    finish(r, r.last_index, r.last_cause, r.last_detail);
  }
}

void Pool::try_acquire(Request& r, std::size_t e) {
  Entry& en = *entries_[e];
  r.entry = e;
  // FIFO fairness: a newcomer never overtakes waiters, even if capacity
  // appears between a release and the pump that serves them.
  if (en.in_flight < admission_cap(e) && en.waiters.empty()) {
    start_attempt(r, e);
    return;
  }
  r.phase = Request::Phase::queued;
  r.queued_at = sched_.now();
  r.queue_pos = en.waiters.insert(en.waiters.end(), r.ticket);
}

void Pool::leave_queue(Request& r) {
  Entry& en = *entries_[r.entry];
  en.waiters.erase(r.queue_pos);
  ++en.queued_total;
  en.queued_time += sched_.now() - r.queued_at;
}

void Pool::start_attempt(Request& r, std::size_t e) {
  Entry& en = *entries_[e];
  if (r.tried.size() <= e) r.tried.resize(e + 1, false);
  r.tried[e] = true;
  r.entry = e;
  r.phase = Request::Phase::in_flight;
  ++r.attempts;
  ++en.in_flight;
  en.peak_in_flight = std::max(en.peak_in_flight, en.in_flight);
  r.attempt_started = sched_.now();
  r.attempt_limit = attempt_limit(r);
  r.probe = en.health.exchange_started(r.attempt_started);
  const Ticket t = r.ticket;
  r.exchange = en.transport->start(r.query, [this, t](ExchangeResult&& res) { on_completion(t, std::move(res)); });
  r.timer.arm(r.attempt_limit, [this, t] { on_attempt_timeout(t); });
}

loop::Duration Pool::attempt_limit(const Request& r) const {
  const auto now = sched_.now();
  if (r.deadline == loop::TimePoint::max()) return opts_.attempt_budget;
  return std::min(opts_.attempt_budget, std::max(loop::Duration::zero(), r.deadline - now));
}

void Pool::release(std::size_t e) {
  Entry& en = *entries_[e];
  assert(en.in_flight > 0);
  --en.in_flight;
  if (en.draining) {
    if (en.in_flight == 0) retire_.arm(loop::Duration::zero(), [this] { retire_drained(); });
    return;
  }
  pump(e);
}

void Pool::pump(std::size_t e) {
  Entry& en = *entries_[e];
  while (en.in_flight < admission_cap(e) && !en.waiters.empty()) {
    auto it = requests_.find(en.waiters.front());
    assert(it != requests_.end());
    Request& r = it->second;
    leave_queue(r);
    // Re-check health after the wait: an entry that went into backoff while
    // this request queued is skipped if something healthy remains.
    if (r.chosen_healthy && !en.health.admits(sched_.now()) && other_healthy_candidate(r, e)) {
      advance(r);
      continue;
    }
    start_attempt(r, e);
  }
}

void Pool::on_completion(Ticket t, ExchangeResult&& res) {
  auto it = requests_.find(t);
  if (it == requests_.end()) return;
  Request& r = it->second;
  if (r.phase != Request::Phase::in_flight) return;
  r.timer.disarm();
  const std::size_t e = r.entry;
  Entry& en = *entries_[e];
  const loop::Duration took = sched_.now() - r.attempt_started;
  if (res.ok()) {
    const std::uint8_t rcode = res.response.size() >= dns::header_size ? res.response[3] & 0x0F : 0;
    if (answer_verdict(rcode) != AnswerVerdict::relay) {
      error_answer(r, rcode, std::move(res.response));
      release(e);
      return;
    }
  }
  ++en.outcomes[static_cast<std::size_t>(res.cause)];
  if (opts_.on_attempt) {
    AttemptReport rep{en.index, &en.label, res.cause, &res.detail, took};
    opts_.on_attempt(rep);
  }
  if (res.ok()) {
    en.latency.observe(took);
    en.health.record_success();
    en.last_failure = Cause::ok;
    finish(r, en.index, Cause::ok, {}, std::move(res.response));
    release(e);
    return;
  }
  if (res.cause == Cause::cancelled) {
    // The transport was shut down under us (close_all): not the upstream's
    // fault, and nothing else should be tried.
    en.health.exchange_abandoned(r.probe);
    finish(r, en.index, Cause::cancelled, std::move(res.detail));
    release(e);
    return;
  }
  en.health.record_failure(sched_.now(), r.probe);
  en.last_failure = res.cause;
  attempt_failed(r, res.cause, std::move(res.detail));
  release(e);
}

void Pool::error_answer(Request& r, std::uint8_t rcode, dns::Bytes&& response) {
  Entry& en = *entries_[r.entry];
  ++en.outcomes[static_cast<std::size_t>(Cause::error_answer)];
  ++en.error_answers[rcode];
  std::string detail = log::cat("answered with RCODE ", static_cast<unsigned>(rcode));
  // Read only here, on an error answer: the question is not looked at for
  // the answers that are relayed.
  if (answer_verdict(rcode, is_ordinary_query(r.query)) == AnswerVerdict::fail_over_unhealthy) {
    if (opts_.on_attempt) {
      AttemptReport rep{en.index, &en.label, Cause::error_answer, &detail, sched_.now() - r.attempt_started};
      opts_.on_attempt(rep);
    }
    en.health.record_failure(sched_.now(), r.probe);
    en.last_failure = Cause::error_answer;
  } else {
    // SERVFAIL, or any error to a query that is not ordinary, says nothing
    // about the upstream's health (answer_verdict.hpp): no failure, no
    // recovery, and a half-open probe is free again.
    en.health.exchange_abandoned(r.probe);
  }
  // Ties keep the earlier answer: attempts run in priority order.
  const int rank = error_answer_rank(rcode);
  if (rank > r.best_error_rank) {
    r.best_error = std::move(response);
    r.best_error_rank = rank;
    r.best_error_index = en.index;
  }
  attempt_failed(r, Cause::error_answer, std::move(detail));
}

void Pool::on_attempt_timeout(Ticket t) {
  auto it = requests_.find(t);
  if (it == requests_.end()) return;
  Request& r = it->second;
  if (r.phase != Request::Phase::in_flight) return;
  const std::size_t e = r.entry;
  Entry& en = *entries_[e];
  en.transport->cancel(r.exchange);
  if (r.attempt_limit < opts_.attempt_budget) {
    // Cut short by the caller's deadline, not the upstream's verdict: no
    // failure to count, and advance() finds no time left.
    en.health.exchange_abandoned(r.probe);
    r.last_cause = Cause::attempt_timeout;
    r.last_detail = "no answer before the total budget ran out";
    r.last_index = en.index;
    advance(r);
    release(e);
    return;
  }
  ++en.outcomes[static_cast<std::size_t>(Cause::attempt_timeout)];
  std::string detail = log::cat("no answer within the attempt budget (",
                                std::chrono::duration_cast<std::chrono::milliseconds>(opts_.attempt_budget).count(),
                                " ms)");
  if (opts_.on_attempt) {
    AttemptReport rep{en.index, &en.label, Cause::attempt_timeout, &detail, opts_.attempt_budget};
    opts_.on_attempt(rep);
  }
  en.health.record_failure(sched_.now(), r.probe);
  en.last_failure = Cause::attempt_timeout;
  attempt_failed(r, Cause::attempt_timeout, std::move(detail));
  release(e);
}

void Pool::attempt_failed(Request& r, Cause c, std::string detail) {
  r.last_cause = c;
  r.last_detail = std::move(detail);
  r.last_index = entries_[r.entry]->index;
  advance(r);
}

void Pool::finish(Request& r, std::size_t entry_index, Cause cause, std::string detail, dns::Bytes response) {
  r.phase = Request::Phase::completing;
  r.outcome.ok = cause == Cause::ok;
  r.outcome.cause = cause;
  r.outcome.detail = std::move(detail);
  r.outcome.response = std::move(response);
  r.outcome.entry_index = entry_index;
  r.outcome.attempts = r.attempts;
  r.timer.disarm();
  // Deliver from the loop: the caller may be inside submit() or cancel().
  // One zero-delay timer for every request settled in this pass, not one
  // each: under a 500-query burst those were an event_add and event_del
  // per answer on a timer heap thousands deep.
  settled_.push_back(r.ticket);
  if (!deliver_timer_.armed()) deliver_timer_.arm(loop::Duration::zero(), [this] { deliver_settled(); });
}

void Pool::deliver_settled() {
  delivering_.swap(settled_);
  for (const Ticket t : delivering_) {
    // Gone: cancelled after it settled (cancel() removed it).
    auto it = requests_.find(t);
    if (it == requests_.end()) continue;
    auto owned = requests_.extract(it);  // out of the table before its callback runs
    Request& r = owned.mapped();
    r.done(std::move(r.outcome));
  }
  delivering_.clear();
}

void Pool::cancel(Ticket t) {
  auto it = requests_.find(t);
  if (it == requests_.end()) return;
  auto owned = requests_.extract(it);
  Request& r = owned.mapped();
  r.timer.disarm();
  switch (r.phase) {
    case Request::Phase::queued:
      leave_queue(r);
      break;
    case Request::Phase::in_flight:
      entries_[r.entry]->transport->cancel(r.exchange);
      entries_[r.entry]->health.exchange_abandoned(r.probe);
      release(r.entry);
      break;
    case Request::Phase::choosing:
    case Request::Phase::completing:
      break;
  }
}

bool Pool::has_healthy_entry() const {
  const auto now = sched_.now();
  for (const auto& e : entries_)
    if (!e->draining && e->health.state(now) == HealthState::healthy) return true;
  return false;
}

bool Pool::has_admitting_entry() const {
  const auto now = sched_.now();
  for (const auto& e : entries_)
    if (!e->draining && e->health.admits(now)) return true;
  return false;
}

std::vector<EntrySnapshot> Pool::snapshot() const {
  std::vector<EntrySnapshot> out;
  out.reserve(entries_.size());
  const auto now = sched_.now();
  for (const auto& en : entries_) {
    // A draining entry is no longer configured (its index may already
    // belong to a started one).
    if (en->draining) continue;
    EntrySnapshot s;
    s.index = en->index;
    s.label = en->label;
    s.kind = en->transport->kind();
    s.priority = en->priority;
    s.slots = static_cast<std::uint32_t>(slots_per_entry);
    s.capacity = static_cast<std::uint32_t>(std::clamp<std::size_t>(en->transport->capacity(), 1, max_in_flight_per_entry));
    s.in_flight = en->in_flight;
    s.peak_in_flight = en->peak_in_flight;
    s.queue_depth = static_cast<std::uint32_t>(en->waiters.size());
    s.queued_total = en->queued_total;
    s.queued_seconds_total = std::chrono::duration<double>(en->queued_time).count();
    s.health = en->health.state(now);
    s.backoff_remaining = s.health == HealthState::backoff ? en->health.backoff_until() - now : loop::Duration{};
    s.consecutive_failures = en->health.consecutive_failures();
    s.backoffs_total = en->health.backoffs_total();
    s.last_failure = en->last_failure;
    s.outcomes = en->outcomes;
    s.error_answers = en->error_answers;
    s.latency = en->latency;
    s.transport = en->transport->stats();
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<EntryLoad> Pool::loads() const {
  std::vector<EntryLoad> out;
  out.reserve(entries_.size());
  const auto now = sched_.now();
  for (const auto& en : entries_) {
    if (en->draining) continue;
    out.push_back(EntryLoad{en->health.state(now), static_cast<std::uint32_t>(en->in_flight),
                            static_cast<std::uint32_t>(en->waiters.size())});
  }
  return out;
}

void Pool::close_all() {
  for (auto& en : entries_)
    if (en->transport) en->transport->close_all();
}

std::vector<std::size_t> Pool::clock_stepped() {
  std::vector<std::size_t> reset;
  for (auto& en : entries_) {
    if (en->draining) continue;
    if (en->last_failure != Cause::certificate && en->last_failure != Cause::certificate_clock_behind) continue;
    en->health.forget_failures();
    en->last_failure = Cause::ok;
    reset.push_back(en->index);
  }
  return reset;
}

}  // namespace nxdns::upstream
