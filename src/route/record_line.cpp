// One static record in zone-file presentation syntax (RFC 1035 §5.1), the
// subset a household writes: A, AAAA, CNAME, PTR, TXT, SRV and MX.
#include "route/local_records.hpp"

#include <arpa/inet.h>

#include <string>
#include <utility>

#include "dns/wire.hpp"
#include "route/lower_case.hpp"
#include "route/quoted_field.hpp"

namespace nxdns::route {

namespace {

// RFC 2181 §8: a TTL is an unsigned 31-bit number.
constexpr std::uint32_t max_ttl = 0x7FFFFFFF;
constexpr std::uint32_t default_ttl = 300;
// RFC 1035 §3.3: a <character-string> is one length octet and its data.
constexpr std::size_t max_character_string = 255;
// What RDLENGTH can state (RFC 1035 §3.2.1).
constexpr std::size_t max_rdata = 0xFFFF;

bool iequals(std::string_view a, std::string_view b) {
  return lower_case(std::string(a)) == lower_case(std::string(b));
}

struct Token {
  std::string_view text;  // raw, escapes not yet applied; without quotes
  bool quoted = false;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u < 0x20 || u == 0x7F) && !is_space(c);
}

// RFC 1035 §5.1 fields: separated by blanks, a quoted field may hold them,
// a backslash escapes the next character, ';' starts a comment. Parentheses
// (a record continued over lines) are outside the subset.
bool tokenize(std::string_view line, std::vector<Token>& out, std::string& why) {
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (c == ';') break;
    if (is_control(c)) {
      why = "a control character in the record (write it as \\DDD)";
      return false;
    }
    if (c == '"') {
      const std::size_t start = ++i;
      while (i < line.size() && line[i] != '"') {
        if (is_control(line[i])) {
          why = "a control character in a quoted string (write it as \\DDD)";
          return false;
        }
        i += line[i] == '\\' ? 2 : 1;
      }
      if (i >= line.size()) {
        why = "unterminated quoted string";
        return false;
      }
      out.push_back({line.substr(start, i - start), true});
      ++i;
      if (i < line.size() && !is_space(line[i]) && line[i] != ';') {
        why = "text right after a closing quote";
        return false;
      }
      continue;
    }
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i]) && line[i] != ';') {
      const char d = line[i];
      if (d == '"') {
        why = "a quote inside a field " + quoted_field(line.substr(start, i - start + 1));
        return false;
      }
      if (d == '(' || d == ')') {
        why = "parentheses (a record over several lines) are not supported";
        return false;
      }
      if (is_control(d)) {
        why = "a control character in the record (write it as \\DDD)";
        return false;
      }
      if (d == '\\') {
        if (i + 1 >= line.size()) {
          why = "a backslash ends the record";
          return false;
        }
        i += 2;
      } else {
        ++i;
      }
    }
    out.push_back({line.substr(start, i - start), false});
  }
  return true;
}

// Decimal, no sign, at most `max`.
std::optional<std::uint32_t> parse_number(std::string_view text, std::uint32_t max) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v > max) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

bool field_number(const Token& t, std::string_view field, std::uint32_t max, std::uint32_t& out, std::string& why) {
  const auto v = t.quoted ? std::nullopt : parse_number(t.text, max);
  if (!v) {
    why = std::string(field) + ": " + quoted_field(t.text) + " is not a number from 0 to " + std::to_string(max);
    return false;
  }
  out = *v;
  return true;
}

// An absolute name, lower case (names compare case-insensitively, RFC
// 4343, and one spelling keeps identical records identical).
bool field_name(const Token& t, std::string_view field, dns::Bytes& out, std::string& why) {
  if (t.quoted) {
    why = std::string(field) + ": a quoted string is not a name";
    return false;
  }
  if (t.text == "@") {
    why = std::string(field) + ": '@' needs an origin; write the name in full";
    return false;
  }
  std::string reason;
  auto wire = dns::name_from_text(t.text, &reason);
  if (!wire) {
    why = std::string(field) + ": " + quoted_field(t.text) + " is not a valid DNS name (" + reason + ")";
    return false;
  }
  lower_case(*wire);
  out = std::move(*wire);
  return true;
}

bool field_address(const Token& t, int family, std::string_view field, dns::Bytes& out, std::string& why) {
  std::uint8_t addr[16]{};
  // inet_pton reads a NUL-terminated string; no address is longer than 45.
  const std::string text(t.text.substr(0, 64));
  if (t.quoted || t.text.size() > 64 || inet_pton(family, text.c_str(), addr) != 1) {
    why = std::string(field) + ": " + quoted_field(t.text) + " is not an " + (family == AF_INET ? "IPv4" : "IPv6") +
          " address";
    return false;
  }
  out.assign(addr, addr + (family == AF_INET ? 4 : 16));
  return true;
}

// One <character-string>: escapes applied (\X is X, \DDD one octet).
bool append_character_string(const Token& t, dns::Bytes& rdata, std::string& why) {
  dns::Bytes s;
  const std::string_view x = t.text;
  for (std::size_t i = 0; i < x.size();) {
    if (x[i] != '\\') {
      s.push_back(static_cast<std::uint8_t>(x[i++]));
      continue;
    }
    if (i + 1 >= x.size()) {
      why = "TXT: a backslash ends the string";
      return false;
    }
    const char d0 = x[i + 1];
    if (d0 >= '0' && d0 <= '9') {
      int v = 0;
      for (std::size_t k = 1; k <= 3; ++k) {
        const char d = i + k < x.size() ? x[i + k] : '\0';
        if (d < '0' || d > '9') {
          why = "TXT: \\DDD needs three digits, in " + quoted_field(x);
          return false;
        }
        v = v * 10 + (d - '0');
      }
      if (v > 255) {
        why = "TXT: \\" + std::to_string(v) + " is over 255, in " + quoted_field(x);
        return false;
      }
      s.push_back(static_cast<std::uint8_t>(v));
      i += 4;
    } else {
      s.push_back(static_cast<std::uint8_t>(d0));
      i += 2;
    }
  }
  if (s.size() > max_character_string) {
    why = "TXT: a string of " + std::to_string(s.size()) + " octets; each may hold at most 255 (split it in several)";
    return false;
  }
  rdata.push_back(static_cast<std::uint8_t>(s.size()));
  rdata.insert(rdata.end(), s.begin(), s.end());
  return true;
}

bool is_class_token(std::string_view t) {
  for (std::string_view c : {"IN", "CH", "CS", "HS", "NONE", "ANY"})
    if (iequals(t, c)) return true;
  // RFC 3597 §5: CLASSnnn.
  return t.size() > 5 && iequals(t.substr(0, 5), "CLASS") && parse_number(t.substr(5), 0xFFFF).has_value();
}

struct TypeName {
  std::string_view name;
  std::uint16_t type;
  std::size_t fields;  // RDATA fields; 0: one or more (TXT)
  std::string_view syntax;
};
constexpr TypeName supported_types[] = {
    {"A", type_a, 1, "ADDRESS"},
    {"AAAA", type_aaaa, 1, "ADDRESS"},
    {"CNAME", type_cname, 1, "TARGET"},
    {"PTR", type_ptr, 1, "TARGET"},
    {"TXT", type_txt, 0, "STRING..."},
    {"SRV", type_srv, 4, "PRIORITY WEIGHT PORT TARGET"},
    {"MX", type_mx, 2, "PREFERENCE EXCHANGE"},
};

bool rdata_of(const TypeName& t, const std::vector<Token>& f, dns::Bytes& rdata, std::string& why) {
  const std::string n(t.name);
  std::uint32_t v = 0;
  switch (t.type) {
    case type_a:
      return field_address(f[0], AF_INET, "A address", rdata, why);
    case type_aaaa:
      return field_address(f[0], AF_INET6, "AAAA address", rdata, why);
    case type_cname:
    case type_ptr:
      return field_name(f[0], n + " target", rdata, why);
    case type_txt:
      for (const Token& s : f)
        if (!append_character_string(s, rdata, why)) return false;
      if (rdata.size() > max_rdata) {
        why = "TXT: " + std::to_string(rdata.size()) + " octets of strings; a record holds at most 65535";
        return false;
      }
      return true;
    case type_mx: {
      dns::Bytes exchange;
      if (!field_number(f[0], "MX preference", 0xFFFF, v, why)) return false;
      if (!field_name(f[1], "MX exchange", exchange, why)) return false;
      dns::wire::put16(rdata, static_cast<std::uint16_t>(v));
      rdata.insert(rdata.end(), exchange.begin(), exchange.end());
      return true;
    }
    case type_srv: {
      // RFC 2782: priority, weight and port, then the target.
      constexpr std::string_view numbers[] = {"SRV priority", "SRV weight", "SRV port"};
      for (std::size_t i = 0; i < 3; ++i) {
        if (!field_number(f[i], numbers[i], 0xFFFF, v, why)) return false;
        dns::wire::put16(rdata, static_cast<std::uint16_t>(v));
      }
      dns::Bytes target;
      if (!field_name(f[3], "SRV target", target, why)) return false;
      rdata.insert(rdata.end(), target.begin(), target.end());
      return true;
    }
    default:
      why = "type " + n + " is not supported";
      return false;
  }
}

}  // namespace

std::optional<Record> parse_record(std::string_view line, std::string source, std::string* why) {
  std::string reason;
  auto fail = [&]() -> std::optional<Record> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::vector<Token> f;
  if (!tokenize(line, f, reason)) return fail();
  if (f.empty()) {
    reason = "empty record (OWNER [TTL] [IN] TYPE RDATA)";
    return fail();
  }
  Record r;
  r.source = std::move(source);
  r.ttl = default_ttl;
  if (!field_name(f[0], "owner", r.owner, reason)) return fail();
  if (r.owner.size() == 1) {
    reason = "owner: the root cannot have local records";
    return fail();
  }
  if (r.owner[0] == 1 && r.owner[1] == '*') {
    reason = "owner: wildcards are not supported; write each name";
    return fail();
  }
  // RFC 1035 §5.1: TTL and class may come in either order, each at most
  // once. A field starting with a digit or a sign is meant as a TTL (no
  // type or class does).
  std::size_t i = 1;
  bool have_ttl = false, have_class = false;
  for (; i < f.size() && !f[i].quoted; ++i) {
    const std::string_view t = f[i].text;
    if (!t.empty() && ((t[0] >= '0' && t[0] <= '9') || t[0] == '-' || t[0] == '+')) {
      if (have_ttl) {
        reason = "TTL: given twice";
        return fail();
      }
      if (!field_number(f[i], "TTL", max_ttl, r.ttl, reason)) return fail();
      have_ttl = true;
    } else if (is_class_token(t)) {
      if (have_class) {
        reason = "class: given twice";
        return fail();
      }
      if (!iequals(t, "IN")) {
        reason = "class " + quoted_field(t) + " is not supported: local records are IN";
        return fail();
      }
      have_class = true;
    } else {
      break;
    }
  }
  if (i >= f.size()) {
    reason = "type: missing (A, AAAA, CNAME, PTR, TXT, SRV or MX)";
    return fail();
  }
  if (f[i].quoted) {
    reason = "type: a quoted string is not a type";
    return fail();
  }
  const TypeName* type = nullptr;
  for (const TypeName& t : supported_types)
    if (iequals(f[i].text, t.name)) type = &t;
  if (!type) {
    reason = "type " + quoted_field(f[i].text) + " is not one of A, AAAA, CNAME, PTR, TXT, SRV, MX";
    return fail();
  }
  r.type = type->type;
  const std::vector<Token> rdata_fields(f.begin() + static_cast<std::ptrdiff_t>(i + 1), f.end());
  const bool count_ok = type->fields == 0 ? !rdata_fields.empty() : rdata_fields.size() == type->fields;
  if (!count_ok) {
    reason = std::string(type->name) + ": expected " + std::string(type->syntax) + " after the type, got " +
             std::to_string(rdata_fields.size()) + " field" + (rdata_fields.size() == 1 ? "" : "s");
    return fail();
  }
  if (!rdata_of(*type, rdata_fields, r.rdata, reason)) return fail();
  return r;
}

}  // namespace nxdns::route
