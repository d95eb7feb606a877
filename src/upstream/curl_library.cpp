#include "upstream/curl_library.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "log/log.hpp"

// Both set by CMakeLists.txt for this file only: where the build found
// libcurl, and its soname.
#if !defined(NXDNS_LIBCURL_PATH) || !defined(NXDNS_LIBCURL_SONAME)
#error "NXDNS_LIBCURL_PATH and NXDNS_LIBCURL_SONAME come from the build"
#endif

namespace nxdns::upstream {

namespace {

std::optional<CurlLibrary> loaded;

// dlsym returns an object pointer; copying it into the function pointer's
// representation is how POSIX expects it to be used.
template <class Fn>
bool resolve(void* handle, const char* name, Fn& out, std::string* missing) {
  void* p = dlsym(handle, name);
  if (!p) {
    if (missing->empty()) *missing = name;
    return false;
  }
  static_assert(sizeof out == sizeof p);
  std::memcpy(&out, &p, sizeof out);
  return true;
}

}  // namespace

void* CurlLibrary::symbol(const char* name) const { return handle ? dlsym(handle, name) : nullptr; }

std::string CurlLibrary::version() const {
  const curl_version_info_data* v = version_info ? version_info(CURLVERSION_NOW) : nullptr;
  return v && v->version ? v->version : "";
}

bool curl_library_loaded() { return loaded.has_value(); }

std::optional<CurlLibrary> open_curl_library(const char* path, const char* fallback, std::string* error) {
  // RTLD_LOCAL: curl's symbols (and OpenSSL's) stay out of the global scope,
  // where they could interpose on another library's.
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  std::string why;
  if (!h) {
    const char* e = dlerror();
    why = e ? e : log::cat(path, ": cannot be opened");
    if (fallback && std::strcmp(path, fallback) != 0) {
      h = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* e2 = dlerror();
        why = log::cat(why, "; ", e2 ? e2 : log::cat(fallback, ": cannot be opened"));
      }
    }
  }
  if (!h) {
    if (error) *error = log::cat("libcurl (needed for DoH) could not be loaded: ", why);
    return std::nullopt;
  }
  CurlLibrary lib;
  lib.handle = h;
  std::string missing;
  bool ok = true;
  ok = resolve(h, "curl_global_init", lib.global_init, &missing) && ok;
  ok = resolve(h, "curl_version_info", lib.version_info, &missing) && ok;
  ok = resolve(h, "curl_easy_init", lib.easy_init, &missing) && ok;
  ok = resolve(h, "curl_easy_cleanup", lib.easy_cleanup, &missing) && ok;
  ok = resolve(h, "curl_easy_setopt", lib.easy_setopt, &missing) && ok;
  ok = resolve(h, "curl_easy_perform", lib.easy_perform, &missing) && ok;
  ok = resolve(h, "curl_easy_getinfo", lib.easy_getinfo, &missing) && ok;
  ok = resolve(h, "curl_easy_strerror", lib.easy_strerror, &missing) && ok;
  ok = resolve(h, "curl_multi_init", lib.multi_init, &missing) && ok;
  ok = resolve(h, "curl_multi_cleanup", lib.multi_cleanup, &missing) && ok;
  ok = resolve(h, "curl_multi_setopt", lib.multi_setopt, &missing) && ok;
  ok = resolve(h, "curl_multi_add_handle", lib.multi_add_handle, &missing) && ok;
  ok = resolve(h, "curl_multi_remove_handle", lib.multi_remove_handle, &missing) && ok;
  ok = resolve(h, "curl_multi_socket_action", lib.multi_socket_action, &missing) && ok;
  ok = resolve(h, "curl_multi_assign", lib.multi_assign, &missing) && ok;
  ok = resolve(h, "curl_multi_info_read", lib.multi_info_read, &missing) && ok;
  ok = resolve(h, "curl_multi_strerror", lib.multi_strerror, &missing) && ok;
  ok = resolve(h, "curl_slist_append", lib.slist_append, &missing) && ok;
  ok = resolve(h, "curl_slist_free_all", lib.slist_free_all, &missing) && ok;
  if (!ok) {
    dlclose(h);
    if (error) *error = log::cat("libcurl (needed for DoH) could not be used: ", path, " lacks ", missing);
    return std::nullopt;
  }
  return lib;
}

const CurlLibrary* load_curl_library(std::string* error) {
  if (!loaded) loaded = open_curl_library(NXDNS_LIBCURL_PATH, NXDNS_LIBCURL_SONAME, error);
  return loaded ? &*loaded : nullptr;
}

const CurlLibrary* load_initialised_curl(std::string* error) {
  const CurlLibrary* lib = load_curl_library(error);
  if (!lib) return nullptr;
  static const CURLcode rc = lib->global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    if (error) *error = log::cat("libcurl initialisation failed: ", lib->easy_strerror(rc));
    return nullptr;
  }
  return lib;
}

const CurlLibrary& curl_lib() {
  if (!loaded) {
    std::fputs("nxdns: internal error: libcurl used before it was loaded\n", stderr);
    std::abort();
  }
  return *loaded;
}

}  // namespace nxdns::upstream
