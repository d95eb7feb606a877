#include "route/route_table.hpp"

#include "route/lower_case.hpp"

#include <algorithm>

namespace nxdns::route {

std::string LanGroup::key() const {
  std::string k;
  for (const auto& s : servers) k += s.to_string() + " ";
  return k;
}

namespace {

// The loopback addresses' PTRs (RFC 6761 §6.3 has localhost map to them;
// the reverse is what every stub expects, and unbound answers it too).
constexpr const char* loopback_ptrs[] = {
    "1.0.0.127.in-addr.arpa. 3600 IN PTR localhost.",
    "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa. 3600 IN PTR localhost.",
};

std::optional<dns::Bytes> apex_of(const std::string& name) {
  auto wire = dns::name_from_text(name);
  if (!wire) return std::nullopt;
  const std::string lower = lower_case_key(*wire);
  return dns::Bytes(lower.begin(), lower.end());
}

// Wire name `inner` equals `outer` or lies below it (both lower case).
bool at_or_below(std::string_view inner, std::string_view outer) {
  if (inner.size() < outer.size()) return false;
  if (inner.substr(inner.size() - outer.size()) != outer) return false;
  // The match must start on a label boundary: walk inner's labels.
  std::size_t off = 0;
  while (off < inner.size()) {
    if (inner.size() - off == outer.size()) return true;
    off += 1 + static_cast<unsigned char>(inner[off]);
  }
  return outer.size() == 0;
}

}  // namespace

std::shared_ptr<const RouteTable> RouteTable::build(RouteInputs in, std::string* why) {
  auto t = std::make_shared<RouteTable>();
  t->router_ = in.router;

  std::vector<Record> records = std::move(in.records);
  for (const char* line : loopback_ptrs) {
    std::string err;
    if (auto r = parse_record(line, "RFC 6761", &err)) records.push_back(std::move(*r));
  }
  auto built = LocalRecords::build(records, why);
  if (!built) return nullptr;
  t->records_ = std::move(*built);
  for (const Record& r : records) {
    std::string_view owner(reinterpret_cast<const char*>(r.owner.data()), r.owner.size());
    // Every proper ancestor of the owner, down to (not including) the root.
    std::size_t off = 0;
    while (off < owner.size() && owner[off] != 0) {
      off += 1 + static_cast<unsigned char>(owner[off]);
      if (off < owner.size() && owner[off] != 0) t->record_ancestors_.emplace(owner.substr(off));
    }
  }

  // Later entries replace earlier ones of the same name: built-in zones,
  // then the router's, then the operator's.
  std::vector<ZoneRoute> zones;
  auto put = [&zones](ZoneRoute z) {
    for (auto& old : zones) {
      if (old.apex == z.apex) {
        old = std::move(z);
        return;
      }
    }
    zones.push_back(std::move(z));
  };
  for (const SpecialZone& s : special_zones()) {
    if (std::find(in.forward_special.begin(), in.forward_special.end(), s.name) != in.forward_special.end()) continue;
    ZoneRoute z;
    z.kind = s.kind == SpecialKind::loopback ? ZoneRoute::Kind::loopback : ZoneRoute::Kind::empty_zone;
    z.name = std::string(s.name);
    auto apex = apex_of(z.name);
    if (!apex) continue;
    z.apex = std::move(*apex);
    z.negative_ttl = special_negative_ttl;
    z.source = std::string(s.rfc);
    put(std::move(z));
  }
  auto group_for = [t](const std::vector<net::Endpoint>& servers, bool router) {
    LanGroup g{servers, router};
    const std::string key = g.key();
    for (std::size_t i = 0; i < t->lan_groups_.size(); ++i) {
      if (t->lan_groups_[i].key() == key) {
        t->lan_groups_[i].home_router = t->lan_groups_[i].home_router || router;
        return i;
      }
    }
    t->lan_groups_.push_back(std::move(g));
    return t->lan_groups_.size() - 1;
  };
  auto configured = [&in](const std::string& name) {
    return std::any_of(in.zones.begin(), in.zones.end(), [&](const RouteInputs::Zone& z) { return z.name == name; });
  };
  if (in.router) {
    std::vector<std::string> names(std::begin(home_router_zones), std::end(home_router_zones));
    names.insert(names.end(), in.router_reverse_zones.begin(), in.router_reverse_zones.end());
    for (const auto& name : names) {
      if (configured(name)) continue;
      auto apex = apex_of(name);
      if (!apex) continue;
      ZoneRoute z;
      z.kind = ZoneRoute::Kind::lan;
      z.name = name;
      z.apex = std::move(*apex);
      z.lan_group = group_for({*in.router}, true);
      z.fallback_local = true;
      z.negative_ttl = fallback_negative_ttl;
      z.source = "home_router";
      put(std::move(z));
    }
  }
  // A configured zone inside a built-in empty zone falls back to that
  // zone's answer: its names exist nowhere but on the LAN.
  const std::vector<ZoneRoute> builtin = zones;
  for (const auto& c : in.zones) {
    auto apex = apex_of(c.name);
    if (!apex) continue;
    ZoneRoute z;
    z.kind = ZoneRoute::Kind::lan;
    z.name = c.name;
    z.apex = std::move(*apex);
    z.lan_group = group_for(c.servers, false);
    const std::string_view a(reinterpret_cast<const char*>(z.apex.data()), z.apex.size());
    for (const auto& b : builtin) {
      if (b.kind == ZoneRoute::Kind::loopback) continue;
      const std::string_view ba(reinterpret_cast<const char*>(b.apex.data()), b.apex.size());
      if (at_or_below(a, ba)) z.fallback_local = true;
    }
    z.negative_ttl = fallback_negative_ttl;
    z.source = c.source;
    put(std::move(z));
  }
  std::sort(zones.begin(), zones.end(), [](const ZoneRoute& a, const ZoneRoute& b) { return a.name < b.name; });
  t->zones_ = std::move(zones);
  for (std::size_t i = 0; i < t->zones_.size(); ++i) {
    const auto& apex = t->zones_[i].apex;
    t->by_apex_.emplace(std::string(apex.begin(), apex.end()), i);
  }
  return t;
}

const ZoneRoute* RouteTable::zone_for(std::string_view key) const {
  std::string_view rest = key;
  // Longest first: the name itself, then each parent, never the root.
  while (!rest.empty() && rest[0] != 0) {
    if (auto it = by_apex_.find(rest); it != by_apex_.end()) return &zones_[it->second];
    const std::size_t skip = 1 + static_cast<unsigned char>(rest[0]);
    if (skip >= rest.size()) break;
    rest.remove_prefix(skip);
  }
  return nullptr;
}

bool RouteTable::has_records_below(std::string_view key) const {
  return !record_ancestors_.empty() && record_ancestors_.find(key) != record_ancestors_.end();
}

}  // namespace nxdns::route
