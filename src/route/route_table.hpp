#pragma once
// Everything a query's route is decided from, built once from the
// configuration and the home network found, and immutable afterwards: a
// reload or a new router builds a new table and swaps it in whole, so a
// decision never sees half of one and half of another.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dns/message.hpp"
#include "net/endpoint.hpp"
#include "route/local_records.hpp"
#include "route/special_zones.hpp"

namespace nxdns::route {

// One set of plain-DNS servers on the LAN (tried in order, failing over like
// the encrypted upstreams). Zones that name the same servers share a group.
struct LanGroup {
  std::vector<net::Endpoint> servers;
  bool home_router = false;  // the group is the home router's
  std::string key() const;   // the servers, for matching groups across tables
};

struct ZoneRoute {
  enum class Kind : std::uint8_t {
    lan,         // asked of a LAN group
    empty_zone,  // NXDOMAIN (RFC 6303 §3), NODATA above local records
    loopback,    // RFC 6761 §6.3
  };
  Kind kind = Kind::empty_zone;
  std::string name;  // presentation form, lower case, no trailing dot
  dns::Bytes apex;   // wire form, lower case
  std::size_t lan_group = 0;
  // lan only: when the group cannot answer (every server in backoff, or
  // this query's attempts failed), the name gets the local negative answer
  // (negative_ttl) instead of SERVFAIL. Set for the home router's zones and
  // for zones inside a built-in one: their names exist nowhere else.
  bool fallback_local = false;
  std::uint32_t negative_ttl = special_negative_ttl;
  // Why this zone exists: "local_zones[0] (line 12)", "home_router",
  // "RFC 6303".
  std::string source;
};

struct RouteInputs {
  struct Zone {
    std::string name;  // presentation form
    std::vector<net::Endpoint> servers;
    std::string source;
  };
  std::vector<Zone> zones;  // configured (local_zones); each name once
  // The home router (found or configured) and, when found, the reverse
  // zones of this host's private subnets. Its zones are home_router_zones
  // plus those, each unless a configured zone has the same name.
  std::optional<net::Endpoint> router;
  std::vector<std::string> router_reverse_zones;
  std::vector<Record> records;  // hosts files and `records`, in order
  // Built-in zones left out of the table (sent upstream like other names).
  std::vector<std::string> forward_special;
};

// The names a home router serves on every common firmware: the de-facto
// `lan` (OpenWrt, dnsmasq defaults), `home.arpa` (RFC 8375) and `internal`
// (reserved for private use by ICANN).
inline constexpr const char* home_router_zones[] = {"lan", "home.arpa", "internal"};

class RouteTable {
 public:
  // nullptr with `why` when the records conflict (LocalRecords::build).
  static std::shared_ptr<const RouteTable> build(RouteInputs in, std::string* why);

  // The longest zone containing the name whose lower-case wire form is
  // `key` (route::lower_case_key), or nullptr when none does.
  const ZoneRoute* zone_for(std::string_view key) const;
  // Whether some local record is owned by a name strictly below `key`
  // (which then exists as an empty non-terminal: NODATA, not NXDOMAIN).
  bool has_records_below(std::string_view key) const;
  const LocalRecords& records() const { return records_; }
  const std::vector<LanGroup>& lan_groups() const { return lan_groups_; }
  // Every zone, sorted by name (status page, `nxdns why`).
  const std::vector<ZoneRoute>& zones() const { return zones_; }
  const std::optional<net::Endpoint>& router() const { return router_; }

 private:
  // Looked up by string_view: a query's suffixes are views into its one
  // lower-case copy, never a string each.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<ZoneRoute> zones_;
  std::unordered_map<std::string, std::size_t, KeyHash, std::equal_to<>> by_apex_;  // lower-case wire apex -> zones_
  std::unordered_set<std::string, KeyHash, std::equal_to<>> record_ancestors_;     // lower-case wire names
  LocalRecords records_;
  std::vector<LanGroup> lan_groups_;
  std::optional<net::Endpoint> router_;
};

}  // namespace nxdns::route
