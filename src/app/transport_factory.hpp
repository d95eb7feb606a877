#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "loop/event_handles.hpp"
#include "loop/scheduler.hpp"
#include "upstream/transport.hpp"

namespace nxdns::app {

// Builds the transport for one configured upstream. Returns nullptr and sets
// `why` when it cannot (CA file unusable, unsupported protocol); the daemon
// then refuses to start rather than run half-configured.
using TransportFactory = std::function<std::unique_ptr<upstream::Transport>(
    const config::Upstream& u, event_base* base, loop::Scheduler& sched, std::string* why)>;

// Per-use limits on what the factory builds. The daemon takes the defaults
// (every slot); `nxdns check` probes with one session and its attempt budget
// as the dial timeout.
struct TransportLimits {
  std::size_t max_sessions = upstream::slots_per_entry;
  std::optional<std::chrono::milliseconds> dial_timeout;
};

// The production factory: DoT on mbedTLS, DoH on libcurl.
TransportFactory default_transport_factory(TransportLimits limits = {});

}  // namespace nxdns::app
