// block/list_parser as tables: one row per line shape a household list
// holds, each naming the rules it gives or the reason it is skipped, so a
// failing row says which format promise broke.
#include "block/list_parser.hpp"

#include <optional>
#include <string>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::block;

namespace {

OwnedRule exact(const char* name, std::uint32_t line = 1) { return {name, RuleKind::exact, false, line}; }
OwnedRule subtree(const char* name, std::uint32_t line = 1) { return {name, RuleKind::subtree, false, line}; }
OwnedRule allow_subtree(const char* name, std::uint32_t line = 1) { return {name, RuleKind::subtree, true, line}; }

std::string show(const std::vector<OwnedRule>& rules) {
  std::string s;
  for (const OwnedRule& r : rules) {
    s += nxdns::log::cat(" [", r.name, " ", describe(r.kind), r.allow ? " allow" : "", " line ", r.line, "]");
  }
  return s.empty() ? " (none)" : s;
}

std::string show(const ParseCounts& c) {
  std::string s;
  for (std::size_t i = 0; i < skip_reasons; ++i) {
    if (c.skipped[i]) s += nxdns::log::cat(" ", describe(static_cast<Skip>(i)), "=", c.skipped[i]);
  }
  return s.empty() ? " (none)" : s;
}

struct Row {
  const char* situation;
  std::string text;
  std::vector<OwnedRule> rules;      // what it gives, in order
  std::vector<Skip> skipped = {};    // what it skips, one per counted item
  ParseOptions opts = {};
};

void check(const Row& r) {
  const ParsedList got = parse_list(r.text, r.opts);
  ParseCounts want;
  for (Skip s : r.skipped) ++want.skipped[static_cast<std::size_t>(s)];
  if (got.rules != r.rules || got.counts.skipped != want.skipped || got.counts.rules != r.rules.size()) {
    FAIL(nxdns::log::cat(r.situation, ": rules", show(got.rules), " skipped", show(got.counts), "; want rules",
                         show(r.rules), " skipped", show(want))
             .c_str());
  }
}

std::string repeat(char c, std::size_t n) { return std::string(n, c); }

}  // namespace

TEST_GROUP(ListParser){};

TEST(ListParser, HostsLinesBlockEachNameExactly) {
  const Row rows[] = {
      {"0.0.0.0", "0.0.0.0 ads.example.com", {exact("ads.example.com")}},
      {"127.0.0.1", "127.0.0.1 ads.example.com", {exact("ads.example.com")}},
      {"::", ":: ads.example.com", {exact("ads.example.com")}},
      {"::1", "::1 ads.example.com", {exact("ads.example.com")}},
      {"::1 written long", "0:0:0:0:0:0:0:1 ads.example.com", {exact("ads.example.com")}},
      {"several names, tabs between",
       "0.0.0.0 a.example.com b.example.com\tc.example.com",
       {exact("a.example.com"), exact("b.example.com"), exact("c.example.com")}},
      {"tabs around", "\t0.0.0.0\t\tads.example.com\t", {exact("ads.example.com")}},
      {"CRLF line end", "0.0.0.0 ads.example.com\r\n", {exact("ads.example.com")}},
      {"upper case and trailing dot", "0.0.0.0 ADS.Example.COM.", {exact("ads.example.com")}},
      {"trailing comment", "0.0.0.0 ads.example.com # tracker", {exact("ads.example.com")}},
      {"trailing comment glued", "0.0.0.0 ads.example.com#tracker", {exact("ads.example.com")}},
      {"punycode IDN", "0.0.0.0 xn--bcher-kva.example", {exact("xn--bcher-kva.example")}},
      {"underscore", "0.0.0.0 _dmarc.ads.example.com", {exact("_dmarc.ads.example.com")}},
      {"another address maps a host: not a block", "192.168.1.10 nas.home.example", {}, {Skip::other_address}},
      {"an address alone", "0.0.0.0", {}, {Skip::junk}},
      {"one-label name", "0.0.0.0 ads", {}, {Skip::single_label}},
      {"raw UTF-8 IDN", "0.0.0.0 b\xC3\xBC" "cher.example", {}, {Skip::invalid_name}},
      {"empty label", "0.0.0.0 a..example.com", {}, {Skip::invalid_name}},
      {"a port is not a name", "0.0.0.0 ads.example.com:443", {}, {Skip::invalid_name}},
      {"good and bad names on one line",
       "0.0.0.0 a.example.com b@d.example.com c.example.com",
       {exact("a.example.com"), exact("c.example.com")},
       {Skip::invalid_name}},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListParser, HostsHeaderEntriesNeverBlock) {
  const Row rows[] = {
      {"localhost", "127.0.0.1 localhost", {}, {Skip::local_name}},
      {"localhost.localdomain", "127.0.0.1 localhost.localdomain", {}, {Skip::local_name}},
      {"localhost upper case", "127.0.0.1 LocalHost.", {}, {Skip::local_name}},
      {"broadcasthost at a sink address", "0.0.0.0 broadcasthost", {}, {Skip::local_name}},
      {"broadcasthost at its own address", "255.255.255.255 broadcasthost", {}, {Skip::other_address}},
      {"ip6 names", "::1 ip6-localhost ip6-loopback", {}, {Skip::local_name, Skip::local_name}},
      {"ip6-localnet", "fe00::0 ip6-localnet", {}, {Skip::other_address}},
      {"ip6 multicast names at a sink",
       ":: ip6-mcastprefix ip6-allnodes ip6-allrouters ip6-allhosts",
       {},
       {Skip::local_name, Skip::local_name, Skip::local_name, Skip::local_name}},
      {"0.0.0.0 as a name", "0.0.0.0 0.0.0.0", {}, {Skip::local_name}},
      {"local", "0.0.0.0 local", {}, {Skip::local_name}},
      {"header name beside a real one", "0.0.0.0 localhost ads.example.com", {exact("ads.example.com")},
       {Skip::local_name}},
      {"as a domain line", "localhost", {}, {Skip::local_name}},
      {"as an adblock rule", "||localhost^", {}, {Skip::local_name}},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListParser, DomainLinesBlockTheSubtree) {
  const Row rows[] = {
      {"plain", "ads.example.com", {subtree("ads.example.com")}},
      {"upper case, trailing dot, CRLF", "Ads.Example.COM.\r", {subtree("ads.example.com")}},
      {"trailing comment", "ads.example.com   # why", {subtree("ads.example.com")}},
      {"a top-level domain alone is a mistake", "com", {}, {Skip::single_label}},
      {"two names without an address", "ads.example.com other.example.com", {}, {Skip::junk}},
      {"wildcard", "*.example.com", {}, {Skip::unsupported}},
      {"path", "example.com/ads", {}, {Skip::unsupported}},
      {"adblock anchor without ||", "ads.example.com^", {}, {Skip::unsupported}},
      {"HTML served as a list", "<!DOCTYPE html>", {}, {Skip::junk}},
      {"HTML tag", "<html>", {}, {Skip::invalid_name}},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListParser, AdblockSubsetAndItsModifiers) {
  const Row rows[] = {
      {"block", "||ads.example.com^", {subtree("ads.example.com")}},
      {"allow", "@@||good.example.com^", {allow_subtree("good.example.com")}},
      {"block, important", "||ads.example.com^$important", {subtree("ads.example.com")}},
      {"allow, important", "@@||good.example.com^$important", {allow_subtree("good.example.com")}},
      {"closing pipe", "||ads.example.com^|", {subtree("ads.example.com")}},
      {"upper case", "||ADS.Example.com^", {subtree("ads.example.com")}},
      {"a top-level domain on purpose", "||zip^", {subtree("zip")}},
      {"third-party", "||ads.example.com^$third-party", {}, {Skip::modifier}},
      {"script among important", "||ads.example.com^$script,important", {}, {Skip::modifier}},
      {"important among others", "||ads.example.com^$important,image", {}, {Skip::modifier}},
      {"dnstype", "||ads.example.com^$dnstype=AAAA", {}, {Skip::modifier}},
      {"allow with a modifier", "@@||good.example.com^$domain=x.example", {}, {Skip::modifier}},
      {"badfilter", "||ads.example.com^$badfilter", {}, {Skip::modifier}},
      {"empty modifier list", "||ads.example.com^$", {}, {Skip::junk}},
      {"no ^: a URL prefix", "||ads.example.com", {}, {Skip::unsupported}},
      {"path", "||ads.example.com/banner^", {}, {Skip::unsupported}},
      {"wildcard", "||*.example.com^", {}, {Skip::unsupported}},
      {"URL anchor", "|https://ads.example.com/", {}, {Skip::unsupported}},
      {"allow without ||", "@@ads.example.com^", {}, {Skip::unsupported}},
      {"@@ alone", "@@", {}, {Skip::junk}},
      {"|| alone", "||^", {}, {Skip::junk}},
      {"regex", "/^ad[0-9]+\\.example\\.com$/", {}, {Skip::regex}},
      {"path rule", "/banner/ad.gif", {}, {Skip::unsupported}},
      {"cosmetic", "example.com##.banner", {}, {Skip::cosmetic}},
      {"generic cosmetic", "##.ad-banner", {}, {Skip::cosmetic}},
      {"cosmetic exception", "example.com#@#.banner", {}, {Skip::cosmetic}},
      {"extended css", "example.com#?#div:has(.ad)", {}, {Skip::cosmetic}},
      {"scriptlet", "example.com#%#//scriptlet('abort')", {}, {Skip::cosmetic}},
      {"invalid name", "||ads.exa mple.com^", {}, {Skip::invalid_name}},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListParser, CommentsAndBlankLines) {
  const Row rows[] = {
      {"hash comment", "# Title: a list", {}, {Skip::comment}},
      {"banner", "##########", {}, {Skip::comment}},
      {"section title", "## Section ##", {}, {Skip::comment}},
      {"indented comment", "   # note", {}, {Skip::comment}},
      {"adblock comment", "! Expires: 1 day", {}, {Skip::comment}},
      {"adblock header", "[Adblock Plus 2.0]", {}, {Skip::comment}},
      {"unclosed bracket", "[Adblock", {}, {Skip::junk}},
      {"empty", "\n", {}, {Skip::blank}},
      {"blanks", " \t \r\n", {}, {Skip::blank}},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListParser, NameLengthLimits) {
  const std::string l63 = repeat('a', 63), l64 = repeat('a', 64);
  // 63 + 63 + 63 + 61 octets and 3 dots: 253, the longest name (255 wire octets).
  const std::string n253 = l63 + "." + l63 + "." + l63 + "." + repeat('b', 61);
  const std::string n254 = l63 + "." + l63 + "." + l63 + "." + repeat('b', 62);
  const Row rows[] = {
      {"label of 63", "0.0.0.0 " + l63 + ".example", {{l63 + ".example", RuleKind::exact, false, 1}}},
      {"label of 64", "0.0.0.0 " + l64 + ".example", {}, {Skip::invalid_name}},
      {"name of 253", n253, {{n253, RuleKind::subtree, false, 1}}},
      {"name of 253 and its dot", n253 + ".", {{n253, RuleKind::subtree, false, 1}}},
      {"name of 254", n254, {}, {Skip::invalid_name}},
      {"a lone dot", "0.0.0.0 .", {}, {Skip::invalid_name}},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListParser, AnAllowListAllowsWhatItsFormatsName) {
  const ParseOptions allow{true};
  const Row rows[] = {
      {"hosts line", "0.0.0.0 good.example.com", {{"good.example.com", RuleKind::exact, true, 1}}, {}, allow},
      {"domain line", "good.example.com", {allow_subtree("good.example.com")}, {}, allow},
      {"adblock block rule", "||good.example.com^", {allow_subtree("good.example.com")}, {}, allow},
  };
  for (const Row& r : rows) check(r);
  CHECK_EQUAL(1u, parse_list("good.example.com", allow).counts.allow_rules);
}

TEST(ListParser, LineNumbersCountsAndByteOrderMark) {
  const ParsedList got = parse_list(
      "\xEF\xBB\xBF# header\r\n"
      "0.0.0.0 a.example.com\r\n"
      "\r\n"
      "b.example.com\r\n"
      "@@||c.example.com^\r\n"
      "||d.example.com^$third-party\r\n"
      "e.example.com");  // no newline at the end
  const std::vector<OwnedRule> want = {exact("a.example.com", 2), subtree("b.example.com", 4),
                                       allow_subtree("c.example.com", 5), subtree("e.example.com", 7)};
  if (got.rules != want) FAIL(("rules" + show(got.rules)).c_str());
  CHECK_EQUAL(7u, got.counts.lines);
  CHECK_EQUAL(4u, got.counts.rules);
  CHECK_EQUAL(1u, got.counts.allow_rules);
  CHECK_EQUAL(1u, got.counts.skipped_count(Skip::comment));
  CHECK_EQUAL(1u, got.counts.skipped_count(Skip::blank));
  CHECK_EQUAL(1u, got.counts.skipped_count(Skip::modifier));
  CHECK_EQUAL(1u, got.counts.rejected());

  // The mark only counts at the start of a list.
  CHECK_EQUAL(1u, parse_list("a.example.com\n\xEF\xBB\xBF" "b.example.com").counts.skipped_count(Skip::invalid_name));
}

TEST(ListParser, AHugeLineIsJunkAndItsNeighboursStillParse) {
  const std::string huge(10 * max_line_octets, 'x');
  const std::string text = "a.example.com\n" + huge + "\nb.example.com\n" + huge;  // the last without a newline
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, text.size()}) {
    std::vector<OwnedRule> rules;
    ListParser p([&](const Rule& r) { rules.push_back({std::string(r.name), r.kind, r.allow, r.line}); });
    for (std::size_t i = 0; i < text.size(); i += chunk) p.feed(std::string_view(text).substr(i, chunk));
    p.finish();
    const std::vector<OwnedRule> want = {subtree("a.example.com", 1), subtree("b.example.com", 3)};
    if (rules != want) FAIL(nxdns::log::cat("chunk ", chunk, ": rules", show(rules)).c_str());
    CHECK_EQUAL(4u, p.counts().lines);
    CHECK_EQUAL(2u, p.counts().skipped_count(Skip::junk));
  }
}

TEST(ListParser, TheLongestLineIsReadOneMoreIsNot) {
  // A domain line padded with blanks to exactly the cap, then one more.
  const std::string at_cap = "a.example.com" + std::string(max_line_octets - 13, ' ');
  CHECK_EQUAL(1u, parse_list(at_cap + "\n").counts.rules);
  CHECK_EQUAL(0u, parse_list(at_cap + " \n").counts.rules);
  CHECK_EQUAL(1u, parse_list(at_cap + " \n").counts.skipped_count(Skip::junk));
}

TEST(ListParser, ChunksOfAnySizeGiveTheSameRules) {
  const std::string text =
      "# list\n0.0.0.0 a.example.com b.example.com\r\n||c.example.com^\n@@||d.example.com^\nE.example.com.\n";
  const ParsedList whole = parse_list(text);
  CHECK_EQUAL(5u, whole.rules.size());
  for (std::size_t chunk = 1; chunk <= text.size(); ++chunk) {
    std::vector<OwnedRule> rules;
    ListParser p([&](const Rule& r) { rules.push_back({std::string(r.name), r.kind, r.allow, r.line}); });
    for (std::size_t i = 0; i < text.size(); i += chunk) p.feed(std::string_view(text).substr(i, chunk));
    p.finish();
    if (rules != whole.rules) FAIL(nxdns::log::cat("chunk ", chunk, ": rules", show(rules)).c_str());
  }
}
