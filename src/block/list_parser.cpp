#include "block/list_parser.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace nxdns::block {

namespace {

constexpr std::size_t max_name_text = 253;  // RFC 1035 §3.1: 255 wire octets
constexpr std::size_t max_label = 63;

// What hosts files write for the machine itself (Debian's and Red Hat's
// /etc/hosts, the headers of the common published lists). Blocking any of
// them breaks the machine that asks, never an advertiser.
constexpr std::string_view local_names[] = {
    "localhost",       "localhost.localdomain", "localdomain",    "localhost4",    "localhost4.localdomain4",
    "localhost6",      "localhost6.localdomain6", "local",        "broadcasthost", "ip6-localhost",
    "ip6-loopback",    "ip6-localnet",          "ip6-mcastprefix", "ip6-allnodes", "ip6-allrouters",
    "ip6-allhosts",
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The next whitespace-separated token of `s`, consumed.
std::string_view next_token(std::string_view& s) {
  s = trim(s);
  std::size_t n = 0;
  while (n < s.size() && !is_space(s[n])) ++n;
  const std::string_view t = s.substr(0, n);
  s.remove_prefix(n);
  return t;
}

enum class AddressKind : std::uint8_t { not_address, sink, other };

// 0.0.0.0, 127.0.0.1, :: and ::1 (in any spelling inet_pton accepts) are
// where blocklists send names; any other address is a real host.
AddressKind address_kind(std::string_view t) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (t.empty() || t.size() >= sizeof buf) return AddressKind::not_address;
  std::memcpy(buf, t.data(), t.size());
  buf[t.size()] = '\0';
  unsigned char a[16];
  if (::inet_pton(AF_INET, buf, a) == 1) {
    static constexpr unsigned char any4[4] = {0, 0, 0, 0}, loop4[4] = {127, 0, 0, 1};
    return std::memcmp(a, any4, 4) == 0 || std::memcmp(a, loop4, 4) == 0 ? AddressKind::sink : AddressKind::other;
  }
  if (::inet_pton(AF_INET6, buf, a) == 1) {
    static constexpr unsigned char any6[16] = {}, loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::memcmp(a, any6, 16) == 0 || std::memcmp(a, loop6, 16) == 0 ? AddressKind::sink : AddressKind::other;
  }
  return AddressKind::not_address;
}

// `#` not at the line's start begins a comment, unless it is glued to what
// precedes it and followed by one of # @ ? $ %: that is an element-hiding
// rule (`example.com##.banner`, `#@#`, `#?#`, `#$#`, `#%#` scriptlets).
bool cosmetic_marker_at(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size()) return false;
  const char n = s[i + 1];
  return n == '#' || n == '@' || n == '?' || n == '$' || n == '%';
}

// A line that begins with `#`: a comment, except a generic element-hiding
// rule (`##.ad-banner`, `#@#.x`), which has no blank and whose marker is
// followed by a selector (so `#####` banners stay comments).
bool cosmetic_at_start(std::string_view s) {
  std::size_t m = 0;
  if (s.starts_with("##")) m = 2;
  else if (s.starts_with("#@#") || s.starts_with("#?#") || s.starts_with("#$#") || s.starts_with("#%#")) m = 3;
  if (m == 0 || m >= s.size() || s[m] == '#') return false;
  return std::none_of(s.begin(), s.end(), is_space);
}

class LineParser {
 public:
  LineParser(const ParseOptions& opts, ParseCounts& counts, const ListParser::Sink& sink, std::uint64_t line_no)
      : opts_(opts), counts_(counts), sink_(sink),
        line_(static_cast<std::uint32_t>(std::min<std::uint64_t>(line_no, std::numeric_limits<std::uint32_t>::max()))) {}

  void parse(std::string_view s) {
    s = trim(s);
    if (s.empty()) return skip(Skip::blank);
    const char c = s.front();
    if (c == '!') return skip(Skip::comment);
    if (c == '[') return skip(s.back() == ']' ? Skip::comment : Skip::junk);
    if (c == '#') return skip(cosmetic_at_start(s) ? Skip::cosmetic : Skip::comment);
    for (std::size_t i = s.find('#'); i != std::string_view::npos; i = s.find('#', i + 1)) {
      if (!is_space(s[i - 1]) && cosmetic_marker_at(s, i)) return skip(Skip::cosmetic);
    }
    if (s.starts_with("@@")) return adblock(s.substr(2), true);
    if (s.starts_with("||")) return adblock(s.substr(2), false);
    if (c == '|') return skip(Skip::unsupported);
    if (c == '/') return skip(s.size() > 1 && s.back() == '/' ? Skip::regex : Skip::unsupported);
    if (const std::size_t hash = s.find('#'); hash != std::string_view::npos) s = trim(s.substr(0, hash));

    std::string_view rest = s;
    const std::string_view first = next_token(rest);
    const AddressKind addr = address_kind(first);
    if (addr != AddressKind::not_address) return hosts(addr, rest);
    if (!trim(rest).empty()) return skip(Skip::junk);  // two words, neither an address
    if (first.find_first_of("^$|*/") != std::string_view::npos) return skip(Skip::unsupported);
    name(first, RuleKind::subtree, false, false);
  }

 private:
  void skip(Skip s) { ++counts_.skipped[static_cast<std::size_t>(s)]; }

  void hosts(AddressKind addr, std::string_view names) {
    if (trim(names).empty()) return skip(Skip::junk);  // an address and nothing to map
    if (addr == AddressKind::other) return skip(Skip::other_address);
    for (std::string_view t = next_token(names); !t.empty(); t = next_token(names)) {
      name(t, RuleKind::exact, false, false);
    }
  }

  // After `||` (or `@@||`): NAME^ [|] [$modifiers].
  void adblock(std::string_view body, bool allow) {
    if (allow && !body.starts_with("||")) return skip(body.empty() ? Skip::junk : Skip::unsupported);
    if (allow) body.remove_prefix(2);
    if (const std::size_t dollar = body.find('$'); dollar != std::string_view::npos) {
      std::string_view mods = body.substr(dollar + 1);
      body = body.substr(0, dollar);
      if (trim(mods).empty()) return skip(Skip::junk);
      while (!mods.empty()) {
        const std::size_t comma = mods.find(',');
        const std::string_view m = trim(mods.substr(0, comma));
        if (m != "important") return skip(Skip::modifier);
        mods = comma == std::string_view::npos ? std::string_view{} : mods.substr(comma + 1);
      }
    }
    if (body.ends_with("^|")) body.remove_suffix(2);
    else if (body.ends_with('^')) body.remove_suffix(1);
    else return skip(body.empty() ? Skip::junk : Skip::unsupported);  // `||name` alone matches URL prefixes
    if (body.empty()) return skip(Skip::junk);
    if (body.find_first_of("^|*/:") != std::string_view::npos) return skip(Skip::unsupported);
    name(body, RuleKind::subtree, allow, true);
  }

  // Lower-cases, checks and hands over one name.
  void name(std::string_view text, RuleKind kind, bool allow, bool adblock_form) {
    if (text.ends_with('.')) text.remove_suffix(1);
    if (text.empty() || text.size() > max_name_text) return skip(Skip::invalid_name);
    std::size_t label = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      char ch = text[i];
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
      const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
      if (ch == '.') {
        if (label == 0) return skip(Skip::invalid_name);
        label = 0;
      } else if (!ok || ++label > max_label) {
        return skip(Skip::invalid_name);
      }
      buf_[i] = ch;
    }
    if (label == 0) return skip(Skip::invalid_name);  // "a..b." or a lone dot
    const std::string_view lower(buf_, text.size());
    if (std::find(std::begin(local_names), std::end(local_names), lower) != std::end(local_names) ||
        address_kind(lower) != AddressKind::not_address) {
      return skip(Skip::local_name);
    }
    if (!adblock_form && lower.find('.') == std::string_view::npos) return skip(Skip::single_label);
    const bool allows = allow || opts_.allow_list;
    ++counts_.rules;
    if (allows) ++counts_.allow_rules;
    sink_(Rule{lower, kind, allows, line_});
  }

  const ParseOptions& opts_;
  ParseCounts& counts_;
  const ListParser::Sink& sink_;
  std::uint32_t line_;
  char buf_[max_name_text];
};

}  // namespace

const char* describe(RuleKind k) {
  switch (k) {
    case RuleKind::exact: return "exact";
    case RuleKind::subtree: return "subtree";
  }
  return "unknown";
}

const char* describe(Skip s) {
  switch (s) {
    case Skip::blank: return "blank";
    case Skip::comment: return "comment";
    case Skip::local_name: return "local_name";
    case Skip::single_label: return "single_label";
    case Skip::other_address: return "other_address";
    case Skip::cosmetic: return "cosmetic";
    case Skip::regex: return "regex";
    case Skip::unsupported: return "unsupported";
    case Skip::modifier: return "modifier";
    case Skip::invalid_name: return "invalid_name";
    case Skip::junk: return "junk";
  }
  return "unknown";
}

std::uint64_t ParseCounts::rejected() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < skip_reasons; ++i) {
    const auto s = static_cast<Skip>(i);
    if (s != Skip::blank && s != Skip::comment) n += skipped[i];
  }
  return n;
}

ListParser::ListParser(Sink sink, ParseOptions opts) : sink_(std::move(sink)), opts_(opts) {}

void ListParser::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    if (!overlong_) {
      if (partial_.size() + piece.size() > max_line_octets) {
        overlong_ = true;
        partial_.clear();
      } else if (nl != std::string_view::npos && partial_.empty()) {
        line(piece);  // the common case: the whole line is in this chunk, no copy
      } else {
        partial_.append(piece);
        if (nl != std::string_view::npos) {
          line(partial_);
          partial_.clear();
        }
      }
    }
    if (nl == std::string_view::npos) return;
    if (overlong_) {
      ++counts_.lines;
      ++counts_.skipped[static_cast<std::size_t>(Skip::junk)];
      overlong_ = false;
    }
    chunk.remove_prefix(nl + 1);
  }
}

void ListParser::finish() {
  if (overlong_) {
    ++counts_.lines;
    ++counts_.skipped[static_cast<std::size_t>(Skip::junk)];
  } else if (!partial_.empty()) {
    line(partial_);
  }
  partial_.clear();
  overlong_ = false;
}

void ListParser::line(std::string_view text) {
  ++counts_.lines;
  // A UTF-8 byte-order mark, as editors on Windows write at a file's start.
  if (counts_.lines == 1 && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  LineParser(opts_, counts_, sink_, counts_.lines).parse(text);
}

ParsedList parse_list(std::string_view text, ParseOptions opts) {
  ParsedList out;
  ListParser p([&](const Rule& r) { out.rules.push_back({std::string(r.name), r.kind, r.allow, r.line}); }, opts);
  p.feed(text);
  p.finish();
  out.counts = p.counts();
  return out;
}

}  // namespace nxdns::block
