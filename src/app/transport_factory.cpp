#include "app/transport_factory.hpp"

#include <map>

#include "upstream/curl_multi.hpp"
#include "upstream/doh_transport.hpp"
#include "upstream/dot_transport.hpp"

namespace nxdns::app {

namespace {

// The process's one curl multi handle (curl_multi.hpp): made with the first DoH
// upstream, shared by the rest, owned by their transports (the factory only
// remembers it weakly), so it is destroyed with the last of them, before
// the daemon frees its event loop.
struct SharedCurl {
  event_base* base = nullptr;
  std::weak_ptr<upstream::CurlMulti> multi;
  // The contents (SHA-256) of each ca_file the multi's transports were
  // built with. libcurl keys its cached CA store (CURLOPT_CA_CACHE_TIMEOUT,
  // 24 h by default) and the connections it reuses by the CA file's path,
  // not its contents: a DoH upstream rebuilt by a reload for new contents
  // at the same path would keep verifying with the old anchors, and reuse
  // connections they verified. It gets a fresh multi instead, which the
  // upstreams built after it share.
  std::map<std::string, config::Sha256> anchors;

  bool anchors_changed(const config::Upstream& u) const {
    if (!u.ca_file || !u.ca_digest) return false;
    const auto it = anchors.find(*u.ca_file);
    return it != anchors.end() && it->second != *u.ca_digest;
  }
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
    if (!multi || shared->base != base || shared->anchors_changed(u)) {
      multi = upstream::CurlMulti::create(base, why);
      if (!multi) return nullptr;
      shared->base = base;
      shared->multi = multi;
      shared->anchors.clear();
    }
    if (u.ca_file && u.ca_digest) shared->anchors[*u.ca_file] = *u.ca_digest;
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
