#pragma once
#include <functional>
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

// The production factory: DoT on mbedTLS, DoH on libcurl.
TransportFactory default_transport_factory();

}  // namespace nxdns::app
