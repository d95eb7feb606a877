#pragma once
// The URL of a blocklist the daemon downloads (blocking.lists[].url), and
// the name of the copy it keeps of it.
//
// Accepted: https://HOST[:port]/path[?query]. HOST is a host name or an IP
// literal (IPv6 in brackets). Refused: any other scheme (a list fetched in
// clear could be swapped on the way), credentials in the authority (they
// would end up in logs; a list host that wants a secret takes it in the
// path or query, which the label leaves out), fragments, spaces and control
// characters. Unlike an upstream URL a list URL may carry a query string:
// list services select formats with one ("?hostformat=hosts").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/uri_chars.hpp"

namespace nxdns::block {

struct ListUrl {
  std::string host;       // lowercase; an IPv6 literal without brackets
  bool host_is_ip = false;
  std::uint16_t port = net::https_default_port;
  std::string target;     // path and query as written, starting with '/'
};

// nullopt and a one-line reason (which never repeats the URL: it may carry
// a secret) when `url` is not one the fetcher can use.
std::optional<ListUrl> parse_list_url(std::string_view url, std::string* why);

// "https://HOST[:port]": what a log line may say about a list whose caller
// gave no label (config::redact_url's form is the caller's to give).
std::string host_label(const ListUrl& u);

// The file name of the copy kept for `url`: 64 hex digits of its SHA-256
// and ".list". Deterministic (a restart finds its copy), distinct per URL,
// and nothing of the URL's text reaches the file system (no path injection,
// no secret in a directory listing).
std::string list_copy_name(std::string_view url);

}  // namespace nxdns::block
