#pragma once
// Who may run an operator action (a POST route: the cache flush, the
// reload). Three conditions, all required:
//
//   1. The peer is on a loopback address: binding http.listen to the LAN
//      must not hand the actions to the LAN.
//   2. The request carries the header X-Nxdns-Request (any value). A web
//      page can send a "simple" cross-origin POST (a form, or fetch with a
//      text/plain body) without asking the server first, and a page on the
//      Internet can aim one at 127.0.0.1 from the operator's own browser:
//      the peer is then loopback. A custom header makes the request
//      non-simple, so the browser first sends a CORS preflight (OPTIONS),
//      which this server answers 405 without any Access-Control-Allow-*
//      header, and the POST is never sent. The CLI and curl add it freely.
//   3. An Origin header, when present, is this server's own origin,
//      "http://" followed by the request's Host exactly (ASCII
//      case-insensitive): a browser says where the page that sent the
//      request came from, and only the status page's own origin may act.
//      "null" (a sandboxed frame, a file) and two Origin lines are refused;
//      tools send none.
// The Host itself was judged before (host_check.hpp).
#include <optional>
#include <span>
#include <string_view>

namespace nxdns::web {

inline constexpr const char* action_request_header = "X-Nxdns-Request";

struct ActionRequest {
  bool peer_loopback = false;
  bool has_action_header = false;
  std::span<const std::string_view> origin_lines;  // every Origin line's value
  std::optional<std::string_view> host;            // the Host value; nullopt when absent
};

enum class ActionVerdict {
  allowed,
  not_loopback,       // 403
  no_action_header,   // 403: possibly a browser's simple cross-origin request
  foreign_origin,     // 403: sent by a page from another origin
};

ActionVerdict judge_action(const ActionRequest& r);
const char* describe(ActionVerdict v);
// The 403 body for a refusal: what was missing, for the operator with curl.
const char* refusal_text(ActionVerdict v);

}  // namespace nxdns::web
