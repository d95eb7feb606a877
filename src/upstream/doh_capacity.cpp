#include "upstream/doh_capacity.hpp"

#include <algorithm>

#include "upstream/transport.hpp"

namespace nxdns::upstream {

std::size_t doh_capacity(DohProtocol protocol, std::size_t stream_limit) {
  switch (protocol) {
    case DohProtocol::unknown:
    case DohProtocol::http1:
      return slots_per_entry;
    case DohProtocol::http2:
      if (stream_limit == 0) return max_in_flight_per_entry;
      return std::clamp<std::size_t>(slots_per_entry * stream_limit, 1, max_in_flight_per_entry);
  }
  return slots_per_entry;
}

std::size_t inferred_stream_limit(std::size_t running, std::size_t open_connections) {
  if (running == 0 || open_connections < slots_per_entry) return 0;
  return (running + open_connections - 1) / open_connections;
}

}  // namespace nxdns::upstream
