// The `listen:` and `http:` sections, and the check that the web listener and
// the DNS listeners do not need the same TCP port.
#include "config/sections.hpp"

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

void read_http(const YamlReader& r, const YAML::Node& n, Config& cfg, ListenerMarks& marks) {
  const std::string path = "http";
  const Map m = r.read_map(n, path, {"enabled", "listen"}, "a mapping");
  if (const Entry* e = find(m, "enabled")) cfg.http.enabled = r.read_bool(e->value, join(path, "enabled"));
  if (const Entry* e = find(m, "listen")) {
    cfg.http.listen = r.read_endpoint(e->value, join(path, "listen"), kDefaultHttpPort);
    marks.http_listen = e->value.Mark();
  }
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
