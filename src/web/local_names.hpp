#pragma once
// The routing step as the operator sees it: which router serves the LAN's
// names, the LAN servers with their health, the zones and records answered
// here (the "local_names" part of /api/health and the status page), and the
// answer to GET /api/why.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "route/blocked_reply.hpp"
#include "route/explain.hpp"
#include "upstream/pool.hpp"
#include "web/json.hpp"

namespace nxdns::web {

struct LanGroupStatus {
  bool home_router = false;
  std::vector<std::string> zones;  // routed to this group, sorted
  std::vector<upstream::EntrySnapshot> servers;
};

struct LocalNamesStatus {
  std::string home_router;  // app::describe_home_router
  std::vector<LanGroupStatus> lan;
  std::size_t zones_answered_here = 0;  // built-in and fallback zones
  std::size_t records = 0;
};

// A home router "does not serve DNS" when its server is not healthy and
// its latest attempt was refused or went unanswered: its names then get
// their local answer (status page wording, /api/health's flag).
bool serves_no_dns(const upstream::EntrySnapshot& s);

// `routed`: the engine's queries by route (query::QueryCounters::routed).
void write_local_names(JsonWriter& w, const LocalNamesStatus& s, const std::uint64_t* routed);

// GET /api/why: the route for `name`/`qtype` as `client` would get it.
struct WhyInput {
  std::string name;  // as asked
  std::uint16_t qtype = 1;
  std::string client;      // "" when not given
  bool client_refused = false;  // access_control refuses the client
  route::Explanation explanation;
  // With blocklists loaded: what they say of the name (BlockTable::why),
  // and whether they apply to this client (its group).
  std::string blocking;
  bool blocking_applies = true;
};
// "NXDOMAIN (blocked)", ...: what a blocked name gets.
std::string describe_blocked(route::BlockedAnswer a);
std::string render_why(const WhyInput& in);
// The same for a terminal (`nxdns why`): a few lines of plain text.
std::string render_why_text(const WhyInput& in);

}  // namespace nxdns::web
