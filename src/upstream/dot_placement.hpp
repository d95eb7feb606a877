#pragma once
// Which DoT session takes the next exchange, and which further slots to dial
// in the background, as a pure function of the upstream's pipelining
// verdict and the slots' states and loads, so the whole policy is
// table-testable without a wire (tests/upstream/dot_placement_test.cpp).
#include <cstddef>
#include <optional>
#include <span>

#include "upstream/dot_session.hpp"
#include "upstream/pipelining_detector.hpp"

namespace nxdns::upstream {

// An upstream that pipelines gets up to this many exchanges on one
// established session (RFC 7766 §6.2.1.1, RFC 7858 §3.3): a household burst
// (30 names) rides the open connection in one round trip instead of waiting
// for new handshakes, as the peers do.
inline constexpr std::size_t dot_pipeline_depth = 32;

// A serial upstream, and a cold burst before any verdict, get this many per
// session, so 30 cold queries spread as 6 per session over 5 sessions
// dialled in parallel. The depth trades two costs, both measured by
// tests/integration/burst_acceptance.sh (the acceptance scenario, 40 ms
// RTT): each parallel dial adds a full handshake's CPU to the daemon at the
// same instant of a cold burst, while a serial upstream answers each
// session's line one query at a time. A shallower line (more dials) slows a
// TLS 1.3 cold burst by the extra handshakes, about half a round trip at a
// depth of 4; a deeper one (fewer dials) leaves the scenario's serial
// upstream (10 ms per query) at its gate by a depth of 8. A cold burst
// cannot tell the two kinds of upstream apart before its first answers, so
// with no verdict it spreads.
inline constexpr std::size_t dot_spread_depth = 6;

struct SlotView {
  SessionState state = SessionState::closed;
  std::size_t load = 0;  // exchanges queued or outstanding
};

struct PlacementChoice {
  std::size_t slot = 0;      // index into the slots given
  bool dial = false;         // that slot is closed: dial it, then queue on it
  std::size_t headroom = 0;  // further closed slots to dial now, taking nothing yet
};

// `slots`: the slots placement may use. `max_open`: how many of them may be
// open (dialled) at once: fewer when the upstream asked for fewer
// connections (edns-tcp-keepalive 0). `exclude`: a slot that must not take
// the exchange (a re-send goes to another session than its original).
// nullopt when no slot can take it (only with `exclude`, or no slots).
std::optional<PlacementChoice> choose_placement(PipeliningVerdict verdict, std::span<const SlotView> slots,
                                                std::size_t max_open,
                                                std::optional<std::size_t> exclude = std::nullopt);

}  // namespace nxdns::upstream
