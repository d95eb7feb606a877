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
#include "upstream/tls_config.hpp"

namespace nxdns::upstream {

namespace {

// RFC 8467 §4.1: pad queries to a multiple of 128 octets so that their size
// says little about the name asked.
constexpr std::size_t query_pad_block = 128;
// The same failure repeated within this window logs at debug: one warn per
// distinct problem, not one per exchange of a burst.
constexpr auto warn_repeat_window = std::chrono::seconds(60);

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

  static size_t on_write(char* data, size_t size, size_t n, void* userp) noexcept {
    auto* ex = static_cast<Exchange*>(userp);
    const std::size_t len = size * n;
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
      base_url_(doh_base_url(opts.tls_name, opts.address.port(), opts.path)),
      completions_(sched, log::cat("doh ", opts.label)) {
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
  qo.pad_block = query_pad_block;
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
  // Content-Length above the bound fails the transfer before the body.
  set(CURLOPT_MAXFILESIZE, "MAXFILESIZE", static_cast<long>(doh_max_response));
  set(CURLOPT_CONNECTTIMEOUT_MS, "CONNECTTIMEOUT_MS", static_cast<long>(opts_.dial_timeout.count()));
  set(CURLOPT_TIMEOUT_MS, "TIMEOUT_MS", static_cast<long>(opts_.transfer_timeout.count()));
  set(CURLOPT_WRITEFUNCTION, "WRITEFUNCTION", &Exchange::on_write);
  set(CURLOPT_WRITEDATA, "WRITEDATA", static_cast<void*>(&ex));
  if (rc != CURLE_OK) {
    if (why) *why = log::cat("curl_lib().easy_setopt(CURLOPT_", failed, "): ", curl_lib().easy_strerror(rc));
    return false;
  }
  multi_->bind_sockets(e, *host_);
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

void DohTransport::report_failure(const ExchangeResult& r) {
  const std::string line = log::cat(describe(r.cause), ": ", r.detail);
  if (!is_dial_failure(r.cause)) {
    log::debug("doh ", opts_.label, ": exchange failed (", line, ")");
    return;
  }
  const auto now = sched_.now();
  if (line == last_warn_ && now - last_warn_at_ < warn_repeat_window) {
    log::debug("doh ", opts_.label, ": connection failed again: ", line);
    return;
  }
  last_warn_ = line;
  last_warn_at_ = now;
  log::warn("doh ", opts_.label, ": connection failed: ", line);
}

void DohTransport::cancel(ExchangeId id) {
  if (completions_.drop(id)) return;
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  std::unique_ptr<Exchange> ex = std::move(it->second);
  live_.erase(it);
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
  Completion done = std::move(ex->done);
  // Still running (close_all, a failed add): curl lets go of it first.
  multi_->abandon(std::move(ex));
  completions_.push(id, std::move(done), ExchangeResult{cause, std::move(response), std::move(detail)});
}

}  // namespace nxdns::upstream
