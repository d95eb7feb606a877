// The `listen:` and `http:` sections, and the check that the web listener and
// the DNS listeners do not need the same TCP port.
#include "config/sections.hpp"

#include <netinet/in.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/url.hpp"
#include "net/host_name.hpp"

namespace nxdns::config::detail {

void read_listen(const YamlReader& r, const YAML::Node& n, Config& cfg, ListenerMarks& marks) {
  const std::string path = "listen";
  if (!n.IsSequence()) r.fail(path, n.Mark(), "expected a list of addresses, got " + describe(n));
  if (n.size() == 0) r.fail(path, n.Mark(), "must list at least one address");
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node item = *it;
    const std::string p = at(path, cfg.listen.size());
    if (item.IsNull()) r.fail(p, item.Mark(), "empty list entry");
    net::Endpoint e = r.read_endpoint(item, p, kDefaultDnsPort);
    for (std::size_t j = 0; j < cfg.listen.size(); ++j) {
      const net::Endpoint& o = cfg.listen[j];
      if (o == e) {
        r.fail(p, item.Mark(), e.to_string() + " is listed twice (first as " + at(path, j) + ")");
      }
      if (o.family() == e.family() && o.port() == e.port() && (net::is_unspecified(o) || net::is_unspecified(e))) {
        r.fail(p, item.Mark(),
               e.to_string() + " overlaps " + at(path, j) + " " + o.to_string() +
                   " (a wildcard address takes the port on every address of its family)");
      }
    }
    cfg.listen.push_back(e);
    marks.listen.push_back(item.Mark());
  }
}

namespace {

// One http.allowed_hosts entry: a host name, an IPv4 literal or a bracketed
// IPv6 literal, without a port (the Host check does not compare ports).
// Written into `out`; "" when good, else why not.
std::string read_allowed_host(std::string_view s, net::HostList& out) {
  if (s.find('*') != std::string_view::npos) {
    return "wildcards are not accepted: a pattern would let names no one listed through, and with them DNS "
           "rebinding; list each name";
  }
  if (s.find('/') != std::string_view::npos) return "expected a host name or IP address, not a URL";
  std::string why;
  const auto hp = net::split_host_port(s, "[2001:db8::1]", &why);
  if (!hp) return why;
  if (hp->port_text) return "no port here: the Host check accepts any port";
  if (hp->bracketed) {
    const auto e = net::make_endpoint(hp->host, 0);
    if (!e || e->family() != AF_INET6) return "not a valid IPv6 address";
    out.addresses.push_back(*e);
    return "";
  }
  if (const auto e = net::make_endpoint(hp->host, 0)) {
    out.addresses.push_back(*e);
    return "";
  }
  const auto name = net::normalize_host_name(hp->host);
  if (!name) {
    return "not a host name (letters, digits and hyphens in dot-separated labels, not digits alone) "
           "or IP address";
  }
  out.names.push_back(*name);
  return "";
}

void read_allowed_hosts(const YamlReader& r, const YAML::Node& n, net::HostList& out) {
  const std::string path = "http.allowed_hosts";
  if (!n.IsSequence()) r.fail(path, n.Mark(), "expected a list of host names or IP addresses, got " + describe(n));
  std::vector<std::string> seen;  // as compared, for "listed twice"
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node item = *it;
    const std::string p = at(path, seen.size());
    if (item.IsNull()) r.fail(p, item.Mark(), "empty list entry");
    const std::string s = r.read_nonempty(item, p);
    const std::size_t names = out.names.size();
    if (const std::string why = read_allowed_host(s, out); !why.empty()) r.fail(p, item.Mark(), quote(s) + ": " + why);
    const std::string key = out.names.size() > names ? out.names.back() : out.addresses.back().host_string();
    for (std::size_t j = 0; j < seen.size(); ++j) {
      if (seen[j] == key) r.fail(p, item.Mark(), quote(s) + " is listed twice (first as " + at(path, j) + ")");
    }
    seen.push_back(key);
  }
}

}  // namespace

void read_http(const YamlReader& r, const YAML::Node& n, Config& cfg, ListenerMarks& marks) {
  const std::string path = "http";
  const Map m = r.read_map(n, path, {"enabled", "listen", "allowed_hosts"}, "a mapping");
  if (const Entry* e = find(m, "enabled")) cfg.http.enabled = r.read_bool(e->value, join(path, "enabled"));
  if (const Entry* e = find(m, "listen")) {
    cfg.http.listen = r.read_endpoint(e->value, join(path, "listen"), kDefaultHttpPort);
    marks.http_listen = e->value.Mark();
  }
  if (const Entry* e = find(m, "allowed_hosts")) read_allowed_hosts(r, e->value, cfg.http.allowed_hosts);
}

void check_http_vs_dns(const YamlReader& r, const Config& cfg, const ListenerMarks& marks) {
  if (!cfg.http.enabled) return;
  const net::Endpoint& h = cfg.http.listen;
  for (std::size_t j = 0; j < cfg.listen.size(); ++j) {
    const net::Endpoint& d = cfg.listen[j];
    if (d.family() != h.family() || d.port() != h.port()) continue;
    // DNS listens on TCP too, so the same port is a bind conflict.
    if (d == h || net::is_unspecified(d) || net::is_unspecified(h)) {
      const std::string dns = "listen[" + std::to_string(j) + "]";
      if (marks.http_listen) {
        r.fail("http.listen", *marks.http_listen,
               h.to_string() + " conflicts with " + dns + " " + d.to_string() + " (both need TCP on that port)");
      }
      r.fail(dns, j < marks.listen.size() ? marks.listen[j] : YAML::Mark::null_mark(),
             d.to_string() + " conflicts with the web listener's default http.listen " + h.to_string() +
                 " (both need TCP on that port); move one of them");
    }
  }
}

}  // namespace nxdns::config::detail
