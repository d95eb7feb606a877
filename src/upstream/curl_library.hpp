#pragma once
// libcurl, opened at run time when the first DoH upstream is built (or the
// first blocklist is downloaded) instead of being linked. Debian's libcurl
// brings OpenSSL and a long dependency tail (Kerberos, LDAP, SASL, RTMP, SSH)
// into every process that links it: megabytes of resident pages in a daemon
// whose upstreams are all DoT, which never calls curl (docs/performance.md,
// "Memory"). Opened this way, those libraries are mapped only by daemons
// that use HTTPS.
//
// The table holds libcurl's own entry points, called exactly as the linked
// functions would be; curl's headers still give every type and constant, so
// nothing about the API changes but the `curl_lib().` in front of a call.
#include <curl/curl.h>

#include <optional>
#include <string>

namespace nxdns::upstream {

struct CurlLibrary {
  CURLcode (*global_init)(long flags);
  curl_version_info_data* (*version_info)(CURLversion);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_socket_action)(CURLM*, curl_socket_t, int, int*);
  CURLMcode (*multi_assign)(CURLM*, curl_socket_t, void*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  const char* (*multi_strerror)(CURLMcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);

  // A symbol of libcurl or of a library it loaded (its TLS library), or
  // nullptr.
  void* symbol(const char* name) const;
  // libcurl's version string ("8.5.0"), empty when it reports none.
  std::string version() const;
  void* handle = nullptr;
};

// Opens `path` (else `fallback`, a soname for the loader's search path) and
// resolves every entry point; nullopt and a one-line reason naming the file
// otherwise. The library stays loaded for the process lifetime on success.
std::optional<CurlLibrary> open_curl_library(const char* path, const char* fallback, std::string* error);

// Opens libcurl once per process (the path found at build time, then the
// soname through the loader's search path) and resolves every entry point.
// On failure returns nullptr and says which file and why; a later call tries
// again. Not thread-safe: the daemon calls it from its one thread.
const CurlLibrary* load_curl_library(std::string* error);

// load_curl_library(), then curl_global_init once for the process lifetime
// (libcurl's global state is never torn down: a later user would need it
// again). curl_global_init is not thread-safe and must run before any other
// curl call, so every user of libcurl (the DoH multi on the loop, the list
// fetcher's worker thread) calls this from the daemon's one thread first.
// nullptr and a one-line reason when either step fails.
const CurlLibrary* load_initialised_curl(std::string* error);

// The library load_curl_library() opened. Calling it before a successful
// load is a programming error (it aborts with a message, never returns a
// half-filled table).
const CurlLibrary& curl_lib();

// Whether this process has libcurl mapped through load_curl_library().
bool curl_library_loaded();

}  // namespace nxdns::upstream
