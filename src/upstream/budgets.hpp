#pragma once
// The default time budgets of a forwarded query and of the connections that
// carry it. Stated once: config/ gives them to absent keys (budgets.attempt_ms,
// budgets.total_ms), and the options of the pool, the engine, the cache and
// the transports start from them.
#include <chrono>

namespace nxdns::upstream {

// One exchange with one upstream. Two fit in the total budget, so a failed
// or silent upstream still leaves time to try another.
inline constexpr std::chrono::milliseconds default_attempt_budget{2000};
// A client query from arrival to answer, time spent waiting in an
// upstream's queue and every failover included; past it the client gets
// SERVFAIL.
inline constexpr std::chrono::milliseconds default_total_budget{5000};
// TCP connect + TLS handshake of a new upstream connection (a DoT session,
// a DoH connection). It bounds the dial; the exchanges waiting on it are
// bounded by their attempt budget, which is shorter.
inline constexpr std::chrono::milliseconds default_dial_timeout{5000};

}  // namespace nxdns::upstream
