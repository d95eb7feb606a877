#include "route/route_decision.hpp"

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

Route fallback_route(const RouteTable& table, const ZoneRoute& zone, dns::ByteView qname) {
  Route r;
  r.kind = RouteKind::negative;
  r.zone = &zone;
  r.rcode = table.has_records_below(qname) ? dns::Rcode::noerror : dns::Rcode::nxdomain;
  return r;
}

Route decide_route(const RouteTable& table, dns::ByteView qname, std::uint16_t qtype,
                   const std::function<bool(std::size_t)>& lan_available, const BlockingInput& blocking) {
  Route r;
  const ZoneRoute* zone = table.zone_for(qname);
  r.lookup = table.records().find(qname, qtype);
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
        r = fallback_route(table, *zone, qname);
        r.fallback = true;
        r.block = allowed;
        return r;
      }
      r.kind = RouteKind::lan;
      r.zone = zone;
      return r;
    case ZoneRoute::Kind::empty_zone: {
      const block::Decision allowed = r.block;
      r = fallback_route(table, *zone, qname);
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
