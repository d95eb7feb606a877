#pragma once
// Whether a DoT upstream's path is down, and which of its sessions to trust
// while it is, as pure functions of plain inputs, so the rule is
// table-testable without a wire (tests/upstream/outage_watch_test.cpp).
//
// A household router that reconnects after a WAN outage usually comes back
// with a new public address: every connection from before the outage is
// black-holed for good, without a FIN or a reset (its packets leave with an
// address nobody answers). Left to the usual rules, the first query after
// the return would ride such a connection, or a dial made during the outage
// whose SYN was lost, and wait for a stall deadline or the dial timeout
// before a fresh connection carried it, instead of one handshake and one
// query (bench/wan_return.sh). So once the outage is seen, those sessions
// are suspect, and the next exchanges go on a dial made for them at once.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "loop/scheduler.hpp"
#include "upstream/dot_session.hpp"
#include "upstream/stall_deadline.hpp"

namespace nxdns::upstream {

// Failures in a row, with no sign of life between them, before the path
// counts as down: one is a lost packet or a resolver's slow answer; two
// with nothing answering is the pattern (the pool's threshold, health.hpp).
inline constexpr unsigned outage_failures = 2;

// What the transport has seen since the upstream last showed life (an
// answer or a completed handshake on any session). Failures are: a written
// exchange past its stall deadline (stall_deadline.hpp); a dial that failed,
// or that waits with exchanges on it past the silent deadline, while no
// session is established (with one up, a dial's trouble is not the path's:
// the established session would show it by its own stalls).
class OutageWatch {
 public:
  // Returns true when this life ends an outage that was seen.
  bool life();
  void failure(loop::TimePoint now);
  bool seen() const { return failures_ >= outage_failures; }
  // The first failure since the last sign of life: a session that has shown
  // no life since then may be on the dead path. Meaningful while failures
  // are counted (always while seen()).
  loop::TimePoint since() const { return since_; }

 private:
  unsigned failures_ = 0;
  loop::TimePoint since_{};
};

// Whether an exchange past its stall deadline counts as a failure of the
// path. Only a silent one (a left-behind one's session answered others),
// and only once it has waited eight of the upstream's fastest round trips:
// the silent deadline without its 1 s cap. The cap keeps a re-send inside
// the attempt budget; it says nothing about the path. On an upstream whose
// fastest answer takes over 125 ms (a far or loaded resolver, a satellite
// link) an answer past the cap is slow, not lost: counting it would retire
// sessions about to answer, and each re-sent exchange would stall the same
// way until the total budget ended it as SERVFAIL.
bool stall_shows_outage(StallKind kind, loop::Duration waited, std::optional<loop::Duration> latency_floor);

// While an outage is seen, a dial younger than this is joined rather than
// another made: one of the upstream's fastest round trips (10 .. 100 ms; 50
// ms while none is known), so the queries of one burst share a handshake.
// The price: a query that joins a dial made just before the return waits
// for the next dial (the next query's, or outage_redial_interval's).
loop::Duration fresh_dial_window(std::optional<loop::Duration> latency_floor);
// While an outage is seen and exchanges still wait on suspect sessions, a
// fresh dial is made for them at most once a second: what the kernel's own
// SYN retransmission does for one connect (RFC 6298 §2.1: 1 s initial RTO),
// on a new connection whose ClientHello can follow at once. An outage then
// costs a dial a second while queries wait, not one per loop turn.
inline constexpr loop::Duration outage_redial_interval = std::chrono::seconds(1);

// One slot, as the outage rule sees it.
struct SessionLife {
  SessionState state = SessionState::closed;
  loop::TimePoint dialed_at{};               // its current connection's dial
  std::optional<loop::TimePoint> alive_at;  // its last answer or completed handshake
};
enum class SlotTrust : std::uint8_t {
  trusted,     // showed life since the outage began
  fresh_dial,  // a dial inside fresh_dial_window()
  suspect,     // from before the outage, or a dial that has had its chance
};
// Closed slots are `suspect` (they carry nothing either way).
SlotTrust slot_trust(const SessionLife& s, loop::TimePoint outage_since, loop::TimePoint now,
                     std::optional<loop::Duration> latency_floor);

// Once a session dialled at `proof_dialed` shows life and so ends an outage
// seen since `since`: whether session `s` is retired. Only when the proof
// was dialled since the outage began (a connection from before answering
// says the old path came back as it was, siblings included); then an
// established session with no life since the outage began, and a dial older
// than the proof (it went into the dead path), would hold whatever
// placement gave it until a stall deadline or the dial timeout.
bool retire_after_outage(const SessionLife& s, loop::TimePoint since, loop::TimePoint proof_dialed);

struct OutageSlotView {
  SessionState state = SessionState::closed;
  std::size_t load = 0;
  SlotTrust trust = SlotTrust::suspect;
  loop::TimePoint dialed_at{};
  bool carries_live = false;  // an exchange still waiting for its answer has a copy on it
};
struct OutagePlacement {
  std::size_t slot = 0;
  bool dial = false;    // dial that slot (closed, or closed first: `replace`)
  bool replace = false; // the slot holds a suspect session: close it first
};
// Where the next exchange goes while an outage is seen: the least loaded
// trusted session or fresh dial below `depth`; else a dial of a free slot
// (within `max_open`, as placement's); else the slot of the oldest suspect
// dial, or of a suspect established session that carries no live exchange,
// given up for a fresh dial (the 8 slots stay the cap). nullopt when none of
// that is possible (every slot suspect and carrying exchanges, or trusted
// and full, or `exclude`d): placement's usual rule applies.
std::optional<OutagePlacement> outage_placement(std::span<const OutageSlotView> slots, std::size_t max_open,
                                                std::size_t depth, std::optional<std::size_t> exclude = std::nullopt);

}  // namespace nxdns::upstream
