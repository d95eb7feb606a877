#include "block/list_url.hpp"

#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

#include <array>

#include "net/endpoint.hpp"
#include "net/host_name.hpp"
#include "net/uri_chars.hpp"

namespace nxdns::block {

namespace {

std::optional<ListUrl> fail(std::string* why, const char* text) {
  if (why) *why = text;
  return std::nullopt;
}

// 2.28 names the returning one-shot mbedtls_sha256_ret; 3.x has only the
// plain name, returning int. The software digest cannot fail.
void sha256(std::string_view in, unsigned char out[32]) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
#if MBEDTLS_VERSION_MAJOR >= 3
  (void)mbedtls_sha256(p, in.size(), out, 0);
#else
  (void)mbedtls_sha256_ret(p, in.size(), out, 0);
#endif
}

}  // namespace

std::optional<ListUrl> parse_list_url(std::string_view url, std::string* why) {
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return fail(why, "the URL contains a space, a control or a non-ASCII character");
  }
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) return fail(why, "not a URL: expected https://HOST[:port]/PATH");
  std::string scheme(url.substr(0, sep));
  for (char& c : scheme)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (scheme != "https") return fail(why, "a list URL must be https:// (a list fetched in clear could be altered)");
  const std::string_view rest = url.substr(sep + 3);
  const auto auth_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, auth_end);
  const std::string_view target = auth_end == std::string_view::npos ? std::string_view{} : rest.substr(auth_end);
  if (authority.find('@') != std::string_view::npos) {
    return fail(why, "credentials (user:password@) in a list URL are not supported");
  }
  std::string split_why;
  const auto hp = net::split_host_port(authority, "https://[2001:db8::1]/hosts.txt", &split_why);
  if (!hp) {
    if (why) *why = split_why;
    return std::nullopt;
  }
  ListUrl out;
  if (hp->port_text) {
    const auto p = net::parse_port(*hp->port_text);
    if (!p) return fail(why, "the port is not a decimal number from 1 to 65535");
    out.port = *p;
  } else {
    out.port = net::https_default_port;
  }
  if (hp->host.empty()) return fail(why, "the URL has no host");
  if (net::is_ip_literal(hp->host)) {
    if (hp->bracketed != (hp->host.find(':') != std::string_view::npos)) {
      return fail(why, "only an IPv6 address goes inside [ ]");
    }
    out.host_is_ip = true;
    out.host.assign(hp->host);
  } else {
    if (hp->bracketed) return fail(why, "not a valid IPv6 address inside [ ]");
    const auto name = net::is_host_name(hp->host) ? net::normalize_host_name(hp->host) : std::nullopt;
    if (!name) return fail(why, "the host is neither an IP address nor a valid host name");
    out.host = *name;
  }
  if (target.find('#') != std::string_view::npos) return fail(why, "fragments (#...) are not supported");
  if (target.empty() || target.front() != '/') return fail(why, "the URL needs a path, e.g. https://HOST/hosts.txt");
  if (!net::is_uri_target(target, true)) return fail(why, "the path or query contains a character that must be percent-encoded");
  out.target.assign(target);
  return out;
}

std::string host_label(const ListUrl& u) {
  std::string out = "https://";
  out += u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  if (u.port != net::https_default_port) out += ":" + std::to_string(u.port);
  return out;
}

std::string list_copy_name(std::string_view url) {
  unsigned char digest[32];
  sha256(url, digest);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(64 + 5);
  for (unsigned char b : digest) {
    out += hex[b >> 4];
    out += hex[b & 0xf];
  }
  out += ".list";
  return out;
}

}  // namespace nxdns::block
