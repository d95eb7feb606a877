// hosts(5) files as local records: an A or AAAA per name, one PTR per
// address. Written to accept the files distributions ship (Debian's tabs
// and ip6-* lines, NixOS's generated one) and whatever a household adds.
#include "route/local_records.hpp"

#include <arpa/inet.h>

#include <set>
#include <string>

#include "route/lower_case.hpp"
#include "route/quoted_field.hpp"

namespace nxdns::route {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// The names a hosts file may give: what resolvers look up in it (RFC 952 /
// RFC 1123 host names, with '_' as many LANs use it), dot-separated labels
// of 1..63 octets, at most 253 in all, one trailing dot allowed. Anything
// else (a '/', a '*', a stray quote) is a mistake the operator should see.
bool is_hosts_name(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.size() > 253) return false;
  std::size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok || ++label > dns::max_label) return false;
  }
  return label > 0;
}

dns::Bytes wire_of(std::string_view host_name) {
  // is_hosts_name admitted it: it converts.
  return dns::name_from_text(lower_case(std::string(host_name))).value_or(dns::Bytes{0});
}

void put_label(dns::Bytes& out, std::string_view label) {
  out.push_back(static_cast<std::uint8_t>(label.size()));
  out.insert(out.end(), label.begin(), label.end());
}

// RFC 1035 §3.5 (in-addr.arpa, octets reversed) and RFC 3596 §2.5
// (ip6.arpa, nibbles reversed, lower-case hex).
dns::Bytes reverse_name(const dns::Bytes& addr) {
  dns::Bytes out;
  if (addr.size() == 4) {
    for (auto it = addr.rbegin(); it != addr.rend(); ++it) put_label(out, std::to_string(*it));
    put_label(out, "in-addr");
  } else {
    constexpr char hex[] = "0123456789abcdef";
    for (auto it = addr.rbegin(); it != addr.rend(); ++it) {
      put_label(out, std::string(1, hex[*it & 0xF]));
      put_label(out, std::string(1, hex[*it >> 4]));
    }
    put_label(out, "ip6");
  }
  put_label(out, "arpa");
  out.push_back(0);
  return out;
}

}  // namespace

std::optional<std::vector<Record>> parse_hosts(std::string_view text, std::string_view file, std::string* why) {
  std::vector<Record> out;
  std::set<dns::Bytes> with_ptr;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    const std::string where = std::string(file) + ":" + std::to_string(line_no);
    auto fail = [&](const std::string& reason) -> std::optional<std::vector<Record>> {
      if (why) *why = where + ": " + reason;
      return std::nullopt;
    };
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::vector<std::string_view> f = fields_of(line);
    if (f.empty()) continue;
    // A scoped address (fe80::1%eth0) is reachable only through one
    // interface of this host; a client elsewhere on the LAN could not use
    // it, so the line is left out rather than answered wrongly.
    if (f[0].find('%') != std::string_view::npos) continue;
    dns::Bytes addr;
    {
      std::uint8_t buf[16]{};
      const std::string a(f[0].substr(0, 64));
      if (f[0].size() <= 64 && inet_pton(AF_INET, a.c_str(), buf) == 1) {
        addr.assign(buf, buf + 4);
      } else if (f[0].size() <= 64 && inet_pton(AF_INET6, a.c_str(), buf) == 1) {
        addr.assign(buf, buf + 16);
      } else {
        return fail(quoted_field(f[0]) + " is not an IPv4 or IPv6 address");
      }
    }
    if (f.size() < 2) return fail("no name after the address " + quoted_field(f[0]));
    for (std::size_t i = 1; i < f.size(); ++i) {
      if (!is_hosts_name(f[i]))
        return fail(quoted_field(f[i]) + " is not a valid host name (letters, digits, '-' and '_' in labels of 1..63)");
    }
    for (std::size_t i = 1; i < f.size(); ++i)
      out.push_back(Record{wire_of(f[i]), addr.size() == 4 ? type_a : type_aaaa, hosts_ttl, addr, where});
    // hosts(5): the first name of an address is its canonical name, which
    // is what a reverse lookup returns; a later line for the same address
    // adds aliases, not a second PTR.
    if (with_ptr.insert(addr).second)
      out.push_back(Record{reverse_name(addr), type_ptr, hosts_ttl, wire_of(f[1]), where});
  }
  return out;
}

}  // namespace nxdns::route
