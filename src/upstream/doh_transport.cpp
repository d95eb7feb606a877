#include "upstream/doh_transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <vector>

#include "log/log.hpp"
#include "upstream/certificate_time.hpp"
#include "upstream/doh_wire.hpp"
#include "upstream/retry_decision.hpp"
#include "upstream/tls_ciphersuites.hpp"
#include "upstream/tls_config.hpp"

namespace nxdns::upstream {

namespace {

bool is_dial_failure(Cause c) {
  return c == Cause::connect_failed || c == Cause::handshake_failed || c == Cause::certificate ||
         c == Cause::certificate_clock_behind;
}

const char* http_version_name(long v) {
  switch (v) {
    case CURL_HTTP_VERSION_1_0:
      return "HTTP/1.0";
    case CURL_HTTP_VERSION_1_1:
      return "HTTP/1.1";
    case CURL_HTTP_VERSION_2_0:
      return "HTTP/2";
#ifdef CURL_HTTP_VERSION_3
    case CURL_HTTP_VERSION_3:
      return "HTTP/3";
#endif
    default:
      return "";
  }
}

// RFC 9325 §4.1 for DoH as for DoT (tls_ciphersuites.hpp), in OpenSSL's
// names: libcurl hands CURLOPT_SSL_CIPHER_LIST to its TLS library verbatim,
// so another backend would fail every handshake on them. Such a build keeps
// its library's TLS 1.2 defaults, and each DoH upstream says so when built.
std::string tls12_cipher_list(const std::string& label) {
  const curl_version_info_data* v = curl_lib().version_info(CURLVERSION_NOW);
  const std::string ssl = v && v->ssl_version ? v->ssl_version : "";
  if (ssl.rfind("OpenSSL/", 0) == 0) return openssl_tls12_cipher_list();
  log::warn("doh ", label, ": libcurl's TLS library is ", ssl.empty() ? std::string("unknown") : ssl,
            ", not OpenSSL: its default TLS 1.2 cipher suites apply, not only ECDHE with AES-GCM or "
            "ChaCha20-Poly1305");
  return {};
}

curl_slist* append(curl_slist* list, const char* line, bool& ok) {
  if (!ok) return list;
  curl_slist* next = curl_lib().slist_append(list, line);
  if (!next) {
    ok = false;
    return list;
  }
  return next;
}

}  // namespace

// One exchange: its easy handle and everything the handle points at.
struct DohTransport::Exchange final : CurlMulti::Transfer {
  Exchange(DohTransport& t, ExchangeId i, CurlEasyPtr e) : Transfer(std::move(e)), owner(&t), id(i) {}

  DohTransport* owner;
  ExchangeId id;
  Completion done;
  std::uint16_t client_id = 0;
  dns::Bytes wire;  // the POST body curl sends from (CURLOPT_POSTFIELDS does not copy)
  dns::Bytes body;
  // Response headers, judged at the first body byte so a wrong answer is
  // never buffered: its body is read and dropped (an HTTP/1.1 connection
  // stays usable after a small error page) up to the size bound.
  bool head_checked = false;
  bool bad_status = false;
  bool bad_type = false;
  bool too_large = false;
  bool out_of_memory = false;
  std::size_t discarded = 0;
  // A header line or body byte of the response arrived (retry_decision's
  // "response bytes received": the server evidently processed the request).
  bool response_began = false;
  bool started = false;   // curl put it on a connection (PREREQFUNCTION)
  bool body_complete = false;  // Content-Length octets arrived: its stream is over
  bool dialing_now = false;    // curl opened a connection for it, not started yet
  std::uint64_t added_at_action = 0;  // CurlMulti::actions() when added
  bool redialed = false;  // the one retry is spent
  std::string tls_version;  // read while the transfer is live
  char errbuf[CURL_ERROR_SIZE] = {};

  void transfer_done(CURLcode rc) noexcept override {
    // on_done may destroy *this (it finishes the exchange): nothing after.
    try {
      owner->on_done(*this, rc);
    } catch (const std::exception& e) {
      log::error("doh: transfer completion threw: ", e.what());
    } catch (...) {
      log::error("doh: transfer completion threw");
    }
  }

  void dialing() noexcept override {
    // A refused stream being re-sent on a new connection: not on a stream.
    if (started) {
      started = false;
      --owner->running_;
    }
    if (!dialing_now) {
      dialing_now = true;
      ++owner->dialing_;
    }
  }
  void settle_counts() noexcept {
    if (started) {
      started = false;
      --owner->running_;
    }
    if (dialing_now) {
      dialing_now = false;
      --owner->dialing_;
    }
  }

  static int on_prereq(void* clientp, char*, char*, int, int) noexcept {
    auto* ex = static_cast<Exchange*>(clientp);
    try {
      ex->owner->on_started(*ex);
    } catch (...) {
      // Only the capacity estimate (arming a timer) can throw: keep the
      // transfer going with the estimate as it was.
    }
    return CURL_PREREQFUNC_OK;
  }

  static size_t on_header(char* data, size_t size, size_t n, void* userp) noexcept {
    auto* ex = static_cast<Exchange*>(userp);
    const std::size_t len = size * n;
    if (!ex->response_began) {
      ex->response_began = true;
      try {
        ex->owner->on_status_line(std::string_view(data, len));
      } catch (...) {
        // As in on_prereq: only the capacity estimate is lost.
      }
    }
    return len;
  }

  static size_t on_write(char* data, size_t size, size_t n, void* userp) noexcept {
    auto* ex = static_cast<Exchange*>(userp);
    const std::size_t len = size * n;
    ex->response_began = true;
    if (!ex->head_checked) {
      ex->head_checked = true;
      long status = 0;
      curl_lib().easy_getinfo(ex->easy(), CURLINFO_RESPONSE_CODE, &status);
      char* type = nullptr;
      curl_lib().easy_getinfo(ex->easy(), CURLINFO_CONTENT_TYPE, &type);
      ex->bad_status = status < 200 || status > 299;
      ex->bad_type = !ex->bad_status && !is_dns_message_type(type);
      try {
        ex->tls_version = curl_tls_version(ex->easy());
      } catch (...) {
        // Only a statistic.
      }
    }
    if (ex->bad_status || ex->bad_type) {
      ex->discarded += len;
      return ex->discarded > doh_max_response ? 0 : len;
    }
    if (ex->body.size() + len > doh_max_response) {
      ex->too_large = true;
      return 0;  // CURLE_WRITE_ERROR: the rest is never read
    }
    try {
      ex->body.insert(ex->body.end(), data, data + len);
    } catch (...) {
      ex->out_of_memory = true;
      return 0;
    }
    curl_off_t announced = -1;
    curl_lib().easy_getinfo(ex->easy(), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
    ex->body_complete = announced >= 0 && ex->body.size() >= static_cast<std::size_t>(announced);
    return len;
  }
};

std::unique_ptr<DohTransport> DohTransport::create(std::shared_ptr<CurlMulti> multi, loop::Scheduler& sched,
                                                   const DohTransportOptions& opts, std::string* error) {
  const std::string ca = opts.ca_file ? *opts.ca_file : std::string(system_ca_bundle);
  if (::access(ca.c_str(), R_OK) != 0) {
    const int e = errno;
    if (error) {
      *error = log::cat("upstream ", opts.label, ": cannot read ",
                        opts.ca_file ? "ca_file " : "the system trust store ", ca, ": ", std::strerror(e));
    }
    return nullptr;
  }
  if (!multi) {
    if (error) *error = log::cat("upstream ", opts.label, ": no libcurl multi handle");
    return nullptr;
  }
  const std::string key = log::cat(opts.tls_name, ":", opts.address.port());
  CurlMulti::Host* host = multi->attach(key, opts.address);
  if (!host) {
    // Same name and port, another address: the shared DNS cache can pin
    // only one, so this upstream gets a multi (and connection pool) of its own.
    log::info("doh ", opts.label, ": ", key, " is pinned to another address by a sibling upstream; using a private connection pool");
    std::string why;
    multi = CurlMulti::create(multi->base(), &why);
    if (!multi) {
      if (error) *error = log::cat("upstream ", opts.label, ": ", why);
      return nullptr;
    }
    host = multi->attach(key, opts.address);
  }
  auto t = std::make_unique<DohTransport>(Key{}, std::move(multi), *host, sched, opts, ca);
  if (!t->post_headers_ || !t->get_headers_ || !t->resolve_) {
    if (error) *error = log::cat("upstream ", opts.label, ": out of memory building the request headers");
    return nullptr;
  }
  return t;
}

DohTransport::DohTransport(Key, std::shared_ptr<CurlMulti> multi, CurlMulti::Host& host, loop::Scheduler& sched,
                           const DohTransportOptions& opts, std::string ca_file)
    : multi_(std::move(multi)),
      host_(&host),
      sched_(sched),
      opts_(opts),
      ca_file_(std::move(ca_file)),
      tls12_ciphers_(tls12_cipher_list(opts.label)),
      base_url_(doh_base_url(opts.tls_name, opts.address.port(), opts.path)),
      completions_(sched, log::cat("doh ", opts.label)),
      capacity_grew_timer_(sched) {
  const std::string accept = log::cat("Accept: ", doh_media_type);
  const std::string content_type = log::cat("Content-Type: ", doh_media_type);
  bool ok = true;
  curl_slist* post = append(nullptr, accept.c_str(), ok);
  post = append(post, content_type.c_str(), ok);
  // No "Expect: 100-continue" round trip before a large POST body.
  post = append(post, "Expect:", ok);
  post_headers_.reset(post);
  if (!ok) post_headers_.reset();
  ok = true;
  get_headers_.reset(append(nullptr, accept.c_str(), ok));
  if (!ok) get_headers_.reset();
  ok = true;
  resolve_.reset(append(nullptr, doh_resolve_entry(opts.tls_name, opts.address).c_str(), ok));
  if (!ok) resolve_.reset();
}

DohTransport::~DohTransport() {
  completions_.clear();
  for (auto& [id, ex] : live_) multi_->abandon(std::move(ex));
  live_.clear();
  multi_->detach(host_);
}

TransportStats DohTransport::stats() const {
  TransportStats st;
  st.open_sessions = host_->open_sockets;
  st.connections_new = connections_new_;
  st.exchanges_new = exchanges_new_;
  st.exchanges_reused = exchanges_reused_;
  st.redials = redials_;
  st.reuse_recoveries = reuse_recoveries_;
  st.tls_version = tls_version_;
  return st;
}

Transport::ExchangeId DohTransport::start(dns::ByteView query, Completion done) {
  const ExchangeId id = next_id_++;
  auto owned = std::make_unique<Exchange>(*this, id, CurlEasyPtr(curl_lib().easy_init()));
  Exchange& ex = *owned;
  ex.done = std::move(done);
  ex.client_id = dns::get_id(query);
  dns::UpstreamQueryOptions qo;
  qo.pad_block = dns::encrypted_query_pad_block;
  qo.tcp_keepalive = false;
  qo.id = 0;  // RFC 8484 §4.1
  ex.wire = dns::prepare_upstream_query(query, qo);
  live_.emplace(id, std::move(owned));

  if (ex.wire.empty()) {
    // The listeners forward only queries the codec accepts; anything else
    // here is a caller bug, reported as the closest thing we have.
    finish(id, Cause::bad_response, "query rejected by the codec before sending");
    return id;
  }
  std::string why;
  if (!ex.easy() || !configure(ex, &why)) {
    finish(id, Cause::local_resource, ex.easy() ? why : "curl_easy_init failed");
    return id;
  }
  ex.added_at_action = multi_->actions();
  const CURLMcode rc = multi_->add(ex);
  if (rc != CURLM_OK) finish(id, Cause::local_resource, log::cat("curl_multi_add_handle: ", curl_lib().multi_strerror(rc)));
  return id;
}

bool DohTransport::configure(Exchange& ex, std::string* why) {
  CURL* e = ex.easy();
  CURLcode rc = CURLE_OK;
  const char* failed = "";
  auto set = [&](CURLoption o, const char* name, auto v) {
    if (rc != CURLE_OK) return;
    rc = curl_lib().easy_setopt(e, o, v);
    if (rc != CURLE_OK) failed = name;
  };
  // No signals: the loop's thread must never take SIGALRM or SIGPIPE from curl.
  set(CURLOPT_NOSIGNAL, "NOSIGNAL", 1L);
  set(CURLOPT_ERRORBUFFER, "ERRORBUFFER", ex.errbuf);
  if (opts_.use_get) {
    const std::string url = doh_get_url(base_url_, ex.wire);  // curl copies it
    set(CURLOPT_URL, "URL", url.c_str());
    set(CURLOPT_HTTPGET, "HTTPGET", 1L);
    set(CURLOPT_HTTPHEADER, "HTTPHEADER", get_headers_.get());
  } else {
    set(CURLOPT_URL, "URL", base_url_.c_str());
    set(CURLOPT_POST, "POST", 1L);
    set(CURLOPT_POSTFIELDSIZE, "POSTFIELDSIZE", static_cast<long>(ex.wire.size()));
    set(CURLOPT_POSTFIELDS, "POSTFIELDS", static_cast<const void*>(ex.wire.data()));
    set(CURLOPT_HTTPHEADER, "HTTPHEADER", post_headers_.get());
  }
#if LIBCURL_VERSION_NUM >= 0x075500
  set(CURLOPT_PROTOCOLS_STR, "PROTOCOLS_STR", "https");
#endif
  // Environment proxies (https_proxy, ...) would route queries elsewhere.
  set(CURLOPT_PROXY, "PROXY", "");
  set(CURLOPT_FOLLOWLOCATION, "FOLLOWLOCATION", 0L);
  set(CURLOPT_RESOLVE, "RESOLVE", resolve_.get());
  set(CURLOPT_HTTP_VERSION, "HTTP_VERSION", static_cast<long>(CURL_HTTP_VERSION_2TLS));
  // A cold burst waits for the first connection to learn whether it
  // multiplexes (HTTP/2: every stream on it) instead of opening
  // slots_per_entry connections at once. Once the upstream has shown it
  // speaks only HTTP/1.1 there is nothing to wait for: dial in parallel.
  set(CURLOPT_PIPEWAIT, "PIPEWAIT", http_version_ == "HTTP/1.1" ? 0L : 1L);
  set(CURLOPT_SSL_VERIFYPEER, "SSL_VERIFYPEER", 1L);
  set(CURLOPT_SSL_VERIFYHOST, "SSL_VERIFYHOST", 2L);
  set(CURLOPT_CAINFO, "CAINFO", ca_file_.c_str());
  // Only the configured anchors: no compiled-in CA directory on the side.
  set(CURLOPT_CAPATH, "CAPATH", static_cast<const char*>(nullptr));
  set(CURLOPT_SSLVERSION, "SSLVERSION", static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  if (!tls12_ciphers_.empty()) set(CURLOPT_SSL_CIPHER_LIST, "SSL_CIPHER_LIST", tls12_ciphers_.c_str());
  // Content-Length above the bound fails the transfer before the body.
  set(CURLOPT_MAXFILESIZE, "MAXFILESIZE", static_cast<long>(doh_max_response));
  set(CURLOPT_CONNECTTIMEOUT_MS, "CONNECTTIMEOUT_MS", static_cast<long>(opts_.dial_timeout.count()));
  set(CURLOPT_TIMEOUT_MS, "TIMEOUT_MS", static_cast<long>(opts_.transfer_timeout.count()));
  set(CURLOPT_WRITEFUNCTION, "WRITEFUNCTION", &Exchange::on_write);
  set(CURLOPT_WRITEDATA, "WRITEDATA", static_cast<void*>(&ex));
  set(CURLOPT_HEADERFUNCTION, "HEADERFUNCTION", &Exchange::on_header);
  set(CURLOPT_HEADERDATA, "HEADERDATA", static_cast<void*>(&ex));
#if LIBCURL_VERSION_NUM >= 0x075000
  set(CURLOPT_PREREQFUNCTION, "PREREQFUNCTION", &Exchange::on_prereq);
  set(CURLOPT_PREREQDATA, "PREREQDATA", static_cast<void*>(&ex));
#endif
  if (rc != CURLE_OK) {
    if (why) *why = log::cat("curl_lib().easy_setopt(CURLOPT_", failed, "): ", curl_lib().easy_strerror(rc));
    return false;
  }
  multi_->bind_sockets(ex, *host_);
  return true;
}

void DohTransport::on_done(Exchange& ex, CURLcode rc) {
  CURL* e = ex.easy();
  long connects = 0;
  curl_lib().easy_getinfo(e, CURLINFO_NUM_CONNECTS, &connects);
  long version = 0;
  curl_lib().easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
  curl_off_t pretransfer_us = 0;
  curl_lib().easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);

  ExchangeResult r = evaluate(ex, rc, pretransfer_us > 0);
  ex.settle_counts();
  // CURLINFO_NUM_CONNECTS == 0: the transfer ran on a connection that was
  // already open (a fresh dial counts one even when it fails).
  const bool reused = connects == 0;
  if (!r.ok() && !ex.redialed && retry_decision(reused, ex.response_began, r.cause) == RetryDecision::retry &&
      redial(ex, r)) {
    return;
  }
  if (r.ok() && ex.redialed) ++reuse_recoveries_;
  if (!is_dial_failure(r.cause)) {
    connections_new_ += static_cast<std::uint64_t>(std::max(0L, connects));
    ++(connects > 0 ? exchanges_new_ : exchanges_reused_);
    if (version == CURL_HTTP_VERSION_2_0) ++exchanges_http2_;
    if (const char* v = http_version_name(version); *v) http_version_ = v;
    if (!ex.tls_version.empty()) tls_version_ = ex.tls_version;
  }
  if (!r.ok()) report_failure(r);
  // Destroys ex.
  finish(ex.id, r.cause, std::move(r.detail), std::move(r.response));
}

ExchangeResult DohTransport::evaluate(Exchange& ex, CURLcode rc, bool connected) {
  ExchangeResult r;
  CURL* e = ex.easy();
  long status = 0;
  curl_lib().easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  char* type = nullptr;
  curl_lib().easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type);

  // What the server said outranks how the transfer ended: a 503 whose error
  // page was cut for size is still a 503.
  if (ex.bad_status || (rc == CURLE_OK && (status < 200 || status > 299))) {
    r.cause = Cause::http_status;
    r.detail = log::cat("HTTP ", status);
    return r;
  }
  if (ex.bad_type || (rc == CURLE_OK && !is_dns_message_type(type))) {
    r.cause = Cause::bad_content_type;
    r.detail = type ? log::cat("content type '", sanitize_header_value(type), "'") : "no content type";
    return r;
  }
  if (ex.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    r.cause = Cause::response_too_large;
    r.detail = log::cat("response body over ", doh_max_response, " octets");
    return r;
  }
  if (ex.out_of_memory) {
    r.cause = Cause::local_resource;
    r.detail = "out of memory buffering the response";
    return r;
  }
  if (rc != CURLE_OK) {
    r.cause = cause_of_curl_error(rc, connected);
    r.detail = ex.errbuf[0] ? log::cat(curl_lib().easy_strerror(rc), ": ", ex.errbuf) : curl_lib().easy_strerror(rc);
    if (rc == CURLE_PEER_FAILED_VERIFICATION) {
      // Which check failed (OpenSSL's X509_V_ERR_*): "not yet valid" is this
      // host's clock, and is reported and retried as such.
      long verify = 0;
      if (curl_lib().easy_getinfo(e, CURLINFO_SSL_VERIFYRESULT, &verify) == CURLE_OK) {
        r.cause = certificate_cause_from_openssl_result(verify);
        if (r.cause == Cause::certificate_clock_behind) r.detail = log::cat(not_yet_valid_detail(), " [", r.detail, "]");
      }
    }
    return r;
  }
  if (ex.body.empty()) {
    r.cause = Cause::bad_response;
    r.detail = log::cat("HTTP ", status, " with an empty body");
    return r;
  }
  // ID 0 went out, so ID 0 must come back (with the question asked).
  const dns::ResponseError v = dns::validate_response(ex.wire, ex.body);
  if (v != dns::ResponseError::none) {
    r.cause = Cause::bad_response;
    r.detail = log::cat("invalid DNS response: ", dns::describe(v));
    return r;
  }
  dns::set_id(ex.body, ex.client_id);
  // Padding was for the wire (RFC 8467); the client asked for none of it.
  r.response = dns::strip_padding(ex.body);
  r.cause = Cause::ok;
  return r;
}

bool DohTransport::redial(Exchange& ex, const ExchangeResult& failed) {
  // The same handle and request again (the POST body and URL are the
  // exchange's own), on a connection dialed for it.
  ex.redialed = true;
  ex.body.clear();
  ex.head_checked = ex.bad_status = ex.bad_type = ex.too_large = ex.out_of_memory = false;
  ex.discarded = 0;
  ex.response_began = false;
  ex.body_complete = false;
  ex.errbuf[0] = '\0';
  if (curl_lib().easy_setopt(ex.easy(), CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK) return false;
  if (multi_->add(ex) != CURLM_OK) return false;
  ++redials_;
  log::debug("doh ", opts_.label, ": reused connection failed before any answer byte (", describe(failed.cause), ": ",
             failed.detail, "); sending once more on a fresh connection");
  return true;
}

void DohTransport::on_started(Exchange& ex) {
  if (!ex.started) {
    ex.started = true;
    ++running_;
  }
  if (ex.dialing_now) {
    ex.dialing_now = false;
    --dialing_;
  }
  // The limit is the server's (SETTINGS_MAX_CONCURRENT_STREAMS), not a
  // connection's: it is kept across reconnections. Forgetting it whenever
  // a connection is replaced (a server's GOAWAY after N streams, a refused
  // stream: curl retires the connection) would re-open the hidden queue
  // each time.
  const std::size_t open = host_->open_sockets;
  // Every slot has a connection and curl holds back some of ours that it
  // has already looked at (added before the previous action): it is
  // running as many as the server allows. Streams in use now are the
  // started exchanges minus those whose answer is complete (curl reports
  // them after this action, but their stream is already free: this very
  // start may be taking it).
  std::size_t held = 0;
  std::size_t in_use = 0;
  for (const auto& [id, live] : live_) {
    if (!live->started && live->added_at_action + 1 < multi_->actions()) ++held;
    if (live->started && !live->body_complete) ++in_use;
  }
  // While a connection is being dialed, what curl holds may be waiting for
  // its handshake, not for a stream: judging then would understate (seen
  // against Knot Resolver, which replaces its connections under load).
  if (held == 0 || dialing_ > 0) return;
  const std::size_t limit = inferred_stream_limit(in_use, open);
  // The lowest observation wins: what can still read high (a stream curl
  // re-sends after a refusal before it dials) only overstates.
  if (limit > 0 && (stream_limit_ == 0 || limit < stream_limit_)) learn(protocol_, limit);
}

void DohTransport::on_status_line(std::string_view line) {
  // "HTTP/2 200", "HTTP/1.1 200 OK" (curl hands the status line first).
  if (line.rfind("HTTP/2", 0) == 0) {
    learn(DohProtocol::http2, stream_limit_);
  } else if (line.rfind("HTTP/1.", 0) == 0) {
    learn(DohProtocol::http1, stream_limit_);
  }
}

void DohTransport::learn(DohProtocol protocol, std::size_t stream_limit) {
  const std::size_t before = capacity();
  protocol_ = protocol;
  stream_limit_ = stream_limit;
  if (capacity() > before) {
    // Usually inside a curl callback: the pool pumps from the loop.
    capacity_grew_timer_.arm(loop::Duration::zero(), [this] { capacity_grew(); });
  }
}

void DohTransport::report_failure(const ExchangeResult& r) {
  const std::string line = log::cat(describe(r.cause), ": ", r.detail);
  if (!is_dial_failure(r.cause)) {
    log::debug("doh ", opts_.label, ": exchange failed (", line, ")");
    return;
  }
  if (!dial_warnings_.first_in_window(line, sched_.now())) {
    log::debug("doh ", opts_.label, ": connection failed again: ", line);
    return;
  }
  log::warn("doh ", opts_.label, ": connection failed: ", line);
}

void DohTransport::cancel(ExchangeId id) {
  if (completions_.drop(id)) return;
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  std::unique_ptr<Exchange> ex = std::move(it->second);
  live_.erase(it);
  ex->settle_counts();
  multi_->abandon(std::move(ex));
}

void DohTransport::close_all() {
  std::vector<ExchangeId> ids;
  ids.reserve(live_.size());
  for (const auto& [id, ex] : live_) ids.push_back(id);
  for (const ExchangeId id : ids) finish(id, Cause::cancelled, "transport closed");
}

void DohTransport::finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  std::unique_ptr<Exchange> ex = std::move(it->second);
  live_.erase(it);
  ex->settle_counts();
  Completion done = std::move(ex->done);
  // Still running (close_all, a failed add): curl lets go of it first.
  multi_->abandon(std::move(ex));
  completions_.push(id, std::move(done), ExchangeResult{cause, std::move(response), std::move(detail)});
}

}  // namespace nxdns::upstream
