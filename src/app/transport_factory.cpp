#include "app/transport_factory.hpp"

#include "upstream/dot_transport.hpp"

namespace nxdns::app {

TransportFactory default_transport_factory() {
  return [](const config::Upstream& u, event_base* base, loop::Scheduler& sched,
            std::string* why) -> std::unique_ptr<upstream::Transport> {
    if (u.protocol == config::Protocol::dot) {
      upstream::DotTransportOptions o;
      o.address = u.address;
      o.tls_name = u.tls_name;
      o.ca_file = u.ca_file;
      o.label = config::redact_url(u.url);
      return upstream::DotTransport::create(base, sched, o, why);
    }
    *why = "DNS-over-HTTPS upstreams are not supported by this build yet";
    return nullptr;
  };
}

}  // namespace nxdns::app
