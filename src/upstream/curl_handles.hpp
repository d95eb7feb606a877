#pragma once
// RAII owners for libcurl handles, so that every CURL, CURLM and header list
// is released exactly once on every path (error returns included).
//
// Order matters and is the owners' job, not these deleters': an easy handle
// must be removed from its multi before it is cleaned up, and every easy
// handle must be gone before the multi is (CurlMulti and DohTransport do
// that explicitly).
#include <curl/curl.h>

#include <memory>

#include "upstream/curl_library.hpp"

namespace nxdns::upstream {

struct CurlEasyDeleter {
  void operator()(CURL* e) const noexcept { curl_lib().easy_cleanup(e); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* m) const noexcept { curl_lib().multi_cleanup(m); }
};
struct CurlSlistDeleter {
  void operator()(curl_slist* l) const noexcept { curl_lib().slist_free_all(l); }
};

using CurlEasyPtr = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlMultiPtr = std::unique_ptr<CURLM, CurlMultiDeleter>;
using CurlSlistPtr = std::unique_ptr<curl_slist, CurlSlistDeleter>;

}  // namespace nxdns::upstream
