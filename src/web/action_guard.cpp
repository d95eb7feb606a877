#include "web/action_guard.hpp"

namespace nxdns::web {

namespace {
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// RFC 6454 §6.1: an http origin serializes as "http://" host [":" port],
// the port left out when it is 80, exactly as the browser writes the Host
// of a request to that origin (RFC 9110 §7.2).
bool same_origin(std::string_view origin, std::string_view host) {
  constexpr std::string_view scheme = "http://";
  return origin.size() == scheme.size() + host.size() && equal_ignoring_case(origin.substr(0, scheme.size()), scheme) &&
         equal_ignoring_case(origin.substr(scheme.size()), host);
}
}  // namespace

ActionVerdict judge_action(const ActionRequest& r) {
  if (!r.peer_loopback) return ActionVerdict::not_loopback;
  if (!r.has_action_header) return ActionVerdict::no_action_header;
  if (r.origin_lines.empty()) return ActionVerdict::allowed;
  // A browser always sends a Host; an Origin without one cannot be matched.
  if (r.origin_lines.size() > 1 || !r.host || r.host->empty()) return ActionVerdict::foreign_origin;
  return same_origin(r.origin_lines.front(), *r.host) ? ActionVerdict::allowed : ActionVerdict::foreign_origin;
}

const char* describe(ActionVerdict v) {
  switch (v) {
    case ActionVerdict::allowed: return "allowed";
    case ActionVerdict::not_loopback: return "not_loopback";
    case ActionVerdict::no_action_header: return "no_action_header";
    case ActionVerdict::foreign_origin: return "foreign_origin";
  }
  return "?";
}

const char* refusal_text(ActionVerdict v) {
  switch (v) {
    case ActionVerdict::allowed: return "";
    case ActionVerdict::not_loopback: return "operator actions are only accepted from a loopback address\n";
    case ActionVerdict::no_action_header:
      return "operator actions need the header X-Nxdns-Request (e.g. curl -X POST -H 'X-Nxdns-Request: 1' ...)\n";
    case ActionVerdict::foreign_origin: return "operator actions are refused to pages of another origin\n";
  }
  return "";
}

}  // namespace nxdns::web
