#include "route/explain.hpp"

#include <arpa/inet.h>

#include <cstdio>

#include "log/log.hpp"

namespace nxdns::route {

namespace {

std::uint16_t load16(const dns::Bytes& b, std::size_t at) {
  return static_cast<std::uint16_t>((b[at] << 8) | b[at + 1]);
}

// The uncompressed wire name at `at` in rdata, as text; advances `at`.
std::string rdata_name(const dns::Bytes& rd, std::size_t& at) {
  std::size_t end = at;
  while (end < rd.size() && rd[end] != 0) end += 1 + rd[end];
  if (end >= rd.size()) return "?";
  dns::ByteView name(rd.data() + at, end + 1 - at);
  at = end + 1;
  return dns::name_to_text(name);
}

std::string txt_text(const dns::Bytes& rd) {
  std::string out;
  std::size_t at = 0;
  while (at < rd.size()) {
    const std::size_t len = rd[at++];
    if (at + len > rd.size()) break;
    if (!out.empty()) out += ' ';
    out += '"';
    for (std::size_t i = at; i < at + len; ++i) {
      const unsigned char c = rd[i];
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c > 0x7e) {
        char esc[5];
        std::snprintf(esc, sizeof esc, "\\%03u", c);
        out += esc;
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
    at += len;
  }
  return out;
}

struct TypeName {
  std::string_view name;
  std::uint16_t type;
};
constexpr TypeName type_names[] = {{"A", 1},      {"NS", 2},     {"CNAME", 5},  {"SOA", 6},   {"PTR", 12},
                                   {"MX", 15},    {"TXT", 16},   {"AAAA", 28},  {"SRV", 33},  {"NAPTR", 35},
                                   {"DS", 43},    {"DNSKEY", 48}, {"SVCB", 64},  {"HTTPS", 65}, {"ANY", 255},
                                   {"CAA", 257}};

std::string servers_text(const std::vector<std::string>& servers) {
  std::string s;
  for (const auto& x : servers) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::optional<std::uint16_t> qtype_from_text(std::string_view text) {
  std::string up(text);
  for (char& c : up) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  for (const auto& t : type_names) {
    if (t.name == up) return t.type;
  }
  std::string_view digits = up;
  if (digits.substr(0, 4) == "TYPE") digits.remove_prefix(4);
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  unsigned v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v == 0 || v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

std::string qtype_to_text(std::uint16_t qtype) {
  for (const auto& t : type_names) {
    if (t.type == qtype) return std::string(t.name);
  }
  return "TYPE" + std::to_string(qtype);
}

std::string record_to_text(const Record& r) {
  std::string out = dns::name_to_text(r.owner) + " " + std::to_string(r.ttl) + " IN ";
  out += qtype_to_text(r.type);
  out += ' ';
  const dns::Bytes& rd = r.rdata;
  char buf[INET6_ADDRSTRLEN] = {};
  std::size_t at = 0;
  switch (r.type) {
    case type_a:
      if (rd.size() == 4 && inet_ntop(AF_INET, rd.data(), buf, sizeof buf)) return out + buf;
      break;
    case type_aaaa:
      if (rd.size() == 16 && inet_ntop(AF_INET6, rd.data(), buf, sizeof buf)) return out + buf;
      break;
    case type_cname:
    case type_ptr:
    case type_ns:
      return out + rdata_name(rd, at);
    case type_mx:
      if (rd.size() > 2) {
        at = 2;
        return out + std::to_string(load16(rd, 0)) + " " + rdata_name(rd, at);
      }
      break;
    case type_srv:
      if (rd.size() > 6) {
        at = 6;
        return out + log::cat(load16(rd, 0), " ", load16(rd, 2), " ", load16(rd, 4), " ") + rdata_name(rd, at);
      }
      break;
    case type_txt:
      return out + txt_text(rd);
    default:
      break;
  }
  // RFC 3597 §5 generic form for anything else.
  out += "\\# " + std::to_string(rd.size());
  for (std::uint8_t b : rd) {
    char hex[4];
    std::snprintf(hex, sizeof hex, " %02x", b);
    out += hex;
  }
  return out;
}

Explanation explain(const RouteTable& table, const Route& r) {
  Explanation e;
  e.route = describe(r.kind);
  if (r.zone) {
    e.zone = r.zone->name;
    e.source = r.zone->source;
  }
  switch (r.kind) {
    case RouteKind::records:
      if (r.lookup.kind == LocalRecords::Lookup::Kind::nodata) {
        e.answer = "NOERROR without data: the name has local records, none of this type";
      } else {
        e.answer = "NOERROR from local records";
      }
      for (const Record* rec : r.lookup.chain) e.records.push_back(record_to_text(*rec) + "  (" + rec->source + ")");
      if (!r.lookup.chain.empty()) e.source = r.lookup.chain.front()->source;
      break;
    case RouteKind::blocked:
      // The caller, which knows the blocklists, names the list and line.
      e.answer = "blocked";
      break;
    case RouteKind::negative:
      e.answer = r.rcode == dns::Rcode::nxdomain ? "NXDOMAIN, answered here" : "NOERROR without data, answered here";
      if (r.fallback) e.answer += " (the zone's LAN server cannot be reached now)";
      break;
    case RouteKind::loopback:
      e.answer = "the loopback address (127.0.0.1 / ::1)";
      break;
    case RouteKind::lan:
      if (r.zone && r.zone->lan_group < table.lan_groups().size()) {
        for (const auto& s : table.lan_groups()[r.zone->lan_group].servers) e.servers.push_back(s.to_string());
      }
      e.answer = "asked of " + servers_text(e.servers) + " over plain DNS";
      if (r.zone && r.zone->fallback_local) e.answer += "; NXDOMAIN here if it cannot answer";
      break;
    case RouteKind::upstream:
      e.answer = "sent to the encrypted upstreams (through the cache)";
      break;
  }
  return e;
}

}  // namespace nxdns::route
