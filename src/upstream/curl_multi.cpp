#include "upstream/curl_multi.hpp"

#include <event2/event.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "log/log.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

namespace {

// Whether a socket takes writes now (a zero-timeout poll).
bool writable_now(evutil_socket_t fd) {
  pollfd p{};
  p.fd = fd;
  p.events = POLLOUT;
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0;
}

timeval ms_to_timeval(long ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

}  // namespace

std::shared_ptr<CurlMulti> CurlMulti::create(event_base* base, std::string* error) {
  if (!load_initialised_curl(error)) return nullptr;
  auto m = std::make_shared<CurlMulti>(Key{}, base);
  if (!m->init(error)) return nullptr;
  return m;
}

CurlMulti::CurlMulti(Key, event_base* base) : base_(base) {}

bool CurlMulti::init(std::string* error) {
  multi_.reset(curl_lib().multi_init());
  timer_.reset(evtimer_new(base_, &CurlMulti::on_timeout, this));
  reaper_.reset(event_new(base_, -1, 0, &CurlMulti::on_reap, this));
  if (!multi_ || !timer_ || !reaper_) {
    if (error) *error = "cannot create the libcurl multi handle or its timer";
    return false;
  }
  CURLM* m = multi_.get();
  CURLMcode rc = curl_lib().multi_setopt(m, CURLMOPT_SOCKETFUNCTION, &CurlMulti::on_socket);
  if (rc == CURLM_OK) rc = curl_lib().multi_setopt(m, CURLMOPT_SOCKETDATA, this);
  if (rc == CURLM_OK) rc = curl_lib().multi_setopt(m, CURLMOPT_TIMERFUNCTION, &CurlMulti::on_timer_update);
  if (rc == CURLM_OK) rc = curl_lib().multi_setopt(m, CURLMOPT_TIMERDATA, this);
  // HTTP/2 streams share a connection; an HTTP/1.1 upstream gets one
  // exchange per connection, up to the host cap.
  if (rc == CURLM_OK) rc = curl_lib().multi_setopt(m, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
  if (rc == CURLM_OK) {
    rc = curl_lib().multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(slots_per_entry));
  }
  if (rc != CURLM_OK) {
    if (error) *error = log::cat("libcurl multi setup failed: ", curl_lib().multi_strerror(rc));
    return false;
  }
  update_max_connects();
  return true;
}

CurlMulti::~CurlMulti() {
  if (multi_) {
    for (auto& t : abandoned_) {
      if (t->added_) curl_lib().multi_remove_handle(multi_.get(), t->easy());
    }
  }
  abandoned_.clear();
  if (multi_) {
    // curl_multi_cleanup may still report sockets going away; nothing here
    // listens any more.
    curl_lib().multi_setopt(multi_.get(), CURLMOPT_SOCKETFUNCTION, static_cast<curl_socket_callback>(nullptr));
    curl_lib().multi_setopt(multi_.get(), CURLMOPT_TIMERFUNCTION, static_cast<curl_multi_timer_callback>(nullptr));
  }
  // Events first, while their sockets are still open; then curl closes its
  // pooled connections (calling close_socket with the hosts as context).
  watches_.clear();
  timer_.reset();
  reaper_.reset();
  multi_.reset();
  hosts_.clear();
}

CurlMulti::Host* CurlMulti::attach(const std::string& key, const net::Endpoint& address) {
  const auto it = hosts_.find(key);
  if (it != hosts_.end()) {
    if (!(it->second->address == address)) return nullptr;
    ++it->second->users;
    return it->second.get();
  }
  auto h = std::make_unique<Host>();
  h->key = key;
  h->address = address;
  h->users = 1;
  Host* raw = h.get();
  hosts_.emplace(key, std::move(h));
  update_max_connects();
  return raw;
}

void CurlMulti::detach(Host* h) {
  // The entry stays: curl may keep the host's connections pooled (and call
  // close_socket on it) after its last transport is gone.
  if (h && h->users > 0) --h->users;
}

void CurlMulti::update_max_connects() {
  // curl's default pool size follows the number of easy handles added, so
  // between bursts it would shrink and close the connections a warm burst
  // needs. Size it for every host's full allowance instead.
  const long n = static_cast<long>(slots_per_entry * std::max<std::size_t>(1, hosts_.size()));
  if (multi_) curl_lib().multi_setopt(multi_.get(), CURLMOPT_MAXCONNECTS, n);
}

void CurlMulti::bind_sockets(Transfer& t, Host& h) {
  CURL* easy = t.easy();
  t.socket_host_ = &h;
  curl_lib().easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &CurlMulti::open_socket);
  curl_lib().easy_setopt(easy, CURLOPT_OPENSOCKETDATA, static_cast<void*>(&t));
  curl_lib().easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &CurlMulti::close_socket);
  curl_lib().easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, &h);
}

CURLMcode CurlMulti::add(Transfer& t) {
  CURL* e = t.easy();
  curl_lib().easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(&t));
  const CURLMcode rc = curl_lib().multi_add_handle(multi_.get(), e);
  if (rc == CURLM_OK) {
    t.added_ = true;
    ++transfers_;
  }
  return rc;
}

void CurlMulti::abandon(std::unique_ptr<Transfer> t) {
  if (!t) return;
  if (in_curl_ > 0) {
    // Removing a handle from inside a libcurl callback is not allowed; the
    // transfer stays alive (its buffers still valid for curl) until then.
    t->abandoned_ = true;
    abandoned_.push_back(std::move(t));
    event_active(reaper_.get(), EV_TIMEOUT, 0);
    return;
  }
  if (t->added_) {
    // HTTP/2: curl resets just this stream. HTTP/1.1: the connection is
    // mid-response and curl closes it, as the Transport contract wants.
    curl_lib().multi_remove_handle(multi_.get(), t->easy());
    t->added_ = false;
    --transfers_;
  }
}

void CurlMulti::reap() {
  std::vector<std::unique_ptr<Transfer>> doomed;
  doomed.swap(abandoned_);
  for (auto& t : doomed) {
    if (t->added_) {
      curl_lib().multi_remove_handle(multi_.get(), t->easy());
      t->added_ = false;
      --transfers_;
    }
  }
}

void CurlMulti::action(curl_socket_t s, int ev_bitmask) {
  int running = 0;
  ++actions_;
  ++in_curl_;
  const CURLMcode rc = curl_lib().multi_socket_action(multi_.get(), s, ev_bitmask, &running);
  --in_curl_;
  if (rc != CURLM_OK) log::warn("doh: curl_multi_socket_action: ", curl_lib().multi_strerror(rc));
  collect();
}

void CurlMulti::collect() {
  int left = 0;
  while (CURLMsg* msg = curl_lib().multi_info_read(multi_.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    // Copied out: the message dies with the handle's removal.
    CURL* e = msg->easy_handle;
    const CURLcode result = msg->data.result;
    char* priv = nullptr;
    curl_lib().easy_getinfo(e, CURLINFO_PRIVATE, &priv);
    auto* t = static_cast<Transfer*>(static_cast<void*>(priv));
    curl_lib().multi_remove_handle(multi_.get(), e);
    if (!t) continue;
    if (t->added_) {
      t->added_ = false;
      --transfers_;
    }
    if (t->abandoned_) continue;  // the reaper frees it
    t->transfer_done(result);
  }
}

int CurlMulti::update_socket(curl_socket_t s, int what, SocketWatch* w) {
  if (what == CURL_POLL_REMOVE) {
    // curl forgets s itself; the event goes with our record of it.
    watches_.erase(w ? w->fd : s);
    return 0;
  }
  if (!w) {
    const auto it = watches_.find(s);
    if (it != watches_.end()) {
      w = it->second.get();  // curl reused an fd without a REMOVE: adopt it
    } else {
      auto fresh = std::make_unique<SocketWatch>();
      fresh->owner = this;
      fresh->fd = s;
      fresh->ev.reset(event_new(base_, s, 0, &CurlMulti::on_socket_event, fresh.get()));
      if (!fresh->ev) return -1;
      w = fresh.get();
      watches_.emplace(s, std::move(fresh));
    }
    curl_lib().multi_assign(multi_.get(), s, w);
  }
  short flags = EV_PERSIST;
  if (what & CURL_POLL_IN) flags |= EV_READ;
  if (what & CURL_POLL_OUT) flags |= EV_WRITE;
  event_del(w->ev.get());
  if (!(flags & (EV_READ | EV_WRITE))) return 0;
  if (event_assign(w->ev.get(), base_, s, flags, &CurlMulti::on_socket_event, w) != 0) return -1;
  return event_add(w->ev.get(), nullptr) == 0 ? 0 : -1;
}

int CurlMulti::on_socket(CURL*, curl_socket_t s, int what, void* userp, void* socketp) noexcept {
  try {
    return static_cast<CurlMulti*>(userp)->update_socket(s, what, static_cast<SocketWatch*>(socketp));
  } catch (...) {
    return -1;  // curl fails the transfers on this socket
  }
}

int CurlMulti::on_timer_update(CURLM*, long timeout_ms, void* userp) noexcept {
  auto* self = static_cast<CurlMulti*>(userp);
  if (timeout_ms < 0) {
    evtimer_del(self->timer_.get());
    return 0;
  }
  // 0 included: the loop runs it on its next turn, never from in here.
  const timeval tv = ms_to_timeval(timeout_ms);
  return evtimer_add(self->timer_.get(), &tv) == 0 ? 0 : -1;
}

void CurlMulti::on_socket_event(evutil_socket_t fd, short events, void* arg) noexcept {
  // The watch may be freed inside the action (CURL_POLL_REMOVE): read what
  // is needed first.
  CurlMulti* self = static_cast<SocketWatch*>(arg)->owner;
  // A readable-only report also says whether the socket is writable (see
  // socket_action_mask): a POST's HEADERS and body then leave together.
  const int mask = socket_action_mask((events & EV_READ) != 0, (events & EV_WRITE) != 0,
                                      [fd] { return writable_now(fd); });
  try {
    self->action(fd, mask);
  } catch (const std::exception& e) {
    log::error("doh: socket event handler threw: ", e.what());
  } catch (...) {
    log::error("doh: socket event handler threw");
  }
}

void CurlMulti::on_timeout(evutil_socket_t, short, void* arg) noexcept {
  try {
    static_cast<CurlMulti*>(arg)->action(CURL_SOCKET_TIMEOUT, 0);
  } catch (const std::exception& e) {
    log::error("doh: timer handler threw: ", e.what());
  } catch (...) {
    log::error("doh: timer handler threw");
  }
}

void CurlMulti::on_reap(evutil_socket_t, short, void* arg) noexcept { static_cast<CurlMulti*>(arg)->reap(); }

curl_socket_t CurlMulti::open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address) noexcept {
  // Called only while the transfer connects: the transfer is alive.
  auto* t = static_cast<Transfer*>(clientp);
  Host* h = t ? t->socket_host_ : nullptr;
  if (!h || purpose != CURLSOCKTYPE_IPCXN || !address) return CURL_SOCKET_BAD;
  // The pin guard: curl reaches upstream hosts only through the resolve
  // entry. Should anything else ever produce an address (a resolver, a
  // redirect), refuse to dial it rather than leak a query elsewhere.
  net::Endpoint to;
  const std::size_t n = std::min<std::size_t>(address->addrlen, sizeof to.addr);
  std::memcpy(&to.addr, &address->addr, n);
  to.len = static_cast<socklen_t>(n);
  if (!(to == h->address)) {
    ++h->refused_addresses;
    return CURL_SOCKET_BAD;
  }
  const int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  ++h->open_sockets;
  ++h->sockets_opened;
  h->peak_open_sockets = std::max(h->peak_open_sockets, h->open_sockets);
  t->dialing();
  return fd;
}

int CurlMulti::close_socket(void* clientp, curl_socket_t fd) noexcept {
  auto* h = static_cast<Host*>(clientp);
  if (h && h->open_sockets > 0) --h->open_sockets;
  return ::close(fd);
}

namespace {

// The TLS library's own version call, looked up among the libraries curl
// loaded: linking it here would tie the daemon to one curl TLS flavour.
// Absent symbols just mean "unknown".
template <class Fn>
Fn lookup(const char* name) {
  void* p = curl_lib().symbol(name);
  Fn fn = nullptr;
  static_assert(sizeof fn == sizeof p);
  std::memcpy(&fn, &p, sizeof fn);
  return fn;
}

}  // namespace

std::string curl_tls_version(CURL* easy) {
  curl_tlssessioninfo* info = nullptr;
  if (curl_lib().easy_getinfo(easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || !info || !info->internals) return {};
  if (info->backend == CURLSSLBACKEND_OPENSSL) {
    using SslGetVersion = const char* (*)(const void*);
    static const SslGetVersion get_version = lookup<SslGetVersion>("SSL_get_version");
    const char* v = get_version ? get_version(info->internals) : nullptr;
    return v ? v : "";
  }
  if (info->backend == CURLSSLBACKEND_GNUTLS) {
    using ProtocolGetVersion = int (*)(void*);
    using ProtocolGetName = const char* (*)(int);
    static const ProtocolGetVersion get_version = lookup<ProtocolGetVersion>("gnutls_protocol_get_version");
    static const ProtocolGetName get_name = lookup<ProtocolGetName>("gnutls_protocol_get_name");
    if (!get_version || !get_name) return {};
    const char* v = get_name(get_version(info->internals));
    if (!v) return {};
    std::string s(v);  // "TLS1.3" -> "TLSv1.3", the OpenSSL/DoT spelling
    if (s.rfind("TLS", 0) == 0 && s.size() > 3 && s[3] != 'v') s.insert(3, "v");
    return s;
  }
  return {};
}

}  // namespace nxdns::upstream
