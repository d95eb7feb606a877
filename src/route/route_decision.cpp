#include "route/route_decision.hpp"

#include "route/lower_case.hpp"

namespace nxdns::route {

const char* describe(RouteKind k) {
  switch (k) {
    case RouteKind::records: return "records";
    case RouteKind::blocked: return "blocked";
    case RouteKind::negative: return "negative";
    case RouteKind::loopback: return "loopback";
    case RouteKind::lan: return "lan";
    case RouteKind::upstream: return "upstream";
  }
  return "upstream";
}

Route fallback_route(const RouteTable& table, const ZoneRoute& zone, std::string_view lower_key) {
  Route r;
  r.kind = RouteKind::negative;
  r.zone = &zone;
  r.rcode = table.has_records_below(lower_key) ? dns::Rcode::noerror : dns::Rcode::nxdomain;
  return r;
}

Route fallback_route(const RouteTable& table, const ZoneRoute& zone, dns::ByteView qname) {
  return fallback_route(table, zone, lower_case_key(qname));
}

Route decide_route(const RouteTable& table, dns::ByteView qname, std::uint16_t qtype,
                   const std::function<bool(std::size_t)>& lan_available, const BlockingInput& blocking) {
  Route r;
  // One lower-case copy of the name serves every table below.
  const std::string key = lower_case_key(qname);
  const ZoneRoute* zone = table.zone_for(key);
  r.lookup = table.records().find_lower(key, qtype);
  if (r.lookup.kind != LocalRecords::Lookup::Kind::absent) {
    r.kind = RouteKind::records;
    r.zone = zone;
    return r;
  }
  r.lookup = {};
  if (blocking.applies && blocking.table) {
    r.block = blocking.table->decide(qname);
    if (r.block.verdict == block::Verdict::blocked) {
      r.kind = RouteKind::blocked;
      return r;
    }
  }
  if (!zone) return r;  // upstream
  switch (zone->kind) {
    case ZoneRoute::Kind::lan:
      if (zone->fallback_local && !lan_available(zone->lan_group)) {
        const block::Decision allowed = r.block;
        r = fallback_route(table, *zone, key);
        r.fallback = true;
        r.block = allowed;
        return r;
      }
      r.kind = RouteKind::lan;
      r.zone = zone;
      return r;
    case ZoneRoute::Kind::empty_zone: {
      const block::Decision allowed = r.block;
      r = fallback_route(table, *zone, key);
      r.block = allowed;
      return r;
    }
    case ZoneRoute::Kind::loopback:
      r.kind = RouteKind::loopback;
      r.zone = zone;
      return r;
  }
  return r;
}

}  // namespace nxdns::route
