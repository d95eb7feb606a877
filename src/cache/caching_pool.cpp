#include "cache/caching_pool.hpp"

#include <algorithm>

#include "cache/answer_rewrite.hpp"
#include "log/log.hpp"

namespace nxdns::cache {

namespace {
bool is_error_answer(const dns::Bytes& r) {
  if (r.size() < dns::header_size) return true;
  const auto rc = static_cast<dns::Rcode>(r[3] & 0x0F);
  return rc == dns::Rcode::servfail || rc == dns::Rcode::refused;
}
}  // namespace

CachingPool::CachingPool(loop::Scheduler& sched, upstream::Pool& pool, CacheOptions opts)
    : sched_(sched), pool_(pool), opts_(opts), store_(opts.max_bytes, opts.eviction) {}

CachingPool::~CachingPool() {
  for (auto& [id, f] : flights_) pool_.cancel(f.ticket);
}

void CachingPool::apply_options(const CacheOptions& opts) {
  const Eviction kept = opts_.eviction;
  opts_ = opts;
  opts_.eviction = kept;
  store_.set_max_bytes(opts_.max_bytes);
}

FreshnessRules CachingPool::rules() const {
  FreshnessRules r;
  r.prefetch_percent = opts_.prefetch ? opts_.prefetch_percent : 0;
  r.stale_window = opts_.serve_stale ? opts_.stale_window : loop::Duration::zero();
  return r;
}

upstream::PoolOutcome CachingPool::answer_for(const Member& m, dns::ByteView answer, const AnswerLayout* layout,
                                              std::uint32_t age, std::optional<std::uint32_t> fixed_ttl) const {
  upstream::PoolOutcome out;
  std::optional<dns::Bytes> a;
  if (layout) a = rewrite_answer(answer, *layout, ClientQuestion{m.id, m.question, m.flags}, age, fixed_ttl);
  if (!a) {
    // The question is the member's: the transport validated the answer
    // against a query with the member's key, and a stored answer was stored
    // under it. So only an answer whose records do not walk gets here, and
    // it answers no client.
    out.cause = upstream::Cause::bad_response;
    out.detail = "the answer's records do not walk";
    return out;
  }
  out.ok = true;
  out.response = std::move(*a);
  return out;
}

std::optional<CachingPool::Hit> CachingPool::hit_now(const dns::Query& q, dns::ByteView raw,
                                                     const dns::ClientLink& link) {
  // The key in a stack buffer, the layout found when the answer was stored
  // (docs/architecture.md, "Answer cache"; measured by bench/cache_cpu.sh).
  const KeyBuffer key(q);
  StoredAnswer* a = store_.find(key.packed());
  if (!a) return std::nullopt;
  const loop::TimePoint now = sched_.now();
  const Freshness f = freshness_at(a->age, now, rules());
  if (f != Freshness::fresh && f != Freshness::fresh_prefetch) return std::nullopt;
  const ClientQuestion client{q.header.id, question_bytes(raw, q), q.header.flags};
  const std::uint32_t age = age_seconds(a->age, now);
  if (!a->layout.client_checked) find_client_form(a->answer, a->layout);
  std::optional<Hit> hit;
  if (a->layout.client) {
    if (auto out = client_answer(a->answer, a->layout, client, age, q.edns, link))
      hit = Hit{std::move(out->bytes), out->rcode};
  }
  if (!hit) {
    auto out = rewrite_answer(a->answer, a->layout, client, age, {});
    if (!out) return std::nullopt;
    hit = Hit{std::move(*out), std::nullopt};
  }
  count_hit(key.packed(), raw, f);
  return hit;
}

void CachingPool::count_hit(std::string_view packed_key, dns::ByteView raw, Freshness f) {
  ++stats_.hits;
  if (f == Freshness::fresh_prefetch) {
    const Key k{std::string(packed_key)};
    if (!joinable_.count(k.packed) && may_prefetch(pool_.loads())) {
      ++stats_.prefetches;
      start_flight(k, raw, {}, true);
    }
  }
}

CachingPool::Ticket CachingPool::submit(const dns::Query& q, dns::ByteView raw, Done done) {
  const Ticket t = next_ticket_++;
  Member& m = members_.try_emplace(t, sched_).first->second;
  m.ticket = t;
  m.key = make_key(q);
  m.id = q.header.id;
  m.flags = q.header.flags;
  const dns::ByteView qb = question_bytes(raw, q);
  m.question.assign(qb.begin(), qb.end());
  m.done = std::move(done);

  const loop::TimePoint now = sched_.now();
  bool stale_available = false;
  std::optional<loop::TimePoint> refresh_failed_at;
  if (StoredAnswer* a = store_.find(m.key)) {
    const Freshness f = freshness_at(a->age, now, rules());
    if (f == Freshness::fresh || f == Freshness::fresh_prefetch) {
      ++stats_.hits;
      auto out =
          std::make_shared<upstream::PoolOutcome>(answer_for(m, a->answer, &a->layout, age_seconds(a->age, now), {}));
      // Delivered from the loop: the engine is still inside submit().
      m.timer.arm(loop::Duration::zero(), [this, t, out] { deliver(t, std::move(*out)); });
      if (f == Freshness::fresh_prefetch && !joinable_.count(m.key.packed) && may_prefetch(pool_.loads())) {
        ++stats_.prefetches;
        start_flight(m.key, raw, {}, true);
      }
      return t;
    }
    if (f == Freshness::expired) {
      store_.erase(m.key);
    } else {
      stale_available = true;
      refresh_failed_at = a->refresh_failed_at;
    }
  }

  ++stats_.misses;
  if (stale_available) {
    const RefreshState known =
        refresh_state_on_arrival(refresh_failed_at, now, opts_.stale_recheck, pool_.has_healthy_entry());
    if (may_serve_stale(opts_.serve_stale, Freshness::stale, known)) {
      serve_stale_now(m, raw, known);
      return t;
    }
  }
  auto j = joinable_.find(m.key.packed);
  if (j != joinable_.end()) {
    Flight& f = flights_.at(j->second);
    if (f.members.size() <= opts_.max_joiners) {  // the first client plus max_joiners
      f.members.push_back(t);
      m.flight = j->second;
      ++stats_.dedup_joins;
    }
  }
  if (m.flight == 0) start_flight(m.key, raw, {t}, false);
  if (stale_available) m.timer.arm(opts_.client_response_timer, [this, t] { on_client_timer(t); });
  return t;
}

void CachingPool::serve_stale_now(Member& m, dns::ByteView raw, RefreshState known) {
  if (known == RefreshState::failed_recently) {
    ++stats_.stale_refreshes_skipped;
  } else if (!joinable_.count(m.key.packed) && may_refresh_behind_stale(pool_.loads())) {
    // A refresh still goes (one per key, and only a few at once: they are
    // what finds the upstream back, and one replaces the entry when it answers).
    start_flight(m.key, raw, {}, true);
  }
  const StoredAnswer* a = store_.find(m.key);
  ++stats_.stale_served;
  auto out = std::make_shared<upstream::PoolOutcome>(answer_for(m, a->answer, &a->layout, 0, stale_answer_ttl));
  const Ticket t = m.ticket;
  // Delivered from the loop: the engine is still inside submit().
  m.timer.arm(loop::Duration::zero(), [this, t, out] { deliver(t, std::move(*out)); });
}

void CachingPool::start_flight(const Key& key, dns::ByteView query, std::vector<Ticket> members, bool background) {
  const FlightId id = next_flight_++;
  Flight& f = flights_.try_emplace(id, sched_).first->second;
  f.key = key;
  f.query.assign(query.begin(), query.end());
  f.members = std::move(members);
  f.background = background;
  for (Ticket t : f.members) {
    auto it = members_.find(t);
    if (it != members_.end()) it->second.flight = id;
  }
  // The newest flight is the one to join: an older, full one stays full.
  // The entry is replaced, not re-pointed, so that its key views this
  // flight's key and not the older one's, which may end first.
  auto [j, fresh] = joinable_.try_emplace(std::string_view(f.key.packed), id);
  if (!fresh) {
    joinable_.erase(j);
    joinable_.emplace(std::string_view(f.key.packed), id);
  }
  f.lifetime.arm(opts_.exchange_budget, [this, id] { on_flight_expired(id); });
  f.ticket = pool_.submit(f.query, sched_.now() + opts_.exchange_budget, [this, id](upstream::PoolOutcome&& out) { on_flight_done(id, std::move(out)); });
}

CachingPool::Flights::node_type CachingPool::take_flight(FlightId id) {
  auto it = flights_.find(id);
  if (it == flights_.end()) return {};
  Flights::node_type node = flights_.extract(it);
  Flight& f = node.mapped();
  auto j = joinable_.find(f.key.packed);
  if (j != joinable_.end() && j->second == id) joinable_.erase(j);
  f.lifetime.disarm();
  for (Ticket t : f.members) {
    auto m = members_.find(t);
    if (m != members_.end()) m->second.flight = 0;
  }
  return node;
}

void CachingPool::on_flight_done(FlightId id, upstream::PoolOutcome&& out) {
  Flights::node_type node = take_flight(id);
  if (node.empty()) return;
  Flight* const f = &node.mapped();
  const loop::TimePoint now = sched_.now();

  RefreshState state = RefreshState::every_attempt_failed;
  // Where the answer's parts lie, found once: the stored form and every
  // member's answer are made from it.
  std::optional<AnswerLayout> layout;
  // An ok outcome was validated against the flight's query by the transport
  // that received it (upstream::Transport::Completion): nothing here checks
  // its question again.
  if (out.ok) {
    layout = layout_of(out.response);
    if (is_error_answer(out.response)) {
      state = RefreshState::error_answer;
    } else {
      state = RefreshState::answered;
      store_answer(*f, out.response, layout ? &*layout : nullptr, now);
    }
  }

  // A failed refresh leaves the old entry: stale for the waiting clients when
  // the rules allow, and for later ones.
  if (state != RefreshState::answered) {
    if (const StoredAnswer* stale = refresh_failed(f->key, state, now)) {
      // Copied: a client's callback may change the store.
      const dns::Bytes copy = stale->answer;
      const AnswerLayout copy_layout = stale->layout;
      deliver_stale(*f, copy, copy_layout);
      return;
    }
  }
  for (Ticket t : f->members) {
    auto it = members_.find(t);
    if (it == members_.end()) continue;
    const Member& m = it->second;
    if (out.ok) {
      // Each member gets its own ID and question bytes (0x20 case): the
      // rewrite copies them over the answer's, which has the same length.
      deliver(t, answer_for(m, out.response, layout ? &*layout : nullptr, 0, {}));
    } else {
      upstream::PoolOutcome copy = out;
      deliver(t, std::move(copy));
    }
  }
}

void CachingPool::store_answer(Flight& f, const dns::Bytes& answer, const AnswerLayout* layout, loop::TimePoint now) {
  // One walk for the verdict (answer_ttl reads the sections it finds).
  const AnswerTtl verdict = answer_ttl(answer, dns::wire::scan(answer), opts_.clamp);
  const bool negative = verdict.verdict == Verdict::negative;
  std::optional<ClampedAnswer> stored;
  if (!verdict.cacheable()) {
    ++stats_.not_stored[std::min<std::size_t>(static_cast<std::size_t>(verdict.verdict), stats_.not_stored.size() - 1)];
  } else if (layout) {  // always, once scan() walked it
    stored = clamp_record_ttls(answer, *layout, opts_.clamp.min_ttl, negative ? verdict.ttl : opts_.clamp.max_ttl);
  }
  if (!stored) {
    // Not stored, the old entry stays; but the upstream answers this name
    // again, so the next client asks it rather than getting stale unasked.
    if (StoredAnswer* old = store_.find(f.key)) old->refresh_failed_at.reset();
    return;
  }
  const EntryAge age{now, verdict.ttl};
  // The flight's key is not needed again on this path: moved, not copied.
  // put() replaces the old entry, its recheck window with it. A TTL that
  // changed may have been an octet a name reads: then the store finds the
  // layout of the stored form itself.
  const bool put = stored->changed ? store_.put(std::move(f.key), std::move(stored->bytes), age, negative)
                                   : store_.put(std::move(f.key), std::move(stored->bytes), *layout, age, negative);
  if (put) ++stats_.stores;
}

const StoredAnswer* CachingPool::refresh_failed(const Key& key, RefreshState how, loop::TimePoint now) {
  StoredAnswer* a = store_.find(key);
  if (!a || !may_serve_stale(opts_.serve_stale, freshness_at(a->age, now, rules()), how)) return nullptr;
  a->refresh_failed_at = now;
  return a;
}

void CachingPool::deliver_stale(const Flight& f, const dns::Bytes& stale, const AnswerLayout& layout) {
  for (Ticket t : f.members) {
    auto it = members_.find(t);
    if (it == members_.end()) continue;
    ++stats_.stale_served;
    deliver(t, answer_for(it->second, stale, &layout, 0, stale_answer_ttl));
  }
}

void CachingPool::on_flight_expired(FlightId id) {
  Flights::node_type node = take_flight(id);
  if (node.empty()) return;
  Flight* const f = &node.mapped();
  pool_.cancel(f->ticket);
  // A refresh that ran out of the whole budget failed like any other: the
  // recheck window opens and the clients still attached get the stale
  // answer, not another exchange for the name.
  if (const StoredAnswer* stale = refresh_failed(f->key, RefreshState::every_attempt_failed, sched_.now())) {
    const dns::Bytes copy = stale->answer;
    const AnswerLayout copy_layout = stale->layout;
    deliver_stale(*f, copy, copy_layout);
    return;
  }
  std::vector<Ticket> still;
  for (Ticket t : f->members)
    if (members_.count(t)) still.push_back(t);
  // Clients that arrived after the flight started still have budget left:
  // they get an exchange of their own rather than the first client's SERVFAIL.
  if (!still.empty()) start_flight(f->key, f->query, std::move(still), false);
}

void CachingPool::on_client_timer(Ticket t) {
  auto it = members_.find(t);
  if (it == members_.end()) return;
  Member& m = it->second;
  StoredAnswer* a = store_.find(m.key);
  if (!a) return;
  const loop::TimePoint now = sched_.now();
  const Freshness f = freshness_at(a->age, now, rules());
  if (f == Freshness::fresh || f == Freshness::fresh_prefetch) {
    ++stats_.hits;  // another flight for this key stored it meanwhile
    deliver(t, answer_for(m, a->answer, &a->layout, age_seconds(a->age, now), {}));
    return;
  }
  if (!may_serve_stale(opts_.serve_stale, f, RefreshState::timer_elapsed)) return;
  ++stats_.stale_served;
  upstream::PoolOutcome out = answer_for(m, a->answer, &a->layout, 0, stale_answer_ttl);
  if (m.flight != 0) {
    auto fl = flights_.find(m.flight);
    if (fl != flights_.end()) fl->second.background = true;  // the refresh goes on
  }
  deliver(t, std::move(out));
}

void CachingPool::detach(Member& m) {
  if (m.flight == 0) return;
  auto it = flights_.find(m.flight);
  m.flight = 0;
  if (it == flights_.end()) return;
  Flight& f = it->second;
  f.members.erase(std::remove(f.members.begin(), f.members.end(), m.ticket), f.members.end());
  if (f.members.empty() && !f.background) {
    // Nobody is waiting for it: free the upstream capacity.
    const FlightId id = it->first;
    Flights::node_type gone = take_flight(id);
    pool_.cancel(gone.mapped().ticket);
  }
}

void CachingPool::deliver(Ticket t, upstream::PoolOutcome&& out) {
  auto it = members_.find(t);
  if (it == members_.end()) return;
  auto node = members_.extract(it);
  Member& m = node.mapped();
  detach(m);
  m.timer.disarm();
  Done done = std::move(m.done);
  done(std::move(out));
}

void CachingPool::cancel(Ticket t) {
  auto it = members_.find(t);
  if (it == members_.end()) return;
  auto node = members_.extract(it);
  detach(node.mapped());
}

std::size_t CachingPool::flush_all() {
  const std::size_t n = store_.clear();
  stats_.flushed += n;
  return n;
}

std::optional<std::size_t> CachingPool::flush_name(std::string_view name) {
  auto wire = dns::name_from_text(name);
  if (!wire) return std::nullopt;
  const std::size_t n = store_.erase_name(fold_name(*wire));
  stats_.flushed += n;
  return n;
}

CacheStats CachingPool::stats() const {
  CacheStats s = stats_;
  s.evictions = store_.evictions();
  s.entries = store_.entries();
  s.bytes = store_.bytes();
  s.max_bytes = store_.max_bytes();
  s.flights = flights_.size();
  return s;
}

}  // namespace nxdns::cache
