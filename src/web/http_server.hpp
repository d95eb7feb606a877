#pragma once
// A small HTTP server on libmicrohttpd, driven by the daemon's libevent loop
// (no MHD threads): MHD runs in epoll mode, its epoll descriptor is a
// persistent libevent read event, and MHD_run is called when that descriptor
// turns readable and when MHD's own timeout expires (a timer re-armed from
// MHD_get_timeout after every run, as MHD's external-polling contract
// requires). Handlers therefore run on the loop thread and read live state
// without locks.
//
// Everything is non-blocking: a client that stalls mid-request only holds
// its own connection, which the connection timeout reclaims; the connection
// limit bounds how many such clients can exist. DNS on the same loop is
// never delayed by HTTP beyond the time to render one response.
//
// Every request first has its Host judged (host_check.hpp): a name that is
// not this server's gets 421, a malformed Host 400, whatever the path, so a
// page that rebinds its own name to this address reads nothing. Then GET
// and HEAD serve the read-only routes (HEAD: same headers, no body, MHD
// strips it). POST serves the operator actions (post routes), under the
// rules of action_guard.hpp: a loopback peer, the X-Nxdns-Request header,
// no foreign Origin; anything else is 403, so neither the LAN (when
// http.listen is bound to it) nor a web page in the operator's browser can
// run them. Unknown paths get 404; other methods 405 with an Allow header
// (a CORS preflight, OPTIONS, included: nothing here grants CORS).
#include <cstdint>
#include <functional>
#include <type_traits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loop/event_handles.hpp"
#include "net/endpoint.hpp"
#include "net/host_name.hpp"
#include "web/action_guard.hpp"
#include "web/host_check.hpp"

struct MHD_Daemon;
struct MHD_Connection;

namespace nxdns::web {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The URL's query arguments (decoded by MHD).
using QueryArgs = std::map<std::string, std::string>;
// Runs on the loop for every GET/HEAD of its path. Must not block. Most
// handlers read no argument and are written without one.
class Handler {
 public:
  template <class F>
    requires std::is_invocable_r_v<Response, F&>
  Handler(F f) : fn_([f = std::move(f)](const QueryArgs&) mutable { return f(); }) {}
  template <class F>
    requires(std::is_invocable_r_v<Response, F&, const QueryArgs&> && !std::is_invocable_v<F&>)
  Handler(F f) : fn_(std::move(f)) {}
  Handler() = default;
  Response operator()(const QueryArgs& args = {}) const { return fn_(args); }

 private:
  std::function<Response(const QueryArgs&)> fn_;
};
using Routes = std::map<std::string, Handler>;
// An operator action: runs on the loop for a POST that action_guard.hpp
// allows, with the URL's query arguments. No request body is read.
using PostHandler = std::function<Response(const std::map<std::string, std::string>& args)>;
using PostRoutes = std::map<std::string, PostHandler>;

struct HttpServerOptions {
  net::Endpoint listen;
  // Concurrent HTTP connections. A scraper needs one; a browser a few.
  unsigned connection_limit = 16;
  // Idle seconds before MHD drops a connection (also a half-sent request).
  unsigned connection_timeout_seconds = 5;
  // Host names and addresses served beyond the surface's own
  // (http.allowed_hosts; host_check.hpp).
  net::HostList allowed_hosts;
};

class HttpServer {
  struct Key {};

 public:
  // nullptr and a one-line reason when MHD cannot start (address in use,
  // no such address, ...).
  static std::unique_ptr<HttpServer> start(event_base* base, const HttpServerOptions& opts, Routes routes,
                                           std::string* why, PostRoutes post_routes = {});
  HttpServer(Key, Routes routes, PostRoutes post_routes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound address (the real port when the configured one was 0).
  const net::Endpoint& local() const { return local_; }
  std::uint64_t requests() const { return requests_; }
  unsigned current_connections() const;
  // A reload's http.allowed_hosts: applies to the next request.
  void set_allowed_hosts(net::HostList hosts) { host_rules_.allowed = std::move(hosts); }

 private:
  struct MhdDeleter {
    void operator()(MHD_Daemon* d) const noexcept;
  };

  // The C callbacks (http_server.cpp) reach the members below.
  friend struct HttpServerCallbacks;

  bool respond(MHD_Connection* c, const char* url, const char* method, const char* version) noexcept;
  HostVerdict judge(std::span<const std::string_view> host_lines, bool http_1_0);
  // `req` comes with everything but the peer, which this reads.
  Response respond_post(MHD_Connection* c, const std::string& method, const PostHandler& h, ActionRequest req);
  void run_and_rearm() noexcept;
  void rearm() noexcept;

  Routes routes_;
  PostRoutes post_routes_;
  net::Endpoint local_;
  HostRules host_rules_;
  bool starting_ = true;
  std::string start_error_;
  std::uint64_t requests_ = 0;
  // Declared first among the handles so it is destroyed last: the events
  // below watch MHD's epoll descriptor, which MHD_stop_daemon closes.
  std::unique_ptr<MHD_Daemon, MhdDeleter> mhd_;
  loop::EventPtr ready_ev_;
  loop::EventPtr timer_ev_;
};

}  // namespace nxdns::web
