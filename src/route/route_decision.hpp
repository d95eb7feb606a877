#pragma once
// A query's route, decided once, before the cache and the upstream pool:
// answered here, asked of a server on the LAN, or sent to the encrypted
// upstreams. A pure function of the question, the route table and whether
// each LAN group can answer now (table-tested in
// tests/route/route_decision_test.cpp); the engine only carries it out.
//
// Order, first match wins:
//   1. Local records (hosts files, `records`) own the name: their answer,
//      or NODATA when they hold other types. The household's own names are
//      never blocked.
//   2. Blocking, when it applies to the client (its group): a name the
//      blocklists block (and no allow rule lets through) gets the blocked
//      answer, wherever it would have gone.
//   3. The longest zone containing the name:
//      - a LAN zone: its group, unless the group cannot answer and the zone
//        falls back locally (the household router is down or serves no DNS:
//        the name gets its negative answer at once instead of a wait);
//      - a built-in empty zone: NXDOMAIN (NODATA for a name with local
//        records below it);
//      - localhost: the loopback answer.
//   4. Otherwise the encrypted upstreams.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "block/block_table.hpp"
#include "dns/message.hpp"
#include "route/local_records.hpp"
#include "route/route_table.hpp"

namespace nxdns::route {

enum class RouteKind : std::uint8_t {
  records,   // answered from local records (lookup.kind answer or nodata)
  blocked,   // a blocklist blocks the name (`blocked` says which rule)
  negative,  // NXDOMAIN or NODATA from a zone answered here
  loopback,  // localhost
  lan,       // zone->lan_group
  upstream,  // the encrypted upstreams
};
inline constexpr std::size_t route_kind_count = 6;
const char* describe(RouteKind k);  // "records", "negative", ...: metric labels

struct Route {
  RouteKind kind = RouteKind::upstream;
  // The zone that decided (negative, loopback, lan), or the zone holding
  // the records (records; may be null).
  const ZoneRoute* zone = nullptr;
  LocalRecords::Lookup lookup;  // records
  dns::Rcode rcode = dns::Rcode::noerror;  // negative: nxdomain, or noerror for NODATA
  // negative: because the zone's LAN group cannot answer now.
  bool fallback = false;
  // blocked: the rule; for any other route, an allow rule that let the name
  // through (verdict allowed) or nothing (not_listed).
  block::Decision block;
};

// The blocklists as one query sees them: the table in use and whether the
// client's group is filtered.
struct BlockingInput {
  const block::BlockTable* table = nullptr;
  bool applies = false;
};

// lan_available(group) says whether the group can take a query now (not
// every server in backoff).
Route decide_route(const RouteTable& table, dns::ByteView qname, std::uint16_t qtype,
                   const std::function<bool(std::size_t)>& lan_available, const BlockingInput& blocking = {});

// The negative answer a LAN zone falls back to: NXDOMAIN, or NODATA when
// local records sit below the name.
Route fallback_route(const RouteTable& table, const ZoneRoute& zone, dns::ByteView qname);
Route fallback_route(const RouteTable& table, const ZoneRoute& zone, std::string_view lower_key);

}  // namespace nxdns::route
