#pragma once
// Blocklist files as households find them, read line by line; the format
// is told per line, so one file may mix them.
//
//   hosts      `0.0.0.0 ads.example.com [more names]`: the address must be
//              where blocklists send names (0.0.0.0, 127.0.0.1, :: or ::1);
//              blocks each name exactly (a hosts file maps names, not
//              zones). Another address maps a name to a host: that is a
//              local record, not a block (skipped, `other_address`).
//   domain     `ads.example.com`: the name and every name below it.
//   adblock    `||ads.example.com^` blocks the name and its subtree,
//              `@@||ads.example.com^` allows them. `$important` is accepted
//              (allow rules win anyway); any other modifier (`$third-party`,
//              `$script`, `$dnstype=`, ...) asks for a distinction a DNS
//              server cannot make, so the rule is skipped (`modifier`),
//              never applied more widely than written.
//
// Skipped and counted, never fatal: blank lines; comments (`#`, `!`, the
// `[Adblock Plus 2.0]` header); cosmetic rules (`##`, `#@#`, `#?#`, ...);
// regexes (`/.../`); URL, path and wildcard patterns; names a hosts file
// gives the machine itself (localhost, broadcasthost, ip6-allnodes, an
// address written as a name, ...: never blocked, whatever the format);
// one-label names outside the adblock form (`com` on a line of its own is
// a list's mistake that would block a whole top-level domain; `||zip^`
// says it on purpose); names that are not DNS names (a label over 63
// octets, a name over 253, a character outside letters, digits, `-` and
// `_`: internationalised names must be written in punycode, `xn--`); and
// lines over max_line_octets (an HTML page served in place of a list is
// one line of megabytes), counted as junk.
//
// Names are lower-cased; a trailing dot, CRLF line ends, tabs, a UTF-8
// byte-order mark and a trailing `# comment` are accepted.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "block/rule.hpp"

namespace nxdns::block {

// The longest line read. The longest rule a DNS list can hold is ~270
// octets (`@@||` + a 253-octet name + `^$important`); 4096 leaves room for
// a hosts line with a dozen long names.
inline constexpr std::size_t max_line_octets = 4096;

enum class Skip : std::uint8_t {
  blank,
  comment,
  local_name,     // localhost & co.: never blocked
  single_label,   // a one-label name outside `||name^`
  other_address,  // a hosts line mapping names to a real address
  cosmetic,       // element hiding: nothing to do with DNS
  regex,          // `/.../`
  unsupported,    // a URL, path or wildcard pattern, `|http://...`, `name^` without `||`
  modifier,       // `$third-party` and every modifier but `$important`
  invalid_name,   // not a DNS name
  junk,           // anything else, and lines over max_line_octets
};
inline constexpr std::size_t skip_reasons = 11;
const char* describe(Skip s);

// What one list gave. `rules`, local_name, single_label and invalid_name
// count names (a hosts line may hold several); every other reason counts
// lines.
struct ParseCounts {
  std::uint64_t lines = 0;
  std::uint64_t rules = 0;        // handed to the sink (allow rules included)
  std::uint64_t allow_rules = 0;
  std::array<std::uint64_t, skip_reasons> skipped{};

  std::uint64_t skipped_count(Skip s) const { return skipped[static_cast<std::size_t>(s)]; }
  // Everything not used but blank lines and comments: what a list's reader
  // would want to know about.
  std::uint64_t rejected() const;
};

struct ParseOptions {
  // An allowlist: every rule it gives allows (its format still says exact
  // or subtree).
  bool allow_list = false;
};

// Reads a list in chunks of any size (a file's reads, a body as it
// arrives): holds at most one line of max_line_octets, never the file.
class ListParser {
 public:
  using Sink = std::function<void(const Rule&)>;
  explicit ListParser(Sink sink, ParseOptions opts = {});

  void feed(std::string_view chunk);
  // The last line, when the list does not end with a newline.
  void finish();
  const ParseCounts& counts() const { return counts_; }

 private:
  void line(std::string_view text);

  Sink sink_;
  ParseOptions opts_;
  ParseCounts counts_;
  std::string partial_;   // the line begun in an earlier chunk
  bool overlong_ = false;  // the current line passed max_line_octets: skip to its end
};

// A rule that owns its name: for tests, the fuzz target and small lists.
struct OwnedRule {
  std::string name;
  RuleKind kind = RuleKind::exact;
  bool allow = false;
  std::uint32_t line = 0;
  bool operator==(const OwnedRule&) const = default;
};
struct ParsedList {
  ParseCounts counts;
  std::vector<OwnedRule> rules;
};
ParsedList parse_list(std::string_view text, ParseOptions opts = {});

}  // namespace nxdns::block
