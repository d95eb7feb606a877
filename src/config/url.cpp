#include "config/url.hpp"

#include <cctype>

#include "net/host_name.hpp"
#include "net/uri_chars.hpp"

namespace nxdns::config::detail {
namespace {

constexpr std::uint16_t kDotPort = 853;  // RFC 7858 section 3.1

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}


// RFC 3986 section 3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
bool valid_scheme(std::string_view s) {
  if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (char c : s)
    if (!is_alnum(c) && c != '+' && c != '-' && c != '.') return false;
  return true;
}

bool fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

// What a bracketed IPv6 upstream looks like, for the error that asks for one.
std::string_view scheme_example_v6(std::string_view scheme) {
  return scheme == "https" ? "https://[2001:db8::1]/dns-query" : "tls://[2001:db8::1]:853";
}

}  // namespace

std::string quote(std::string_view s, std::size_t max) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  const bool cut = s.size() > max;
  if (cut) s = s.substr(0, max);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += ch;
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

std::optional<ParsedUrl> parse_upstream_url(std::string_view url, std::string* why) {
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      fail(why, "URL contains a space or control character");
      return std::nullopt;
    }
  }
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) {
    fail(why, "not a URL: expected tls://IP[:port] or https://HOST[:port]/PATH");
    return std::nullopt;
  }
  const std::string scheme = lower(url.substr(0, sep));
  ParsedUrl out;
  if (scheme == "tls") {
    out.protocol = Protocol::dot;
    out.port = kDotPort;
  } else if (scheme == "https") {
    out.protocol = Protocol::doh;
    out.port = net::https_default_port;
  } else if (scheme == "http") {
    fail(why, "plain http:// is not supported; use https://");
    return std::nullopt;
  } else {
    fail(why, "unsupported scheme " + quote(scheme, 16) + " (use tls:// for DNS over TLS or https:// for DNS over HTTPS)");
    return std::nullopt;
  }

  const std::string_view rest = url.substr(sep + 3);
  const auto auth_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, auth_end);
  const std::string_view tail = auth_end == std::string_view::npos ? std::string_view{} : rest.substr(auth_end);
  if (authority.find('@') != std::string_view::npos) {
    // Credentials in a URL end up in logs, metrics and process listings; DoH
    // servers that need a secret take it in the path, which we redact.
    fail(why, "credentials (user:password@) in the URL are not supported");
    return std::nullopt;
  }

  std::string split_why;
  auto hp = net::split_host_port(authority, scheme_example_v6(scheme), &split_why);
  if (!hp) {
    fail(why, split_why);
    return std::nullopt;
  }
  const std::string_view host = hp->host;
  const std::optional<std::string_view> port_text = hp->port_text;
  const bool bracketed = hp->bracketed;
  if (host.empty()) {
    fail(why, "URL has no host");
    return std::nullopt;
  }
  if (port_text) {
    if (port_text->empty()) {
      fail(why, "empty port after ':'");
      return std::nullopt;
    }
    const auto p = net::parse_port(*port_text);
    if (!p) {
      fail(why, "port " + quote(*port_text, 16) + " is not a decimal number from 1 to 65535");
      return std::nullopt;
    }
    out.port = *p;
  }

  out.host.assign(host);
  if (bracketed) {
    if (host.find(':') == std::string_view::npos || !net::is_ip_literal(host)) {
      fail(why, "not a valid IPv6 address inside [ ]");
      return std::nullopt;
    }
  }
  if (net::is_ip_literal(host)) {
    out.ip = net::make_endpoint(host, out.port);
  } else {
    bool dotted_digits = true;
    for (char c : host) dotted_digits = dotted_digits && ((c >= '0' && c <= '9') || c == '.');
    if (dotted_digits) {
      fail(why, "host " + quote(host) + " is not a valid IPv4 address");
      return std::nullopt;
    }
    if (!net::is_host_name(host)) {
      fail(why, "host " + quote(host) + " is neither an IP address nor a valid host name");
      return std::nullopt;
    }
    if (out.protocol == Protocol::dot) {
      fail(why,
           "a tls:// URL needs an IP address as host (looking up a name would need DNS, which may be this "
           "daemon); put the name in tls_name");
      return std::nullopt;
    }
  }

  if (tail.find('{') != std::string_view::npos) {
    fail(why, "URI templates are not supported; drop the \"{?dns}\" part");
    return std::nullopt;
  }
  if (tail.find('?') != std::string_view::npos) {
    fail(why, "query strings are not supported in upstream URLs");
    return std::nullopt;
  }
  if (tail.find('#') != std::string_view::npos) {
    fail(why, "fragments (#...) are not supported in upstream URLs");
    return std::nullopt;
  }
  if (out.protocol == Protocol::dot) {
    if (!tail.empty()) {
      fail(why, "a tls:// URL takes no path");
      return std::nullopt;
    }
    return out;
  }
  if (tail.empty()) {
    fail(why, "an https:// URL needs a path, e.g. https://dns.example/dns-query");
    return std::nullopt;
  }
  if (!net::is_uri_target(tail, false)) {
    fail(why, "path contains a character that must be percent-encoded");
    return std::nullopt;
  }
  out.path.assign(tail);
  return out;
}

}  // namespace nxdns::config::detail

namespace nxdns::config {

std::string redact_url(const std::string& url) {
  std::string_view rest = url;
  std::string out;
  // Only an RFC 3986 scheme counts as one: in "u:pw@host/x://y" the text
  // before "://" is userinfo, and keeping it verbatim would leak it.
  const auto sep = rest.find("://");
  if (sep != std::string_view::npos && detail::valid_scheme(rest.substr(0, sep))) {
    out.assign(rest.substr(0, sep + 3));
    rest = rest.substr(sep + 3);
  }
  // The last '@' anywhere ends the userinfo. On a malformed URL this may cut
  // a path that held an '@' too: for a log label, losing text beats leaking
  // a password that contained '/', '?' or '#'.
  const auto at = rest.rfind('@');
  if (at != std::string_view::npos) rest = rest.substr(at + 1);
  rest = rest.substr(0, rest.find_first_of("?#"));
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) {
    out.append(rest);
    return out;
  }
  out.append(rest.substr(0, slash));
  std::string_view path = rest.substr(slash);
  const auto second = path.find('/', 1);
  out.append(path.substr(0, second));
  return out;
}

}  // namespace nxdns::config
