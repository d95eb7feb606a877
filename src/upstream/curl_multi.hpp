#pragma once
// One libcurl multi handle driven by the libevent loop, shared by every DoH
// upstream of the process, so that connections, the CA store cache and the
// timer are curl's to pool and the loop sees exactly the sockets and the one
// timeout curl asks for.
//
// The bridge follows libcurl's event contract (curl_multi_socket_action):
// - CURLMOPT_SOCKETFUNCTION: one libevent event per socket curl names, made
//   when it first names it and kept with curl_multi_assign (no fd-indexed
//   array), changed in place on IN/OUT updates, freed on CURL_POLL_REMOVE.
// - CURLMOPT_TIMERFUNCTION: -1 disarms the one timer; 0 arms it with a zero
//   delay, so curl is driven from the loop's next turn and never recursively
//   from inside the callback; N > 0 arms it for N ms.
// - Finished transfers come from curl_multi_info_read after each action (no
//   scan of live transfers). Their handles are removed from the multi there,
//   outside every curl callback, and only then is their owner told.
//
// Limits, per upstream host (host = TLS name and port: curl keys its
// connection pool on the URL's host, and every DoH URL is built from the
// upstream's tls_name): at most slots_per_entry connections
// (CURLMOPT_MAX_HOST_CONNECTIONS) with HTTP/2 multiplexing
// (CURLMOPT_PIPELINING = CURLPIPE_MULTIPLEX). Two upstreams naming the same
// host:port with different addresses cannot share one multi (its DNS cache
// holds one pinned address per host:port); attach() refuses the second and
// its transport gets a multi of its own.
#include <curl/curl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "loop/event_handles.hpp"
#include "net/endpoint.hpp"
#include "upstream/curl_handles.hpp"

struct event_base;

namespace nxdns::upstream {

class CurlMulti {
  struct Key {
    explicit Key() = default;
  };

 public:
  struct Host;
  // One transfer on an easy handle it owns. Subclasses keep everything the
  // handle points at (request body, error buffer, write target) as members,
  // so the handle can never outlive what curl reads or writes.
  class Transfer {
   public:
    explicit Transfer(CurlEasyPtr easy) : easy_(std::move(easy)) {}
    virtual ~Transfer() = default;
    Transfer(const Transfer&) = delete;
    Transfer& operator=(const Transfer&) = delete;
    CURL* easy() const { return easy_.get(); }

   protected:
    // The transfer ended (any result). Runs from the loop after the handle
    // was removed from the multi, never inside a libcurl callback. The
    // owner may destroy this object from here (nothing touches it after).
    virtual void transfer_done(CURLcode result) noexcept = 0;
    // curl opens a connection for this transfer (its first, or a re-send
    // of a stream the server refused): until curl starts it again it holds
    // no stream. Runs inside a libcurl callback.
    virtual void dialing() noexcept {}

   private:
    friend class CurlMulti;
    CurlEasyPtr easy_;
    Host* socket_host_ = nullptr;
    bool added_ = false;
    bool abandoned_ = false;
  };

  // Per upstream host, owned by the multi because curl's pooled connections
  // (and their close-socket callbacks, which point here) can outlive the
  // transport that opened them.
  struct Host {
    std::string key;  // "tls_name:port"
    net::Endpoint address;
    std::uint32_t users = 0;
    std::uint32_t open_sockets = 0;  // connecting or connected, idle in curl's pool included
    std::uint32_t peak_open_sockets = 0;
    std::uint64_t sockets_opened = 0;
    std::uint64_t refused_addresses = 0;  // the pin guard said no (see open_socket)
  };

  // Returns nullptr and a reason when libcurl or libevent cannot provide a
  // multi handle or a timer.
  static std::shared_ptr<CurlMulti> create(event_base* base, std::string* error);

  CurlMulti(Key, event_base* base);
  // Every Transfer is gone by now (transports hold the multi). Closes curl's
  // pooled connections (TLS close_notify / HTTP/2 GOAWAY where curl sends
  // them), then frees the events.
  ~CurlMulti();
  CurlMulti(const CurlMulti&) = delete;
  CurlMulti& operator=(const CurlMulti&) = delete;

  // Registers a user of host `key` pinned to `address`. nullptr when the key
  // is registered with a different address (see above).
  Host* attach(const std::string& key, const net::Endpoint& address);
  void detach(Host* h);

  // Points the transfer's socket open/close at `h`: sockets are counted
  // per host, opened close-on-exec, and only ever to h.address; the
  // transfer hears when curl dials for it (Transfer::dialing). Closing
  // reports to the host only: a pooled connection outlives its opener.
  void bind_sockets(Transfer& t, Host& h);

  // Starts a configured transfer. On failure returns the CURLMcode (the
  // transfer was not added; the caller still owns it and reports it).
  CURLMcode add(Transfer& t);
  // Abandons a transfer: removes its handle and destroys it. Its
  // transfer_done never runs. Called inside a libcurl callback (nxdns never
  // does; guarded anyway), the removal waits for the loop's next turn.
  void abandon(std::unique_ptr<Transfer> t);

  // Introspection (tests, metrics).
  std::size_t transfers() const { return transfers_; }
  // curl_multi_socket_action calls so far. A transfer added before action N
  // was looked at by curl in action N (curl runs every expired timer, and a
  // new handle's is 0); one still not started by action N+1 is one curl
  // holds back.
  std::uint64_t actions() const { return actions_; }
  std::size_t host_count() const { return hosts_.size(); }
  event_base* base() const { return base_; }

 private:
  struct SocketWatch {
    CurlMulti* owner = nullptr;
    curl_socket_t fd = CURL_SOCKET_BAD;
    loop::EventPtr ev;
  };

  bool init(std::string* error);
  void action(curl_socket_t s, int ev_bitmask);
  void collect();
  void reap();
  int update_socket(curl_socket_t s, int what, SocketWatch* w);
  void update_max_connects();

  static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp) noexcept;
  static int on_timer_update(CURLM* multi, long timeout_ms, void* userp) noexcept;
  static void on_socket_event(evutil_socket_t fd, short events, void* arg) noexcept;
  static void on_timeout(evutil_socket_t fd, short events, void* arg) noexcept;
  static void on_reap(evutil_socket_t fd, short events, void* arg) noexcept;
  static curl_socket_t open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address) noexcept;
  static int close_socket(void* clientp, curl_socket_t fd) noexcept;

  event_base* base_;
  // Declared before the multi handle, so destroyed after it: curl's pooled
  // connections call close_socket with these as their context while
  // curl_multi_cleanup closes them.
  std::map<std::string, std::unique_ptr<Host>> hosts_;
  CurlMultiPtr multi_;
  loop::EventPtr timer_;
  loop::EventPtr reaper_;
  std::unordered_map<curl_socket_t, std::unique_ptr<SocketWatch>> watches_;
  std::vector<std::unique_ptr<Transfer>> abandoned_;
  std::size_t transfers_ = 0;
  std::uint64_t actions_ = 0;
  int in_curl_ = 0;  // depth of curl_multi_socket_action frames on the stack
};

// The events mask handed to curl_multi_socket_action for a readiness
// report from the loop: CURL_CSELECT_IN when readable, CURL_CSELECT_OUT when
// writable, and CURL_CSELECT_OUT too when only readability was reported and
// `writable_now()` (asked only then) says the socket takes writes. curl 7.88
// stores the mask on the connection (conn->cselect_bits), where the first
// HTTP/2 transfer to run in the action takes it as the socket's state; a
// readable-only mask would keep a transfer that has just sent its POST
// HEADERS from sending its body in the same action while the next
// transfer's HEADERS go out: interleaved requests, which Knot Resolver 5.6
// refuses (RST_STREAM REFUSED_STREAM) and curl answers by retiring the
// connection (docs/architecture.md, "No connection churn").
template <class WritableNow>
int socket_action_mask(bool readable, bool writable, WritableNow&& writable_now) {
  int mask = 0;
  if (readable) mask |= CURL_CSELECT_IN;
  if (writable || (readable && writable_now())) mask |= CURL_CSELECT_OUT;
  return mask;
}

// "TLSv1.3": the protocol of the TLS session under a transfer, read while
// the transfer is active (CURLINFO_TLS_SSL_PTR). "" when the TLS backend
// cannot say.
std::string curl_tls_version(CURL* easy);

}  // namespace nxdns::upstream
