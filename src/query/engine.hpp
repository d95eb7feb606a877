#pragma once
// Client queries, from admission to reply. One ClientQuery object per query
// owns the total budget timer and the pool ticket; nothing outlives it. It
// lives in its hash node (one allocation per query, not two: a burst of 500
// queries outstanding holds hundreds at once, past the allocator's caches).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cache/caching_pool.hpp"
#include "dns/message.hpp"
#include "loop/scheduler.hpp"
#include "query/lan_forwarders.hpp"
#include "route/blocked_reply.hpp"
#include "route/blocking_groups.hpp"
#include "route/route_decision.hpp"
#include "route/route_table.hpp"
#include "upstream/budgets.hpp"
#include "upstream/pool.hpp"

namespace nxdns::query {

enum class Protocol : std::uint8_t { udp = 0, tcp = 1 };
const char* describe(Protocol p);

struct EngineOptions {
  loop::Duration total_budget = upstream::default_total_budget;
};

// Replies are counted by their full 12-bit rcode (RFC 6891 §6.1.3: header
// bits plus the OPT's extended bits), in a bounded set of buckets: every
// code IANA assigned up to BADCOOKIE (23) has its own, anything above
// shares the last one.
inline constexpr std::size_t rcode_buckets = 25;
inline constexpr std::size_t rcode_bucket_other = rcode_buckets - 1;
constexpr std::size_t rcode_bucket(std::uint16_t rcode) {
  return rcode < rcode_bucket_other ? rcode : rcode_bucket_other;
}

// Counters the listeners and /metrics read. Indexed by protocol, then
// rcode_bucket(12-bit rcode of the reply).
struct QueryCounters {
  std::array<std::array<std::uint64_t, rcode_buckets>, 2> replies_by_rcode{};
  std::array<std::uint64_t, 2> formerr_unparseable{};  // FORMERR for a packet we could not parse
  std::array<std::uint64_t, 2> dropped_unreadable{};   // not even a header: no reply possible
  std::uint64_t budget_exhausted = 0;                  // SERVFAIL because the total budget ran out
  std::uint64_t upstream_failed = 0;                   // SERVFAIL because every attempt failed
  // SERVFAIL because of an answer that could not be used: the last attempt's
  // did not answer the query (its transport refused it: Cause::bad_response),
  // or answer_for_client could not rewrite it safely (malformed records or
  // OPT).
  std::uint64_t bad_upstream_answer = 0;
  std::uint64_t abandoned = 0;                         // client went away first
  // Queries by the route decided for them (route::RouteKind).
  std::array<std::uint64_t, route::route_kind_count> routed{};
  // LAN queries answered with their zone's local negative answer because
  // the LAN server failed them (never reached, SERVFAIL, REFUSED).
  std::uint64_t lan_fallbacks = 0;
  // Blocked queries by the list whose rule blocked them (its index in the
  // table in use; block::max_lists of them at most).
  std::vector<std::uint64_t> blocked_by_list;
  // Queries whose name an allow rule covers (allow lists, `@@` rules,
  // blocking.allow), blocked by a list or not.
  std::uint64_t allowed_by_rule = 0;
};

// How blocked names are answered and for whom (config `blocking`).
struct BlockingPolicy {
  std::shared_ptr<const block::BlockTable> table;  // null: blocking off
  std::shared_ptr<const route::BlockingGroups> groups;
  route::BlockedAnswer answer = route::BlockedAnswer::nxdomain;
};

class Engine {
 public:
  using QueryId = std::uint64_t;
  using ReplyFn = std::function<void(dns::Bytes&&)>;

  enum class Admission { forwarded, answered, dropped };
  // When a cache hit reaches the caller. from_loop keeps the reply contract
  // below (the hit is delivered by `reply`, from the loop). now returns it in
  // Result::reply as `answered`: for a caller that sends it at once anyway
  // (the UDP listener, which batches a wakeup's answers into one sendmmsg),
  // deferring it would only cost a timer and a second pass over the batch.
  enum class HitDelivery { from_loop, now };
  struct Result {
    Admission kind = Admission::dropped;
    QueryId id = 0;        // when forwarded
    dns::Bytes reply;      // when answered now (FORMERR)
    dns::ParseError why = dns::ParseError::none;
  };

  // With `cache`, queries go through it (answers from the cache, joins of
  // identical exchanges in flight); without, straight to the pool.
  Engine(loop::Scheduler& sched, upstream::Pool& pool, EngineOptions opts, cache::CachingPool* cache = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Takes a client packet. A well-formed query is forwarded and `reply` runs
  // later, exactly once, from the loop (unless abandoned). A malformed one is
  // answered now (FORMERR, when its header can be echoed; NOTIMP for an
  // opcode other than QUERY) or dropped, and so is one that
  // dns::local_answer says is ours to answer (BADVERS, TC set, zone
  // transfers, meta-types, classes other than IN);
  // either way `reply` is not kept. With HitDelivery::now a cache hit is
  // answered now too (counted like any reply) and `reply` is not kept.
  // `client`: the peer's address (blocking groups); null when unknown.
  Result submit(dns::ByteView packet, Protocol proto, ReplyFn reply, HitDelivery hits = HitDelivery::from_loop,
                const sockaddr* client = nullptr);
  // The client went away (TCP connection closed): stop work, no reply.
  void abandon(QueryId id);
  // Answers every pending query with SERVFAIL now (shutdown deadline).
  void fail_all();
  // Drops every pending query without replying (teardown).
  void cancel_all();

  std::size_t in_flight() const { return live_.size() + ready_.size(); }
  const QueryCounters& counters() const { return counters_; }
  // Reload: the total budget of queries that arrive from now on (those in
  // flight keep the budget they started with).
  void set_total_budget(loop::Duration total) { opts_.total_budget = total; }
  // The routing step (route/route_decision.hpp): without a table every
  // query goes to the upstreams. `lan` runs the table's LAN groups and must
  // have adopted `table`. Queries in flight keep the table they started
  // with.
  void set_routes(std::shared_ptr<const route::RouteTable> table, LanForwarders* lan) {
    routes_ = std::move(table);
    lan_ = lan;
  }
  const std::shared_ptr<const route::RouteTable>& routes() const { return routes_; }
  // The route a query for `qname`/`qtype` from `client` would take now.
  route::Route route_for(dns::ByteView qname, std::uint16_t qtype, const sockaddr* client = nullptr) const;
  // Blocking: a new table (the builder's), groups or answer apply to the
  // next query. The per-list counters restart with a new table (its lists
  // may be others).
  void set_blocking(BlockingPolicy p);
  const BlockingPolicy& blocking() const { return blocking_; }

  // Builds the reply for an admission-time refusal (listener caps), counting
  // it like any other reply. Empty when the packet is not a parseable query
  // (the caller then drops it).
  dns::Bytes refuse(dns::ByteView packet, Protocol proto);
  void count_reply(Protocol proto, dns::ByteView reply);

 private:
  struct ClientQuery {
    ClientQuery(loop::Scheduler& s, dns::Bytes raw, dns::Query parsed, Protocol proto, ReplyFn reply)
        : raw(std::move(raw)), parsed(std::move(parsed)), proto(proto), reply(std::move(reply)), budget(s) {}
    dns::Bytes raw;
    dns::Query parsed;
    Protocol proto;
    ReplyFn reply;
    loop::Timer budget;
    upstream::Pool::Ticket ticket = 0;
    // Set for a query routed to a LAN group: where it went, and the zone
    // (kept alive with its table) whose local answer a failure falls back
    // to.
    LanGroupRuntime* lan = nullptr;
    std::shared_ptr<const route::RouteTable> table;
    const route::ZoneRoute* zone = nullptr;
  };
  void complete(QueryId id, dns::Bytes&& reply);
  // The single path every reply to a parsed query takes to the client:
  // dns::answer_for_client (hop-by-hop OPT, UDP truncation), or SERVFAIL
  // when the reply cannot be rewritten safely.
  dns::Bytes for_client(dns::ByteView reply, dns::ByteView raw_query, const dns::Query& q, Protocol proto);
  // The cache hook: the one place a query is handed on, and the one place
  // it is taken back. A cache answer arrives as a PoolOutcome like a fresh
  // one and takes the same delivery step.
  std::uint64_t forward(const ClientQuery& cq, loop::TimePoint deadline, upstream::Pool::Done done);
  void cancel_forward(const ClientQuery& cq);
  // The reply built here for a route that needs no exchange (local records,
  // a blocked name, a zone's negative answer, localhost); like an upstream's
  // answer it still goes through for_client.
  dns::Bytes local_reply(dns::ByteView packet, const dns::Query& q, const route::Route& r);
  // Cache hits: answered inside submit(), delivered from the loop (the reply
  // contract) in one batch per loop pass. A hit needs no ClientQuery, budget
  // timer or cache ticket, since nothing can make it wait: one zero-delay
  // timer serves every hit that arrived in the same pass.
  struct ReadyReply {
    QueryId id = 0;
    Protocol proto = Protocol::udp;
    ReplyFn reply;
    dns::Bytes answer;  // already through for_client
  };
  void deliver_ready();

  loop::Scheduler& sched_;
  upstream::Pool& pool_;
  EngineOptions opts_;
  cache::CachingPool* cache_;
  std::shared_ptr<const route::RouteTable> routes_;
  LanForwarders* lan_ = nullptr;
  BlockingPolicy blocking_;
  QueryId next_id_ = 1;
  std::unordered_map<QueryId, ClientQuery> live_;
  QueryCounters counters_;
  std::vector<ReadyReply> ready_;
  std::vector<ReadyReply> delivering_;  // kept for its capacity
  loop::Timer ready_timer_;
};

}  // namespace nxdns::query
