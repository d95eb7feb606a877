#pragma once
// Which Host a request may name for the HTTP surface to answer it: the
// defence against DNS rebinding. A web page on a name its author controls
// can make that name resolve to this server's address; the browser then
// treats the server as the page's own origin and lets the page read
// /api/health or the status page (and send requests that look local). What
// the page cannot change is the Host header: the browser writes the name
// from the page's URL. So the surface answers only to names that are its
// own, and every other name gets 421 Misdirected Request (RFC 9110
// §15.5.20: this server does not serve that authority).
//
// Its own names, by what http.listen binds:
//   - always: the bound address as an IP literal (IPv6 in brackets), and
//     every entry of http.allowed_hosts;
//   - a loopback address or a wildcard: also "localhost" (RFC 6761 §6.3:
//     it never leaves the machine, so no page can rebind it);
//   - a non-loopback address or a wildcard: also this machine's name
//     (gethostname), its first label (what a search domain completes) and
//     FIRST-LABEL.local (mDNS): what an operator types in a browser on the
//     LAN;
//   - a wildcard: also every loopback address and every address this
//     machine has now (each one is an address the wildcard serves, and an
//     IP literal cannot be rebound).
// The port is not compared: a rebinding page controls the name, not the
// port, and an SSH tunnel may well forward another local port.
//
// A request without a Host (or with an empty one, RFC 9110 §7.2: no
// authority) is served over HTTP/1.0: every browser sends a Host, so such a
// request comes from a tool (an HTTP/1.0 script, nc), never from a page.
// Over HTTP/1.1 it is 400, as RFC 9112 §3.2 requires (libmicrohttpd 0.9.75
// does not enforce it). More than one Host line, or one that does not
// parse as host[:port], is 400 too.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/endpoint.hpp"
#include "net/host_name.hpp"

namespace nxdns::web {

struct HostRules {
  net::Endpoint listen;  // what the surface is bound to; its port is ignored
  net::HostList allowed;  // http.allowed_hosts
  // This machine's name (gethostname, lowercase), read only for
  // non-loopback binds; "" when unknown.
  std::string machine_name;
  // This machine's addresses now (getifaddrs), read only for wildcard binds.
  std::vector<net::Endpoint> machine_addresses;
};

enum class HostVerdict {
  ours,       // names this server: serve it
  absent,     // HTTP/1.0 without a Host, or an empty one: not a browser; serve it
  malformed,  // two Host lines, not host[:port], or none over HTTP/1.1: 400
  foreign,    // some other name or address: 421
};

// `host_lines`: the value of every Host line of the request, in order,
// without the whitespace around it (RFC 9110 §5.5). `http_1_0`: the request
// line said HTTP/1.0 (the only version without a mandatory Host).
HostVerdict judge_host(std::span<const std::string_view> host_lines, bool http_1_0, const HostRules& rules);
bool served(HostVerdict v);
const char* describe(HostVerdict v);

}  // namespace nxdns::web
