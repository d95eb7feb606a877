#pragma once
// DNS-over-HTTPS to one upstream (RFC 8484) on the process's shared libcurl
// multi handle: one easy handle per exchange, HTTP/2 streams multiplexed on
// one connection where the server speaks it, HTTP/1.1 over up to
// slots_per_entry parallel connections where it does not.
//
// Wire rules:
// - POST of application/dns-message by default; GET with ?dns=<base64url,
//   no padding> when the upstream's method is "get" (RFC 8484 §4.1).
//   Accept: application/dns-message either way.
// - DNS ID 0 on the wire (§4.1: cache friendly; HTTP matches the answer to
//   the request), the client's ID restored in the reply. Queries padded as
//   for DoT (dns::encrypted_query_pad_block, RFC 8467 §4.1); no
//   edns-tcp-keepalive (connection lifetime is HTTP's business).
// - An answer is accepted only with a 2xx status, Content-Type
//   application/dns-message, at most 65535 octets (the transfer is cut as
//   soon as it grows past that, or when Content-Length announces more),
//   and a DNS response matching the question (dns::validate_response).
//
// Identity and addressing: the URL given to curl is
// https://TLS_NAME:PORT/PATH, and a permanent CURLOPT_RESOLVE entry pins
// TLS_NAME:PORT to the configured address. So curl never asks DNS (which
// may be this daemon), the certificate is verified against tls_name (SNI
// and Host / :authority carry it too), and an https://IP/... upstream with a
// tls_name works like any other. Verification is always on: the configured
// ca_file, else the system bundle; no switch turns it off. TLS 1.2 offers
// only ECDHE with AES-GCM or ChaCha20-Poly1305, as DoT does
// (tls_ciphersuites.hpp), when libcurl runs on OpenSSL.
//
// Failure mapping: non-2xx -> http_status ("HTTP 503"), wrong media type ->
// bad_content_type, oversized -> response_too_large, invalid DNS ->
// bad_response, libcurl errors -> cause_of_curl_error (connect_failed,
// certificate, handshake_failed, connection_reset, eof, ...). A dead or
// half-closed pooled connection is curl's to detect and replace at reuse;
// other exchanges in flight on other streams are untouched.
//
// The one safe retry, the DoT rule (retry_decision): an
// exchange that failed with a connection-lifecycle cause on a connection it
// reused (CURLINFO_NUM_CONNECTS == 0), before any byte of its response
// (no header line, no body byte), is sent once more on a fresh connection
// (CURLOPT_FRESH_CONNECT), within the same attempt budget: counted in
// redials, and in reuse_recoveries when it then succeeds (not a failure for
// the pool). curl does this by itself for HTTP/1.1; for an HTTP/2
// connection the server closed while idle, curl 7.88 fails the stream
// ("HTTP/2 stream was not closed cleanly before end of the underlying
// stream") and only this rule saves the query.
//
// Capacity (no hidden queue): capacity() is doh_capacity() of what the
// transport learned: the protocol from the first response's status line,
// and an HTTP/2 server's per-connection stream limit, inferred
// (inferred_stream_limit) when curl holds some of our transfers back
// although every slot has a connection. libcurl 7.88 does not expose the
// server's SETTINGS_MAX_CONCURRENT_STREAMS; CURLOPT_PREREQFUNCTION tells
// which transfers curl actually started on a connection, the rest of live_
// that curl has already looked at (CurlMulti::actions) is what it holds,
// and a complete body (Content-Length) frees a stream before curl reports
// the transfer done. The pool admits that many, so nothing waits
// unseen in curl's pending list. Growth is announced from the loop (never
// inside a curl callback, where the pool's pump could not add handles). The
// learned limit is the server's, kept for the transport's lifetime.
//
// Stats: open_sessions = TCP connections to this host that are open now
// (counted exactly at socket open/close, idle ones in curl's pool included);
// connections_new = sum of CURLINFO_NUM_CONNECTS over finished exchanges
// (connections that carried a request); exchanges_new/_reused split by
// whether curl had to connect for the exchange; tls_version from the TLS
// session under the newest exchange.
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "log/repeat_limiter.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "upstream/budgets.hpp"
#include "upstream/curl_handles.hpp"
#include "upstream/doh_capacity.hpp"
#include "upstream/curl_multi.hpp"
#include "upstream/completion_queue.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

struct DohTransportOptions {
  net::Endpoint address;  // IP and port to connect to (never resolved)
  std::string tls_name;   // certificate name, SNI and HTTP authority
  std::string path = "/dns-query";
  std::optional<std::string> ca_file;  // PEM bundle; the system bundle when unset
  std::string label;      // redacted URL, for logs
  bool use_get = false;   // config `method: get`
  // TCP connect + TLS handshake of a new connection.
  std::chrono::milliseconds dial_timeout = default_dial_timeout;
  // A backstop only: the pool's attempt budget cancels long before.
  std::chrono::milliseconds transfer_timeout{30000};
};

class DohTransport final : public Transport {
  struct Key {
    explicit Key() = default;
  };

 public:
  // Returns nullptr and a one-line reason (naming the upstream) when the
  // trust anchors cannot be read. When `multi` already pins this
  // tls_name:port to another address, the transport gets a multi of its own
  // on the same event base.
  static std::unique_ptr<DohTransport> create(std::shared_ptr<CurlMulti> multi, loop::Scheduler& sched,
                                              const DohTransportOptions& opts, std::string* error);

  DohTransport(Key, std::shared_ptr<CurlMulti> multi, CurlMulti::Host& host, loop::Scheduler& sched,
               const DohTransportOptions& opts, std::string ca_file);
  // Abandons every exchange (no completion runs) and releases its handles.
  ~DohTransport() override;
  DohTransport(const DohTransport&) = delete;
  DohTransport& operator=(const DohTransport&) = delete;

  ExchangeId start(dns::ByteView query, Completion done) override;
  void cancel(ExchangeId id) override;
  // Outstanding exchanges complete with Cause::cancelled; their streams (or
  // HTTP/1.1 connections) are dropped. Idle pooled connections belong to the
  // shared multi and close when it goes (daemon teardown).
  void close_all() override;
  TransportStats stats() const override;
  const char* kind() const override { return "doh"; }
  std::size_t capacity() const override { return doh_capacity(protocol_, stream_limit_); }

  // Introspection for tests and /api/health.
  std::size_t live_exchanges() const { return live_.size(); }
  // "HTTP/2", "HTTP/1.1": the protocol of the newest finished exchange.
  const std::string& http_version() const { return http_version_; }
  std::uint64_t exchanges_http2() const { return exchanges_http2_; }
  std::uint32_t peak_open_connections() const { return host_->peak_open_sockets; }
  // Connections curl opened to this host (sockets, failed dials included).
  std::uint64_t connections_opened() const { return host_->sockets_opened; }
  std::size_t stream_limit() const { return stream_limit_; }
  const CurlMulti& multi() const { return *multi_; }
  const DohTransportOptions& options() const { return opts_; }

 private:
  struct Exchange;

  bool configure(Exchange& ex, std::string* why);
  void on_done(Exchange& ex, CURLcode rc);
  void on_started(Exchange& ex);
  void on_status_line(std::string_view line);
  bool redial(Exchange& ex, const ExchangeResult& failed);
  void learn(DohProtocol protocol, std::size_t stream_limit);
  ExchangeResult evaluate(Exchange& ex, CURLcode rc, bool connected);
  void finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response = {});
  void report_failure(const ExchangeResult& r);

  std::shared_ptr<CurlMulti> multi_;
  CurlMulti::Host* host_;
  loop::Scheduler& sched_;
  DohTransportOptions opts_;
  std::string ca_file_;
  std::string tls12_ciphers_;  // CURLOPT_SSL_CIPHER_LIST; empty: the library's defaults
  std::string base_url_;  // carries the path: never logged (may hold a token)
  CurlSlistPtr post_headers_;
  CurlSlistPtr get_headers_;
  CurlSlistPtr resolve_;

  ExchangeId next_id_ = 1;
  std::unordered_map<ExchangeId, std::unique_ptr<Exchange>> live_;
  // Completions wait here for the loop: never run inside start()/cancel(),
  // nor inside a socket or curl callback.
  CompletionQueue completions_;

  std::uint64_t connections_new_ = 0;
  std::uint64_t exchanges_new_ = 0;
  std::uint64_t exchanges_reused_ = 0;
  std::uint64_t exchanges_http2_ = 0;
  std::uint64_t redials_ = 0;
  std::uint64_t reuse_recoveries_ = 0;

  DohProtocol protocol_ = DohProtocol::unknown;
  std::size_t stream_limit_ = 0;  // learned HTTP/2 limit; 0: none
  std::size_t running_ = 0;
  std::size_t dialing_ = 0;  // exchanges whose connection curl is dialing
  loop::Timer capacity_grew_timer_;
  std::string tls_version_;
  std::string http_version_;

  log::RepeatLimiter dial_warnings_;
};

}  // namespace nxdns::upstream
