#include "net/uri_chars.hpp"

namespace nxdns::net {

namespace {
bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
}  // namespace

bool is_uri_target(std::string_view t, bool query) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (is_alnum(c)) continue;
    if (c == '%') {
      if (i + 2 >= t.size() || !is_hex(t[i + 1]) || !is_hex(t[i + 2])) return false;
      i += 2;
      continue;
    }
    switch (c) {
      case '?':
        if (!query) return false;
        continue;
      case '/': case '-': case '.': case '_': case '~':
      case '!': case '$': case '&': case '\'': case '(': case ')':
      case '*': case '+': case ',': case ';': case '=': case ':': case '@':
        continue;
      default:
        return false;
    }
  }
  return true;
}

}  // namespace nxdns::net
