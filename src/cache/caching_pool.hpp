#pragma once
// The cache in front of the upstream pool, with the pool's calling
// convention (submit a client query, get one PoolOutcome, or cancel), so the
// engine delivers a cached answer through exactly the same step as a fresh
// one. Owned by the loop; knows neither listeners nor HTTP.
//
// A query is answered from the cache when a fresh entry exists (ID, RD and
// question case from the client, TTLs aged). Otherwise it joins the
// exchange already in flight for the same key (a "flight"), or starts one.
//
// Guarantees:
// - One flight per key at a time carries up to max_joiners clients; the next
//   client starts a new flight (which later clients then join). 30 identical
//   concurrent queries cost exactly one upstream exchange.
// - Every client keeps its own budget: the engine cancels its ticket when the
//   budget ends, which only detaches it. A flight lives until its answer, or
//   for exchange_budget; if clients are still attached then (they arrived
//   later, their budgets are not over), it is submitted again for them.
// - Serve-stale (RFC 8767): an entry past its TTL stays up to stale_window.
//   A client asking for it waits for the refresh up to
//   client_response_timer (1.5 s, inside RFC 8767's 1.8 s); then, or as
//   soon as every attempt failed or the upstream answered SERVFAIL/REFUSED,
//   it gets the stale answer with TTL 30 while the refresh goes on in the
//   background. When every upstream has failed since its last success
//   (Pool::has_healthy_entry), it gets the stale answer at once, from the
//   loop, and the refresh runs in the background. Never while a fresh
//   answer exists.
// - Failure recheck (RFC 8767 §4, §5): a refresh of a stale entry that
//   fails (every attempt failed, SERVFAIL/REFUSED, or the flight's budget
//   ran out) opens a stale_recheck window on that entry. Inside it every
//   client gets the stale answer at once, from the loop, and nothing for
//   that key goes upstream; the first query after it starts one refresh
//   (joined as above). So against a failing upstream a stale name costs at
//   most one refresh per window (another per max_joiners + 1 clients
//   arriving while it runs), each one pool request (an attempt per
//   upstream, plus one more after an attempt timeout). An answer to the
//   refresh, even one that is not stored, closes the window.
// - Prefetch: a hit in the last prefetch_percent of an entry's TTL starts a
//   background refresh when may_prefetch() allows (never the last free
//   capacity of the pool).
// - Completions run from the loop, never inside submit() or cancel().
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/answer_store.hpp"
#include "cache/answer_ttl.hpp"
#include "cache/key.hpp"
#include "cache/policy.hpp"
#include "upstream/budgets.hpp"
#include "upstream/pool.hpp"

namespace nxdns::cache {

struct CacheOptions {
  // About 40,000 typical household answers; a few percent of a Pi 3's RAM.
  std::size_t max_bytes = 16u << 20;
  TtlClamp clamp;
  bool serve_stale = true;
  // RFC 8767 §5 suggests 1 to 3 days.
  loop::Duration stale_window = std::chrono::hours(24);
  // RFC 8767 §5 suggests 1.8 s: the time a client is willing to wait. The
  // stale answer is sent when the timer fires, and reaches the client a loop
  // pass and a socket hop later, so a timer of exactly 1.8 s lands just past
  // it (bench/cache_outage.sh). 1.5 s leaves 0.3 s for a loaded Pi and is
  // still 35 round trips of a 40 ms upstream for the fresh answer to win.
  loop::Duration client_response_timer = std::chrono::milliseconds(1500);
  // RFC 8767 §4 recommends refreshing from a failing upstream no more often
  // than every 30 s: after a stale entry's refresh fails, its clients get
  // the stale answer at once for this long, and no refresh is sent.
  loop::Duration stale_recheck = std::chrono::seconds(30);
  bool prefetch = true;
  std::uint32_t prefetch_percent = 10;
  // Clients joining one flight besides the first: bounds the replies one
  // answer fans out to. As many as one upstream runs exchanges at once.
  std::size_t max_joiners = upstream::max_in_flight_per_entry;
  // How long a flight may run before it is cancelled (the engine's total
  // budget: no client waits longer anyway).
  loop::Duration exchange_budget = upstream::default_total_budget;
  Eviction eviction = Eviction::sieve;
};

struct CacheStats {
  std::uint64_t hits = 0;          // answered from a fresh entry
  std::uint64_t misses = 0;        // had to wait for an exchange (joined or started)
  std::uint64_t stale_served = 0;  // stale answers sent (RFC 8767)
  // Of those, sent at once without a refresh: one failed within stale_recheck.
  std::uint64_t stale_refreshes_skipped = 0;
  std::uint64_t prefetches = 0;    // background refreshes started by a hit
  std::uint64_t dedup_joins = 0;   // clients that joined an exchange in flight
  std::uint64_t stores = 0;        // answers stored
  std::uint64_t evictions = 0;     // entries pushed out by the byte bound
  std::uint64_t flushed = 0;       // entries removed by the operator
  std::array<std::uint64_t, 7> not_stored{};  // by Verdict (truncated .. malformed)
  std::size_t entries = 0;
  std::size_t bytes = 0;
  std::size_t max_bytes = 0;
  std::size_t flights = 0;  // exchanges in flight now
};

class CachingPool {
 public:
  using Ticket = std::uint64_t;
  using Done = upstream::Pool::Done;

  CachingPool(loop::Scheduler& sched, upstream::Pool& pool, CacheOptions opts);
  ~CachingPool();
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;

  // `q` is the parse of `raw`. `done` runs once, from the loop, unless the
  // ticket is cancelled first.
  Ticket submit(const dns::Query& q, dns::ByteView raw, Done done);
  // The hit path without a ticket: the answer to `q` (the parse of `raw`)
  // from a fresh entry, counted as a hit and starting a prefetch exactly as
  // submit() would, with one lookup. With the entry's client form (found on
  // its first hit) `bytes` is already what this client receives
  // (client_answer: the client-facing OPT, UDP truncation to `link`) and
  // `rcode` is set; without one, `bytes` is the stored answer rewritten for
  // this client (rewrite_answer) and the caller applies answer_for_client.
  // nullopt, and nothing counted, when there is no fresh entry or the stored
  // answer does not rewrite for this question: the caller then submit()s,
  // which decides as it always did.
  struct Hit {
    dns::Bytes bytes;
    std::optional<std::uint16_t> rcode;  // set: `bytes` is the client's answer
  };
  std::optional<Hit> hit_now(const dns::Query& q, dns::ByteView raw, const dns::ClientLink& link);
  void cancel(Ticket t);
 private:
  // A hit's bookkeeping: the count and, near expiry, the prefetch.
  void count_hit(std::string_view packed_key, dns::ByteView raw, Freshness f);

 public:

  // Operator flush. flush_name returns nullopt for a name that is not a
  // valid presentation name.
  std::size_t flush_all();
  std::optional<std::size_t> flush_name(std::string_view name);

  CacheStats stats() const;
  const CacheOptions& options() const { return opts_; }
  // The entries themselves, for the cache file (cache/persistence.hpp): it
  // reads them to save and puts answers back at start.
  AnswerStore& store() { return store_; }
  const AnswerStore& store() const { return store_; }
  // Reload: new settings for what happens from now on (stored entries
  // stay; a smaller max_bytes evicts down to it). The eviction policy is
  // the store's shape and is kept.
  void apply_options(const CacheOptions& opts);

 private:
  using FlightId = std::uint64_t;
  // Members and flights live in their hash nodes (one allocation each, not
  // two), and a node never moves: joinable_ views a flight's own key, and
  // take_flight() hands the node itself over.
  struct Member {
    explicit Member(loop::Scheduler& s) : timer(s) {}
    Ticket ticket = 0;
    Key key;
    std::uint16_t id = 0;
    std::uint16_t flags = 0;  // the client's header flags (ClientQuestion::query_flags)
    dns::Bytes question;  // the client's question section, verbatim
    Done done;
    FlightId flight = 0;  // 0: not attached (answered from the cache)
    loop::Timer timer;    // client response timer, or the deferred delivery of a hit
  };
  struct Flight {
    explicit Flight(loop::Scheduler& s) : lifetime(s) {}
    Key key;
    dns::Bytes query;  // what was submitted (the first client's query)
    upstream::Pool::Ticket ticket = 0;
    std::vector<Ticket> members;
    // Kept running with no client attached: a prefetch, or the refresh
    // behind a stale answer.
    bool background = false;
    loop::Timer lifetime;
  };
  using Flights = std::unordered_map<FlightId, Flight>;

  FreshnessRules rules() const;
  void start_flight(const Key& key, dns::ByteView query, std::vector<Ticket> members, bool background);
  // Answers `m` (not attached to any flight) from its stale entry, from the
  // loop. `known` says why it need not wait: upstreams_failing makes sure a
  // background refresh for its key is in flight; failed_recently sends none.
  void serve_stale_now(Member& m, dns::ByteView raw, RefreshState known);
  // A refresh for `key` ended without an answer (`how`). When the rules
  // serve its entry stale, opens the entry's failure recheck window and
  // returns it (for the clients still waiting); nullptr otherwise.
  const StoredAnswer* refresh_failed(const Key& key, RefreshState how, loop::TimePoint now);
  // Delivers the stale answer (`layout` is its own) to every client still
  // attached to `f`.
  void deliver_stale(const Flight& f, const dns::Bytes& stale, const AnswerLayout& layout);
  void on_flight_done(FlightId id, upstream::PoolOutcome&& out);
  // Stores the answer to `f` (validated by its transport; `layout` is
  // layout_of(answer), nullptr when it does not walk) under f's key, moved
  // out of it, when answer_ttl says it may be cached.
  void store_answer(Flight& f, const dns::Bytes& answer, const AnswerLayout* layout, loop::TimePoint now);
  void on_flight_expired(FlightId id);
  void on_client_timer(Ticket t);
  void detach(Member& m);
  // The flight's node, out of the table (empty when there is none).
  Flights::node_type take_flight(FlightId id);
  // Removes the member and runs its callback.
  void deliver(Ticket t, upstream::PoolOutcome&& out);
  // `answer` (`layout` is its layout_of, nullptr when it has none) made into
  // the answer to m's query: its ID and question bytes, TTLs aged or fixed.
  // Not ok (Cause::bad_response) when it does not rewrite.
  upstream::PoolOutcome answer_for(const Member& m, dns::ByteView answer, const AnswerLayout* layout,
                                   std::uint32_t age, std::optional<std::uint32_t> fixed_ttl) const;

  loop::Scheduler& sched_;
  upstream::Pool& pool_;
  CacheOptions opts_;
  AnswerStore store_;
  std::unordered_map<Ticket, Member> members_;
  Flights flights_;
  // Packed key -> the flight new clients join; the key viewed is that
  // flight's own (replaced with the entry when a newer flight takes over).
  std::unordered_map<std::string_view, FlightId> joinable_;
  Ticket next_ticket_ = 1;
  FlightId next_flight_ = 1;
  CacheStats stats_;
};

}  // namespace nxdns::cache
