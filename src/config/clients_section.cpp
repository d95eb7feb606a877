// The `access_control:` and `client_limits:` sections: which clients may ask,
// and how fast each may.
#include "config/sections.hpp"

#include <string>

#include "config/url.hpp"

namespace nxdns::config::detail {

// access_control: {allow: [CIDR...], refuse: [CIDR...]}. Longest prefix
// decides, so the order of the lists carries no meaning; the same prefix
// twice would, and is rejected.
void read_access_control(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "access_control";
  const Map m = r.read_map(n, path, {"allow", "refuse"}, "a mapping with allow and/or refuse lists of CIDR prefixes");
  struct Seen {
    server::Cidr net;
    std::string path;
    int line;
  };
  std::vector<Seen> seen;
  for (const Entry& e : m) {
    const std::string p = join(path, e.key);
    const server::Access access = e.key == "allow" ? server::Access::allow : server::Access::refuse;
    if (!e.value.IsSequence()) {
      r.fail(p, e.value.Mark(), "expected a list of CIDR prefixes (e.g. [192.168.0.0/16, \"fd00::/8\"]), got " + describe(e.value));
    }
    std::size_t i = 0;
    for (auto it = e.value.begin(); it != e.value.end(); ++it, ++i) {
      const YAML::Node item = *it;
      const std::string ip = at(p, i);
      if (item.IsNull()) r.fail(ip, item.Mark(), "empty list entry");
      const std::string text = r.read_nonempty(item, ip);
      std::string why;
      const std::optional<server::Cidr> net = server::parse_cidr(text, &why);
      if (!net) r.fail(ip, item.Mark(), "bad prefix " + quote(text) + ": " + why);
      for (const Seen& s : seen) {
        if (s.net == *net) {
          r.fail(ip, item.Mark(),
                 net->to_string() + " is already given as " + s.path + " (line " + std::to_string(s.line) +
                     "); each prefix may appear once");
        }
      }
      seen.push_back(Seen{*net, ip, item.Mark().line + 1});
      cfg.access_rules.push_back(server::AccessRule{*net, access});
    }
  }
}

void read_client_limits(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "client_limits";
  const Map m = r.read_map(n, path, {"queries_per_second", "burst"}, "a mapping");
  const Entry* q = find(m, "queries_per_second");
  const Entry* b = find(m, "burst");
  if (q) {
    cfg.client_rate.per_second =
        static_cast<std::uint32_t>(r.read_int(q->value, join(path, "queries_per_second"), 0, 1'000'000));
    // The default burst is ten seconds' worth, as in the compiled default.
    cfg.client_rate.burst = cfg.client_rate.per_second * 10;
  }
  if (b) {
    if (q && cfg.client_rate.per_second == 0) {
      r.fail(join(path, "burst"), b->key_node.Mark(), "has no effect when queries_per_second is 0 (no limit); remove it");
    }
    cfg.client_rate.burst = static_cast<std::uint32_t>(r.read_int(b->value, join(path, "burst"), 1, 10'000'000));
  }
}

}  // namespace nxdns::config::detail
