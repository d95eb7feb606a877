#include "app/transport_factory.hpp"

namespace nxdns::app {

TransportFactory default_transport_factory() {
  return [](const config::Upstream& u, event_base*, loop::Scheduler&, std::string* why) -> std::unique_ptr<upstream::Transport> {
    *why = u.protocol == config::Protocol::dot ? "DoT transport not available" : "DoH transport not available";
    return nullptr;
  };
}

}  // namespace nxdns::app
