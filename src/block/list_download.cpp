#include "block/list_download.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <system_error>

#include "block/list_copy_meta.hpp"
#include "block/list_transfer_verdict.hpp"
#include "cache/atomic_file.hpp"
#include "log/log.hpp"
#include "upstream/curl_handles.hpp"

namespace nxdns::block {

namespace {

using upstream::curl_lib;

std::string errno_text(int err) { return std::generic_category().message(err); }

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::optional<std::uint64_t> file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (std::tolower(x) != std::tolower(y)) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// Where a redirect pointed, as much of it as a log line may say.
std::string location_label(const std::string& location) {
  if (location.empty()) return {};
  if (location.front() == '/') return "another path on the same host";
  const auto u = parse_list_url(location, nullptr);
  return u ? host_label(*u) : std::string("a URL that is not https://HOST/PATH");
}

// What curl's callbacks write into, owned by the download's stack frame for
// the whole of curl_easy_perform. No exception leaves a callback.
struct Transfer {
  explicit Transfer(const DownloadRequest& r) : req(r), file(r.copy_path) {}

  const DownloadRequest& req;
  cache::FileReplacement file;
  bool file_open = false;
  long status = 0;  // of the latest response line
  std::uint64_t received = 0;
  bool over_limit = false;
  bool stopped = false;
  std::string write_error;
  std::string etag, last_modified, location;
  char errbuf[CURL_ERROR_SIZE] = {};

  std::optional<std::string> open_file() {
    if (file_open) return std::nullopt;
    auto e = file.open();
    file_open = !e;
    return e;
  }

  static std::size_t on_write(char* data, std::size_t size, std::size_t n, void* ud) noexcept {
    auto& t = *static_cast<Transfer*>(ud);
    const std::size_t len = size * n;
    t.received += len;
    // The limit holds for bodies without a Content-Length too (chunked,
    // or a server that lies): the transfer stops as soon as it is passed.
    if (t.received > t.req.max_bytes) {
      t.over_limit = true;
      return 0;
    }
    // An error page is counted against the limit but never kept.
    if (t.status != 200) return len;
    try {
      if (auto e = t.open_file()) {
        t.write_error = *e;
        return 0;
      }
      if (auto e = t.file.write(dns::ByteView(reinterpret_cast<const std::uint8_t*>(data), len))) {
        t.write_error = *e;
        return 0;
      }
    } catch (const std::exception& e) {
      t.write_error = e.what();
      return 0;
    }
    return len;
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* ud) noexcept {
    auto& t = *static_cast<Transfer*>(ud);
    const std::size_t len = size * n;
    const std::string_view line(data, len);
    try {
      if (line.substr(0, 5) == "HTTP/") {
        // A new response (after a 1xx, say): what the last one said is moot.
        t.etag.clear();
        t.last_modified.clear();
        t.location.clear();
        const auto sp = line.find(' ');
        t.status = sp == std::string_view::npos ? 0 : std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
        return len;
      }
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) return len;
      const std::string_view name = line.substr(0, colon);
      const std::string_view value = trim(line.substr(colon + 1));
      if (same_name(name, "etag")) t.etag.assign(value);
      if (same_name(name, "last-modified")) t.last_modified.assign(value);
      if (same_name(name, "location")) t.location.assign(value);
    } catch (const std::exception&) {
      return 0;  // out of memory: fail the transfer
    }
    return len;
  }

  static int on_progress(void* ud, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept {
    auto& t = *static_cast<Transfer*>(ud);
    if (t.req.stop && t.req.stop->load(std::memory_order_relaxed)) {
      t.stopped = true;
      return 1;
    }
    return 0;
  }
};

// The canonical URL libcurl is given: the host exactly as the resolve entry
// names it, so the pinned addresses are what curl uses.
std::string request_url(const ListUrl& u) {
  std::string out = "https://";
  out += u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  out += ":" + std::to_string(u.port);
  out += u.target;
  return out;
}

}  // namespace

std::string resolve_entry(const ListUrl& u, const std::vector<std::string>& addresses) {
  std::string out = log::cat(u.host, ":", u.port, ":");
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    if (i) out += ",";
    out += addresses[i].find(':') != std::string::npos ? "[" + addresses[i] + "]" : addresses[i];
  }
  return out;
}

FetchResult download_list(const DownloadRequest& req) {
  FetchResult res;
  res.path = req.copy_path;
  const auto finish = [&](FetchOutcome o, const std::string& why) {
    res.outcome = o;
    res.detail = log::cat(req.label, ": ", why);
    const auto size = file_size(req.copy_path);
    res.have_copy = size.has_value();
    res.bytes = size.value_or(0);
    return res;
  };

  const std::string dir = directory_of(req.copy_path);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return finish(FetchOutcome::failed, log::cat("cannot create the directory ", dir, ": ", errno_text(errno)));
  }

  // The validators count only for the copy they were sent with.
  const std::optional<CopyMeta> meta = read_copy_meta(req.copy_path);
  const std::optional<std::uint64_t> copy_size = file_size(req.copy_path);
  const bool usable_meta = meta && copy_size && *copy_size == meta->bytes;

  Transfer t(req);
  upstream::CurlEasyPtr easy(curl_lib().easy_init());
  if (!easy) return finish(FetchOutcome::failed, "curl_easy_init failed");
  curl_slist* raw_headers = nullptr;
  bool headers_ok = true;
  const auto add_header = [&](const std::string& h) {
    curl_slist* next = curl_lib().slist_append(raw_headers, h.c_str());
    if (!next) headers_ok = false;
    else raw_headers = next;
  };
  bool conditional = false;
  if (usable_meta && storable_validator(meta->etag)) {
    add_header("If-None-Match: " + meta->etag);
    conditional = true;
  }
  if (usable_meta && storable_validator(meta->last_modified)) {
    add_header("If-Modified-Since: " + meta->last_modified);
    conditional = true;
  }
  const upstream::CurlSlistPtr headers(raw_headers);
  upstream::CurlSlistPtr resolve;
  if (!req.url.host_is_ip) {
    resolve.reset(curl_lib().slist_append(nullptr, resolve_entry(req.url, req.addresses).c_str()));
  }
  if (!headers_ok || (!req.url.host_is_ip && !resolve)) return finish(FetchOutcome::failed, "out of memory");

  CURL* e = easy.get();
  CURLcode rc = CURLE_OK;
  const char* failed_opt = "";
  const auto set = [&](CURLoption o, const char* name, auto v) {
    if (rc != CURLE_OK) return;
    rc = curl_lib().easy_setopt(e, o, v);
    if (rc != CURLE_OK) failed_opt = name;
  };
  const std::string url = request_url(req.url);
  // No signals: this is not the thread that handles them.
  set(CURLOPT_NOSIGNAL, "NOSIGNAL", 1L);
  set(CURLOPT_ERRORBUFFER, "ERRORBUFFER", t.errbuf);
  set(CURLOPT_URL, "URL", url.c_str());
  set(CURLOPT_HTTPGET, "HTTPGET", 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
  set(CURLOPT_PROTOCOLS_STR, "PROTOCOLS_STR", "https");
#else
  set(CURLOPT_PROTOCOLS, "PROTOCOLS", static_cast<long>(CURLPROTO_HTTPS));
#endif
  // Environment proxies (https_proxy, ...) would send the request elsewhere
  // and resolve the list's host there.
  set(CURLOPT_PROXY, "PROXY", "");
  // A redirect's host would be resolved by the system resolver, which the
  // fetcher must never use; the verdict names where it pointed instead.
  set(CURLOPT_FOLLOWLOCATION, "FOLLOWLOCATION", 0L);
  if (resolve) set(CURLOPT_RESOLVE, "RESOLVE", resolve.get());
  set(CURLOPT_SSL_VERIFYPEER, "SSL_VERIFYPEER", 1L);
  set(CURLOPT_SSL_VERIFYHOST, "SSL_VERIFYHOST", 2L);
  set(CURLOPT_CAINFO, "CAINFO", req.ca_file.c_str());
  // Only the configured anchors: no compiled-in CA directory on the side.
  set(CURLOPT_CAPATH, "CAPATH", static_cast<const char*>(nullptr));
  set(CURLOPT_SSLVERSION, "SSLVERSION", static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  // A Content-Length over the limit fails before the first body octet.
  set(CURLOPT_MAXFILESIZE_LARGE, "MAXFILESIZE_LARGE", static_cast<curl_off_t>(req.max_bytes));
  set(CURLOPT_CONNECTTIMEOUT_MS, "CONNECTTIMEOUT_MS", static_cast<long>(req.connect_timeout.count()));
  set(CURLOPT_TIMEOUT_MS, "TIMEOUT_MS", static_cast<long>(req.total_timeout.count()));
  set(CURLOPT_LOW_SPEED_LIMIT, "LOW_SPEED_LIMIT", 1L);
  set(CURLOPT_LOW_SPEED_TIME, "LOW_SPEED_TIME", static_cast<long>(req.stall_timeout.count()));
  if (headers) set(CURLOPT_HTTPHEADER, "HTTPHEADER", headers.get());
  set(CURLOPT_WRITEFUNCTION, "WRITEFUNCTION", &Transfer::on_write);
  set(CURLOPT_WRITEDATA, "WRITEDATA", static_cast<void*>(&t));
  set(CURLOPT_HEADERFUNCTION, "HEADERFUNCTION", &Transfer::on_header);
  set(CURLOPT_HEADERDATA, "HEADERDATA", static_cast<void*>(&t));
  set(CURLOPT_XFERINFOFUNCTION, "XFERINFOFUNCTION", &Transfer::on_progress);
  set(CURLOPT_XFERINFODATA, "XFERINFODATA", static_cast<void*>(&t));
  set(CURLOPT_NOPROGRESS, "NOPROGRESS", 0L);
  if (rc != CURLE_OK) {
    return finish(FetchOutcome::failed, log::cat("curl_easy_setopt(CURLOPT_", failed_opt, "): ", curl_lib().easy_strerror(rc)));
  }

  TransferFacts f;
  f.code = curl_lib().easy_perform(e);
  f.curl_error = t.errbuf;
  long status = 0;
  curl_lib().easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  f.http_status = status;
  curl_off_t length = -1;
  curl_lib().easy_getinfo(e, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  f.content_length = static_cast<std::int64_t>(length);
  f.conditional = conditional;
  f.received = t.received;
  f.max_bytes = req.max_bytes;
  f.over_limit = t.over_limit;
  f.write_error = t.write_error;
  f.stopped = t.stopped;
  f.location = location_label(t.location);
  res.received = t.received;
  const TransferVerdict v = judge_transfer(f);
  if (v.outcome != FetchOutcome::updated) {
    t.file.abandon();
    return finish(v.outcome, v.why);
  }

  // An empty list is a list: its copy is an empty file.
  if (auto err = t.open_file()) return finish(FetchOutcome::failed, log::cat("cannot write the copy: ", *err));
  // The old validators go first: a power cut after the rename must not pair
  // them with the new copy (its next fetch is then unconditional, not a 304
  // that keeps a copy the server did not send).
  const std::string old_meta = meta_path(req.copy_path);
  if (::unlink(old_meta.c_str()) != 0 && errno != ENOENT) {
    return finish(FetchOutcome::failed, log::cat("cannot remove ", old_meta, ": ", errno_text(errno)));
  }
  if (auto err = t.file.commit()) return finish(FetchOutcome::failed, log::cat("cannot write the copy: ", *err));
  CopyMeta m;
  m.source = req.label;
  m.bytes = t.received;
  m.fetched_unix = static_cast<std::int64_t>(std::time(nullptr));
  if (storable_validator(t.etag)) m.etag = t.etag;
  if (storable_validator(t.last_modified)) m.last_modified = t.last_modified;
  std::string why = v.why;
  if (auto err = write_copy_meta(req.copy_path, m)) {
    why += log::cat("; ", old_meta, " not written (", *err, "), so the next fetch downloads the whole list");
  }
  return finish(FetchOutcome::updated, why);
}

}  // namespace nxdns::block
