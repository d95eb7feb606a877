#pragma once
// What one DoT upstream's TLS handshakes cost, by kind: full (certificate
// chain received and verified) or resumed (from a stored ticket, see
// tls_session_cache.hpp). Shared by the upstream's slots, rendered on
// /metrics; the durations run from TCP established to TLS finished, so they
// show the round trips and CPU that resumption saves.
#include <cstdint>

#include "upstream/latency_histogram.hpp"

namespace nxdns::upstream {

enum class HandshakeKind : std::uint8_t { full, resumed };
inline const char* describe(HandshakeKind k) { return k == HandshakeKind::resumed ? "resumed" : "full"; }

struct HandshakeStats {
  std::uint64_t full = 0;
  std::uint64_t resumed = 0;
  // A ticket was offered and the server answered with a full handshake
  // instead (also counted in `full`): a fallback in the same attempt, never
  // a failure.
  std::uint64_t resumption_refused = 0;
  LatencyHistogram full_duration;
  LatencyHistogram resumed_duration;

  void record(HandshakeKind k, bool ticket_offered, loop::Duration took) {
    if (k == HandshakeKind::resumed) {
      ++resumed;
      resumed_duration.observe(took);
      return;
    }
    ++full;
    if (ticket_offered) ++resumption_refused;
    full_duration.observe(took);
  }
  const LatencyHistogram& duration(HandshakeKind k) const {
    return k == HandshakeKind::resumed ? resumed_duration : full_duration;
  }
  std::uint64_t count(HandshakeKind k) const { return k == HandshakeKind::resumed ? resumed : full; }
};

}  // namespace nxdns::upstream
