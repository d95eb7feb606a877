#include "app/transport_factory.hpp"

#include "upstream/curl_multi.hpp"
#include "upstream/doh_transport.hpp"
#include "upstream/dot_transport.hpp"

namespace nxdns::app {

namespace {

// The process's one curl multi handle (DESIGN.md): made with the first DoH
// upstream, shared by the rest, owned by their transports (the factory only
// remembers it weakly), so it is destroyed with the last of them, before
// the daemon frees its event loop.
struct SharedCurl {
  event_base* base = nullptr;
  std::weak_ptr<upstream::CurlMulti> multi;
};

}  // namespace

TransportFactory default_transport_factory(TransportLimits limits) {
  auto shared = std::make_shared<SharedCurl>();
  return [shared, limits](const config::Upstream& u, event_base* base, loop::Scheduler& sched,
                          std::string* why) -> std::unique_ptr<upstream::Transport> {
    if (u.protocol == config::Protocol::dot) {
      upstream::DotTransportOptions o;
      o.address = u.address;
      o.tls_name = u.tls_name;
      o.ca_file = u.ca_file;
      o.label = config::redact_url(u.url);
      o.max_sessions = limits.max_sessions;
      if (limits.dial_timeout) o.dial_timeout = *limits.dial_timeout;
      return upstream::DotTransport::create(base, sched, o, why);
    }
    std::shared_ptr<upstream::CurlMulti> multi = shared->multi.lock();
    if (!multi || shared->base != base) {
      multi = upstream::CurlMulti::create(base, why);
      if (!multi) return nullptr;
      shared->base = base;
      shared->multi = multi;
    }
    upstream::DohTransportOptions o;
    o.address = u.address;
    o.tls_name = u.tls_name;
    o.path = u.path;
    o.ca_file = u.ca_file;
    o.label = config::redact_url(u.url);
    o.use_get = u.method == config::DohMethod::get;
    if (limits.dial_timeout) o.dial_timeout = *limits.dial_timeout;
    return upstream::DohTransport::create(std::move(multi), sched, o, why);
  };
}

}  // namespace nxdns::app
