#pragma once
// How many exchanges a DoH upstream can really run at once, as a pure
// function of what the transport has learned, so the pool admits exactly
// that many and the rest wait in its visible FIFO. Beyond
// it curl would hold transfers in its own pending list (behind
// CURLMOPT_MAX_HOST_CONNECTIONS, or behind a full HTTP/2 connection): a
// queue no gauge shows and no budget sees.
#include <cstddef>
#include <cstdint>

namespace nxdns::upstream {

enum class DohProtocol : std::uint8_t {
  unknown,  // no answer yet: the first connection has not shown its protocol
  http1,    // one request per connection (RFC 9112; curl does not pipeline)
  http2,    // streams multiplexed per connection (RFC 9113)
};

// connections x requests each connection can carry:
// - unknown: slots_per_entry x 1 — every connection carries at least one,
//   and guessing higher would hide a queue on an HTTP/1.1 upstream;
// - http1: slots_per_entry x 1;
// - http2: slots_per_entry x the server's per-connection stream limit when
//   learned (`stream_limit` > 0), else max_in_flight_per_entry (RFC 9113
//   §6.5.2 recommends a limit of at least 100); never above
//   max_in_flight_per_entry, never below 1.
std::size_t doh_capacity(DohProtocol protocol, std::size_t stream_limit);

// The stream limit an HTTP/2 server imposes, inferred when curl holds
// transfers back although `open_connections` (every slot) are open,
// carrying `running` streams between them: curl then runs as many as the
// server allows, slots x limit, so the limit is running / connections,
// rounded up (a stream or two may be between answers: running never
// exceeds slots x limit, so rounding up never overstates). The caller judges
// only while no connection is being dialed (held transfers may be waiting
// for a handshake, not a stream) and keeps the lowest observation (one
// taken while curl re-sends streams the server refused, RFC 9113 §8.7,
// reads high; the next corrects it).
// 0 (nothing learned) unless every slot has a connection: while a slot is
// free curl dials for a full connection instead of holding, and an HTTP/2
// server with a generous limit never needs more than one connection, so
// one closing connection (GOAWAY after N requests) teaches nothing.
std::size_t inferred_stream_limit(std::size_t running, std::size_t open_connections);

}  // namespace nxdns::upstream
