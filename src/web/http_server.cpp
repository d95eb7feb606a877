#include "web/http_server.hpp"

// microhttpd.h expects the socket types to be declared first.
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <microhttpd.h>

#include "log/log.hpp"
#include "net/endpoint.hpp"
#include "web/machine_identity.hpp"

namespace nxdns::web {

namespace {

struct ResponseDeleter {
  void operator()(MHD_Response* r) const noexcept { MHD_destroy_response(r); }
};
using ResponsePtr = std::unique_ptr<MHD_Response, ResponseDeleter>;

bool queue(MHD_Connection* c, const Response& r) {
  // MUST_COPY: the body lives in `r`, which is gone before MHD sends it.
  ResponsePtr resp(MHD_create_response_from_buffer(r.body.size(), const_cast<char*>(r.body.data()),
                                                   MHD_RESPMEM_MUST_COPY));
  if (!resp) return false;
  MHD_add_response_header(resp.get(), MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
  // Live state: a cached copy would be a lie a second later.
  MHD_add_response_header(resp.get(), MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  for (const auto& [k, v] : r.headers) MHD_add_response_header(resp.get(), k.c_str(), v.c_str());
  return MHD_queue_response(c, static_cast<unsigned>(r.status), resp.get()) == MHD_YES;
}

}  // namespace

// The C side. Nothing may unwind through MHD or libevent: each entry point
// is noexcept and the member functions it calls catch everything.
struct HttpServerCallbacks {
  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method,
                               const char* version, const char*, std::size_t*, void**) noexcept {
    return static_cast<HttpServer*>(cls)->respond(c, url, method, version) ? MHD_YES : MHD_NO;
  }
  static void on_log(void* cls, const char* fmt, va_list ap) noexcept {
    auto* self = static_cast<HttpServer*>(cls);
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    std::string msg(buf);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
    try {
      if (self->starting_) {
        // Startup failures (bind, listen) become the reason start() gives.
        if (self->start_error_.empty()) self->start_error_ = msg;
      } else {
        // Runtime chatter (a client reset, the connection limit reached) is
        // the client's business; at info it would let any client write to
        // the log.
        log::debug("http: ", msg);
      }
    } catch (...) {
    }
  }
  static void on_ready(evutil_socket_t, short, void* arg) noexcept { static_cast<HttpServer*>(arg)->run_and_rearm(); }
};

void HttpServer::MhdDeleter::operator()(MHD_Daemon* d) const noexcept { MHD_stop_daemon(d); }

HttpServer::HttpServer(Key, Routes routes, PostRoutes post_routes)
    : routes_(std::move(routes)), post_routes_(std::move(post_routes)) {}

HttpServer::~HttpServer() {
  // Events first (they watch MHD's epoll descriptor), then MHD, which closes
  // every connection and its listening socket.
  timer_ev_.reset();
  ready_ev_.reset();
  mhd_.reset();
}

std::unique_ptr<HttpServer> HttpServer::start(event_base* base, const HttpServerOptions& opts, Routes routes,
                                              std::string* why, PostRoutes post_routes) {
  auto s = std::make_unique<HttpServer>(Key{}, std::move(routes), std::move(post_routes));
  const std::string where = opts.listen.to_string();
  if (opts.listen.len == 0) {
    *why = "http: no listen address";
    return nullptr;
  }
  // No internal threads: MHD_USE_EPOLL alone is "external polling through
  // one epoll descriptor", which the loop below drives.
  unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (opts.listen.family() == AF_INET6) flags |= MHD_USE_IPv6;
  s->mhd_.reset(MHD_start_daemon(
      flags, opts.listen.port(), nullptr, nullptr, &HttpServerCallbacks::on_request, s.get(), MHD_OPTION_SOCK_ADDR,
      const_cast<sockaddr*>(opts.listen.sa()), MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(opts.connection_limit),
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(opts.connection_timeout_seconds),
      MHD_OPTION_LISTEN_BACKLOG_SIZE, static_cast<unsigned>(opts.connection_limit), MHD_OPTION_EXTERNAL_LOGGER,
      &HttpServerCallbacks::on_log, s.get(), MHD_OPTION_END));
  if (!s->mhd_) {
    *why = log::cat("http: cannot listen on ", where, s->start_error_.empty() ? "" : ": ", s->start_error_);
    return nullptr;
  }
  const MHD_DaemonInfo* epfd = MHD_get_daemon_info(s->mhd_.get(), MHD_DAEMON_INFO_EPOLL_FD);
  const MHD_DaemonInfo* lfd = MHD_get_daemon_info(s->mhd_.get(), MHD_DAEMON_INFO_LISTEN_FD);
  if (!epfd || epfd->epoll_fd < 0 || !lfd) {
    *why = "http: libmicrohttpd has no epoll support in this build";
    return nullptr;
  }
  s->local_.len = sizeof s->local_.addr;
  if (::getsockname(lfd->listen_fd, reinterpret_cast<sockaddr*>(&s->local_.addr), &s->local_.len) != 0) {
    s->local_ = opts.listen;
  }
  s->host_rules_.listen = s->local_;
  s->host_rules_.allowed = opts.allowed_hosts;
  s->ready_ev_.reset(event_new(base, epfd->epoll_fd, EV_READ | EV_PERSIST, &HttpServerCallbacks::on_ready, s.get()));
  s->timer_ev_.reset(evtimer_new(base, &HttpServerCallbacks::on_ready, s.get()));
  if (!s->ready_ev_ || !s->timer_ev_ || event_add(s->ready_ev_.get(), nullptr) != 0) {
    *why = "http: cannot register with the event loop";
    return nullptr;
  }
  s->starting_ = false;
  s->rearm();
  return s;
}

unsigned HttpServer::current_connections() const {
  const MHD_DaemonInfo* i = MHD_get_daemon_info(mhd_.get(), MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
  return i ? i->num_connections : 0;
}

void HttpServer::run_and_rearm() noexcept {
  const unsigned before = current_connections();
  MHD_run(mhd_.get());
  // At the connection limit MHD takes its listening socket out of its epoll
  // set, and puts it back only at the start of a later run. When this run
  // closed connections (timeouts, clients leaving) nothing else may ever
  // wake us for that later run: MHD_get_timeout reports no pending work, the
  // epoll descriptor stays quiet, and clients waiting in the backlog would
  // wait forever. One more (non-blocking) run re-arms the listener.
  if (current_connections() < before) MHD_run(mhd_.get());
  rearm();
}

void HttpServer::rearm() noexcept {
  // MHD's contract for external polling: call MHD_run again no later than
  // its timeout, even without readiness. It asks for 0 when it holds work
  // that no descriptor will announce (data already read, a response to
  // resume), and for the nearest connection timeout otherwise.
  MHD_UNSIGNED_LONG_LONG ms = 0;
  if (MHD_get_timeout(mhd_.get(), &ms) == MHD_YES) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
    evtimer_add(timer_ev_.get(), &tv);
  } else {
    evtimer_del(timer_ev_.get());
  }
}

namespace {
bool peer_is_loopback(MHD_Connection* c) {
  const MHD_ConnectionInfo* i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!i || !i->client_addr) return false;
  net::Endpoint e;
  const sa_family_t fam = i->client_addr->sa_family;
  const std::size_t len = fam == AF_INET ? sizeof(sockaddr_in) : fam == AF_INET6 ? sizeof(sockaddr_in6) : 0;
  if (len == 0 || len > sizeof e.addr) return false;
  std::memcpy(&e.addr, i->client_addr, len);
  e.len = static_cast<socklen_t>(len);
  return net::is_loopback(e);
}

MHD_Result collect_arg(void* cls, MHD_ValueKind, const char* key, const char* value) noexcept {
  try {
    if (key) (*static_cast<std::map<std::string, std::string>*>(cls))[key] = value ? value : "";
  } catch (...) {
    return MHD_NO;
  }
  return MHD_YES;
}

// The header lines the guards judge, every occurrence kept: two Host lines
// are an error, not a choice of one (RFC 9112 §3.2).
struct GuardHeaders {
  std::vector<std::string_view> host;
  std::vector<std::string_view> origin;
  bool action = false;
};

std::string_view field_value(const char* v) {
  std::string_view s = v ? v : "";
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The views point into MHD's copy of the request, valid while the request
// is being answered.
MHD_Result collect_guard_header(void* cls, MHD_ValueKind, const char* key, const char* value) noexcept {
  try {
    auto* h = static_cast<GuardHeaders*>(cls);
    if (!key) return MHD_YES;
    if (::strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) h->host.push_back(field_value(value));
    else if (::strcasecmp(key, MHD_HTTP_HEADER_ORIGIN) == 0) h->origin.push_back(field_value(value));
    else if (::strcasecmp(key, action_request_header) == 0) h->action = true;
  } catch (...) {
    return MHD_NO;
  }
  return MHD_YES;
}
}  // namespace

HostVerdict HttpServer::judge(std::span<const std::string_view> host_lines, bool http_1_0) {
  HostVerdict v = judge_host(host_lines, http_1_0, host_rules_);
  // This machine's name and addresses are read only when the listen
  // address, loopback and http.allowed_hosts do not cover the Host, and
  // not kept: a loopback surface never asks the system, a LAN one asks for
  // each such request, so a renewed DHCP lease or a new IPv6 prefix is
  // served at once and an address the machine gave up is not.
  if (v == HostVerdict::foreign && !net::is_loopback(host_rules_.listen)) {
    host_rules_.machine_name = machine_name();
    if (net::is_unspecified(host_rules_.listen)) host_rules_.machine_addresses = machine_addresses();
    v = judge_host(host_lines, http_1_0, host_rules_);
    host_rules_.machine_name.clear();
    host_rules_.machine_addresses.clear();
  }
  return v;
}

Response HttpServer::respond_post(MHD_Connection* c, const std::string& method, const PostHandler& h,
                                  ActionRequest req) {
  Response r;
  if (method != MHD_HTTP_METHOD_POST) {
    r.status = MHD_HTTP_METHOD_NOT_ALLOWED;
    r.body = "method not allowed\n";
    r.headers.emplace_back(MHD_HTTP_HEADER_ALLOW, "POST");
    return r;
  }
  req.peer_loopback = peer_is_loopback(c);
  if (const ActionVerdict v = judge_action(req); v != ActionVerdict::allowed) {
    log::debug("http: POST refused: ", describe(v));
    r.status = MHD_HTTP_FORBIDDEN;
    r.body = refusal_text(v);
    return r;
  }
  std::map<std::string, std::string> args;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &collect_arg, &args);
  return h(args);
}

bool HttpServer::respond(MHD_Connection* c, const char* url, const char* method, const char* version) noexcept {
  try {
    ++requests_;
    const std::string m = method ? method : "";
    const auto it = routes_.find(url ? url : "");
    const auto post = post_routes_.find(url ? url : "");
    GuardHeaders guard;
    MHD_get_connection_values(c, MHD_HEADER_KIND, &collect_guard_header, &guard);
    const HostVerdict host = judge(guard.host, version && std::strcmp(version, MHD_HTTP_VERSION_1_0) == 0);
    Response r;
    if (!served(host)) {
      // Not worth a log line above debug: any client can send any Host.
      log::debug("http: Host refused: ", describe(host));
      r.status = host == HostVerdict::malformed ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_MISDIRECTED_REQUEST;
      r.body = host == HostVerdict::malformed
                   ? "bad Host header\n"
                   : "misdirected request: the Host header does not name this server (see http.allowed_hosts)\n";
    } else if (post != post_routes_.end()) {
      ActionRequest req;
      req.has_action_header = guard.action;
      req.origin_lines = guard.origin;
      if (!guard.host.empty()) req.host = guard.host.front();
      r = respond_post(c, m, post->second, req);
    } else if (it == routes_.end()) {
      r.status = MHD_HTTP_NOT_FOUND;
      r.body = "not found\n";
    } else if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
      r.status = MHD_HTTP_METHOD_NOT_ALLOWED;
      r.body = "method not allowed\n";
      r.headers.emplace_back(MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    } else {
      QueryArgs args;
      MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &collect_arg, &args);
      r = it->second(args);
    }
    // HEAD: MHD sends the headers of this response (Content-Length
    // included) and drops the body.
    return queue(c, r);
  } catch (const std::exception& e) {
    log::warn("http: ", url ? url : "?", ": ", e.what());
  } catch (...) {
    log::warn("http: ", url ? url : "?", ": handler failed");
  }
  try {
    Response r;
    r.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    r.body = "internal error\n";
    return queue(c, r);
  } catch (...) {
    return false;  // MHD closes the connection
  }
}

}  // namespace nxdns::web
