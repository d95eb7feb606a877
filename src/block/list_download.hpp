#pragma once
// One download of one list, start to end: the fetcher's worker thread runs
// it, never the serving loop (it blocks on the network and the disk).
//
// A conditional GET (If-None-Match / If-Modified-Since from the copy's
// validators, block/list_copy_meta.hpp) over HTTPS only, certificate and
// host name verified, to the addresses the daemon's own routing gave
// (CURLOPT_RESOLVE pins host:port to them, so libcurl never asks the
// system resolver, and TLS still checks the certificate against the URL's
// host). No proxy, no redirects. The body streams to COPY.tmp in the
// copy's directory (mode 0600); only a complete 200 response
// (block/list_transfer_verdict.hpp) is synced and renamed over the copy,
// and then its validators are written. On any other outcome the copy and
// its validators are as they were and no temporary file is left.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "block/list_fetch_result.hpp"
#include "block/list_url.hpp"

namespace nxdns::block {

struct DownloadRequest {
  ListUrl url;
  std::string label;                   // for the detail line (no secrets)
  std::vector<std::string> addresses;  // IP literals for url.host; unused when it is one
  std::string ca_file;                 // trust anchors (PEM)
  std::string copy_path;
  std::uint64_t max_bytes = 0;
  std::chrono::milliseconds connect_timeout{0};
  std::chrono::milliseconds total_timeout{0};
  // A transfer that moves no octet for this long fails before the total
  // time-out (curl's granularity: whole seconds).
  std::chrono::seconds stall_timeout{0};
  // Set from the loop to stop the transfer (curl looks at least once a
  // second); the result is then a failure saying so.
  const std::atomic<bool>* stop = nullptr;
};

// libcurl must have been loaded and initialised (load_initialised_curl) by
// the loop's thread. finished_unix is left 0: the loop stamps the result.
// `detail` starts with the label.
FetchResult download_list(const DownloadRequest& req);

// "host:port:addr,addr" for CURLOPT_RESOLVE (IPv6 addresses in brackets).
std::string resolve_entry(const ListUrl& u, const std::vector<std::string>& addresses);

}  // namespace nxdns::block
