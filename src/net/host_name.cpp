#include "net/host_name.hpp"

namespace nxdns::net {

namespace {
bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
}  // namespace

bool is_host_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  bool all_numeric = true;
  std::size_t label = 0;
  char prev = '.';
  for (char c : s) {
    if (c == '.') {
      if (label == 0 || prev == '-') return false;
      label = 0;
    } else if (is_alnum(c) || c == '-') {
      if (label == 0 && c == '-') return false;
      if (++label > 63) return false;
      if (!(c >= '0' && c <= '9')) all_numeric = false;
    } else {
      return false;
    }
    prev = c;
  }
  if (label == 0 || prev == '-') return false;
  return !all_numeric;
}

std::optional<std::string> normalize_host_name(std::string_view text) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (!is_host_name(text)) return std::nullopt;
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace nxdns::net
