#pragma once
// The upstream pool: entries in priority order, each with a bounded number of
// exchanges in flight and an exact FIFO of waiters beyond that, health with
// backoff, and failover.
//
// Guarantees (all state is owned by the event loop; no locks):
// - At most the entry transport's capacity() (never above
//   max_in_flight_per_entry) exchanges run against an entry at once.
//   Concurrent callers overlap up to that cap (the predecessor serialized
//   them: the field defect). When the capacity grows the transport says so
//   and the FIFO is pumped.
// - Beyond the cap, callers wait in the entry's FIFO in arrival order. The
//   queue depth is exact. A waiter is counted in queued_total and
//   queued_seconds_total when it leaves the queue, whether by acquiring
//   capacity or by being cancelled (the total budget running out in the queue
//   is precisely the failure worth counting).
// - Failover walks entries in priority order, each at most once per request.
//   An entry in backoff (or half-open with its one probe already running,
//   health.hpp) is skipped on the first pass, re-checked when a waiter
//   acquires capacity at it, and used as a last resort when nothing healthy
//   is left.
// - An answer whose RCODE says the upstream could not or would not serve the
//   query (SERVFAIL, REFUSED, NOTIMP, FORMERR: answer_verdict.hpp) is a failed
//   attempt for failover; when every entry answered so, the best of those
//   answers is delivered (ok, error_answer set), not a made-up SERVFAIL.
// - Each attempt is bounded by min(attempt budget, time left before the
//   caller's deadline). When the last untried entry's attempt ran out of its
//   budget, the request gets one more attempt at that entry while the
//   deadline allows (the transport closed the session that carried the
//   abandoned exchange, so it runs on another). The caller still enforces
//   its total budget through cancel(), which leaves the queue or frees the
//   capacity cleanly.
// - Completions are delivered from the loop, never from inside submit() or
//   cancel().
// - Reconfiguration (apply(), the daemon's reload) never touches a kept
//   entry's transport, health or counters. A draining entry admits nothing
//   new: its waiters go on to the other entries at once, its exchanges in
//   flight finish (or fail over) within their attempt budget, and then its
//   sessions close and the transport is destroyed.
#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "loop/scheduler.hpp"
#include "upstream/budgets.hpp"
#include "upstream/health.hpp"
#include "upstream/latency_histogram.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

struct EntrySpec {
  std::size_t index = 0;  // position in the configuration (the `upstream` label)
  std::string label;      // redacted URL
  int priority = 0;
  std::unique_ptr<Transport> transport;
};

// One finished attempt, for diagnostics (episodes) and logs. Neutral answers
// (SERVFAIL: answer_verdict.hpp) are not reported: like health, episodes
// track the upstream, not the names it fails to resolve.
struct AttemptReport {
  std::size_t entry_index = 0;  // configuration index
  const std::string* label = nullptr;
  Cause cause = Cause::ok;
  const std::string* detail = nullptr;
  loop::Duration latency{};
};

struct PoolOptions {
  loop::Duration attempt_budget = default_attempt_budget;
  HealthPolicy health;
  std::function<void(const AttemptReport&)> on_attempt;
};

// What a request comes to. When ok, `response` answers the query handed to
// submit(): it carries that query's ID and was validated against its
// question by the transport that received it (Transport::Completion), the
// only check it gets. cache::CachingPool, with the same calling convention,
// keeps the promise for each client (the client's ID and question bytes).
struct PoolOutcome {
  bool ok = false;  // `response` holds an answer to relay
  // ok, but every entry answered with an error RCODE and `response` is the
  // best of those answers (error_answer_rank).
  bool error_answer = false;
  dns::Bytes response;
  std::size_t entry_index = 0;  // configuration index of the entry that answered / failed last
  Cause cause = Cause::ok;      // last failure when !ok
  std::string detail;
  std::uint32_t attempts = 0;
};

struct EntrySnapshot {
  std::size_t index = 0;
  std::string label;
  std::string kind;
  int priority = 0;
  std::uint32_t slots = 0;
  std::uint32_t capacity = 0;  // admission cap now (Transport::capacity)
  std::uint32_t in_flight = 0;
  std::uint32_t peak_in_flight = 0;  // tests only
  std::uint32_t queue_depth = 0;
  std::uint64_t queued_total = 0;
  double queued_seconds_total = 0.0;
  HealthState health = HealthState::healthy;
  loop::Duration backoff_remaining{};
  std::uint32_t consecutive_failures = 0;
  std::uint64_t backoffs_total = 0;
  // Cause of the latest failed attempt; ok after a success (or before any
  // failure). certificate_clock_behind here: the upstream is unusable only
  // because this host's clock is behind its certificate.
  Cause last_failure = Cause::ok;
  std::array<std::uint64_t, cause_count> outcomes{};
  // Answers that failed over, by header RCODE (0..15).
  std::array<std::uint64_t, 16> error_answers{};
  LatencyHistogram latency;
  TransportStats transport;
};

// What the cache's refresh rules read of an entry: its health and load,
// without the monitoring snapshot's labels, counters and histograms (the
// rules run on cache hits).
struct EntryLoad {
  HealthState health = HealthState::healthy;
  std::uint32_t in_flight = 0;
  std::uint32_t queue_depth = 0;
};

// A reload's changes to the entries (app/reload_plan.hpp decides them).
struct PoolChange {
  struct Kept {
    std::size_t old_index = 0;  // configuration indexes
    std::size_t new_index = 0;
    int priority = 0;
  };
  std::vector<Kept> keep;
  std::vector<std::size_t> drain;  // configuration indexes before the reload
  std::vector<EntrySpec> start;
  std::optional<loop::Duration> attempt_budget;
  // Called once per drained entry, when its last exchange is over and its
  // sessions are closed (for the operator's log).
  std::function<void(std::size_t old_index, const std::string& label)> on_drained;
};

class Pool {
 public:
  using Ticket = std::uint64_t;
  using Done = std::function<void(PoolOutcome&&)>;

  // Entries are sorted by priority, stably (ties keep configuration order).
  Pool(loop::Scheduler& sched, std::vector<EntrySpec> entries, PoolOptions opts);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // `deadline`: when the caller's total budget runs out. No attempt runs past
  // it, and the one extra attempt after an attempt timeout needs time left.
  Ticket submit(dns::Bytes query, loop::TimePoint deadline, Done done);
  // No deadline: attempts are bounded by the attempt budget alone, and an
  // attempt timeout is not followed by another attempt at the same entry.
  Ticket submit(dns::Bytes query, Done done) {
    return submit(std::move(query), loop::TimePoint::max(), std::move(done));
  }
  // The caller gives up (total budget, client gone). `done` never runs after
  // this. Unknown or finished tickets are ignored.
  void cancel(Ticket t);

  std::vector<EntrySnapshot> snapshot() const;
  // Entries serving (not draining), by health and load only.
  std::vector<EntryLoad> loads() const;
  // Entries serving (not draining).
  std::size_t entry_count() const;
  // Entries whose drain is not over yet (tests, logs).
  std::size_t draining_count() const;
  // Reload: renumbers and re-prioritises kept entries, adds the started
  // ones and drains the removed ones, in that order (waiters leaving a
  // draining entry can go to a started one). Unknown indexes are ignored.
  void apply(PoolChange change);
  // Whether some serving entry has had no failed attempt since its last
  // success (health `healthy`). When none has, every upstream failed
  // recently: the cache serves stale data at once rather than after its
  // client response timer (RFC 8767 §5, "failure recheck").
  bool has_healthy_entry() const;
  // Whether some serving entry would take an attempt now (not in backoff,
  // or half-open with its probe free). When none would, a caller with an
  // answer of its own (a LAN zone's local fallback) gives it at once.
  bool has_admitting_entry() const;
  std::size_t requests() const { return requests_.size(); }
  // Shutdown: closes every transport's sessions.
  void close_all();
  // The wall clock stepped (NTP set it, a person did): every entry whose
  // latest failure was a certificate check -- judged by the old clock --
  // forgets its failures and backoff, so the next query verifies again at
  // once. Returns the configuration indexes of the entries reset.
  std::vector<std::size_t> clock_stepped();

 private:
  struct Entry;
  // Lives in its hash node (one allocation per request, not two).
  struct Request {
    enum class Phase { choosing, queued, in_flight, completing };

    Ticket ticket;
    dns::Bytes query;
    loop::TimePoint deadline;
    Done done;
    std::vector<bool> tried;  // by sorted entry position
    Phase phase = Phase::choosing;
    std::size_t entry = 0;
    bool chosen_healthy = false;  // chosen on the first pass (not a last resort)
    std::list<Ticket>::iterator queue_pos;
    loop::TimePoint queued_at{};
    Transport::ExchangeId exchange = 0;
    Health::ProbeToken probe = 0;  // of the attempt in flight
    loop::TimePoint attempt_started{};
    loop::Duration attempt_limit{};  // the attempt budget, or less when the deadline is nearer
    bool timeout_retry_used = false;
    // The best error answer so far (answer_verdict.hpp), relayed when nothing
    // better arrives.
    dns::Bytes best_error;
    int best_error_rank = -1;
    std::size_t best_error_index = 0;
    loop::Timer timer;  // attempt budget
    std::uint32_t attempts = 0;
    Cause last_cause = Cause::ok;
    std::string last_detail;
    std::size_t last_index = 0;
    PoolOutcome outcome;

    Request(loop::Scheduler& s, Ticket t, dns::Bytes q, loop::TimePoint dl, Done d, std::size_t n)
        : ticket(t), query(std::move(q)), deadline(dl), done(std::move(d)), tried(n, false), timer(s) {}
  };

  void advance(Request& r);
  void try_acquire(Request& r, std::size_t e);
  void start_attempt(Request& r, std::size_t e);
  void on_completion(Ticket t, ExchangeResult&& res);
  void on_attempt_timeout(Ticket t);
  void attempt_failed(Request& r, Cause c, std::string detail);
  void error_answer(Request& r, std::uint8_t rcode, dns::Bytes&& response);
  loop::Duration attempt_limit(const Request& r) const;
  void release(std::size_t e);
  void pump(std::size_t e);
  std::size_t admission_cap(std::size_t e) const;
  void leave_queue(Request& r);
  // Settles the request with this outcome (ok when cause is Cause::ok) and
  // delivers it from the loop.
  void finish(Request& r, std::size_t entry_index, Cause cause, std::string detail, dns::Bytes response = {});
  bool other_healthy_candidate(const Request& r, std::size_t except) const;
  static bool tried(const Request& r, std::size_t e);
  void sort_order();
  void add_entry(EntrySpec&& spec);
  void begin_drain(std::size_t e);
  void retire_drained();
  void deliver_settled();

  loop::Scheduler& sched_;
  PoolOptions opts_;
  std::vector<std::unique_ptr<Entry>> entries_;
  // Positions in entries_ of the serving entries, by priority (ties keep
  // configuration order): the order failover walks. Entries added by a
  // reload are appended to entries_ (positions held by requests stay valid)
  // and take their place here.
  std::vector<std::size_t> order_;
  std::function<void(std::size_t, const std::string&)> on_drained_;
  // Drained entries are retired from the loop, never from inside their own
  // transport's completion.
  loop::Timer retire_;
  std::unordered_map<Ticket, Request> requests_;
  Ticket next_ticket_ = 1;
  // Settled requests, delivered in settling order from one zero-delay timer
  // (deliver_settled); a delivery may settle more, which wait for the next.
  std::vector<Ticket> settled_;
  std::vector<Ticket> delivering_;  // kept for its capacity
  loop::Timer deliver_timer_;
};

}  // namespace nxdns::upstream
