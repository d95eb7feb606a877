// block/block_table: the decision for a name, as tables of (lists, query,
// expected verdict and the rule behind it).
#include "block/block_table.hpp"

#include <optional>
#include <string>
#include <vector>

#include "block/list_parser.hpp"
#include "block/rule_collector.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::block;

namespace {

struct List {
  const char* name;
  std::string text;
  bool allow_list = false;
};

BlockTable make_table(const std::vector<List>& lists) {
  RuleCollector c;
  for (const List& l : lists) {
    const std::uint8_t index = *c.begin_list(l.name, l.allow_list);
    ListParser p([&](const Rule& r) { c.add(index, r); }, ParseOptions{l.allow_list});
    p.feed(l.text);
    p.finish();
    c.end_list(index, p.counts());
  }
  return c.finish();
}

dns::Bytes wire(const std::string& text) {
  const std::optional<dns::Bytes> w = dns::name_from_text(text);
  if (!w) FAIL(("not a name: " + text).c_str());
  return *w;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  return s;
}

struct Want {
  Verdict verdict;
  RuleKind kind = RuleKind::exact;
  int list = 0;
  std::uint32_t line = 0;
  const char* suffix = "";  // the rule's name: the matched suffix of the query
};

std::string show(const Decision& d, const dns::Bytes& name) {
  if (d.verdict == Verdict::not_listed) return "not_listed";
  std::string suffix = dns::name_to_text(dns::ByteView(name).subspan(d.suffix_offset));
  return log::cat(describe(d.verdict), " ", describe(d.kind), " list ", int{d.list}, " line ", d.line, " at ", suffix);
}

void check(const char* situation, const BlockTable& t, const std::string& query, const Want& w) {
  const dns::Bytes name = wire(query);
  const Decision d = t.decide(name);
  bool ok = d.verdict == w.verdict;
  if (ok && w.verdict != Verdict::not_listed) {
    ok = d.kind == w.kind && d.list == w.list && d.line == w.line &&
         lower(dns::name_to_text(dns::ByteView(name).subspan(d.suffix_offset))) == std::string(w.suffix) + ".";
  }
  if (!ok) {
    Decision want{w.verdict, w.kind, static_cast<std::uint8_t>(w.list), 0, w.line};
    const dns::Bytes wname = wire(*w.suffix ? w.suffix : ".");
    FAIL(log::cat(situation, ": ", query, " gave ", show(d, name), ", want ", show(want, wname)).c_str());
  }
  // explain() decides exactly as decide() does.
  const Decision e = t.explain(name).decision;
  CHECK_TRUE(e.verdict == d.verdict && e.kind == d.kind && e.list == d.list && e.line == d.line &&
             e.suffix_offset == d.suffix_offset);
}

const Want not_listed{Verdict::not_listed};

}  // namespace

TEST_GROUP(BlockTable){};

TEST(BlockTable, ExactRulesCoverTheNameOnlySubtreeRulesItsChildrenToo) {
  const BlockTable t = make_table({{"hosts", "# header\n0.0.0.0 ads.example.com\n"},
                                   {"domains", "tracker.example.net\n"}});
  check("exact: the name", t, "ads.example.com", {Verdict::blocked, RuleKind::exact, 0, 2, "ads.example.com"});
  check("exact: not a child", t, "x.ads.example.com", not_listed);
  check("exact: not the parent", t, "example.com", not_listed);
  check("subtree: the name", t, "tracker.example.net",
        {Verdict::blocked, RuleKind::subtree, 1, 1, "tracker.example.net"});
  check("subtree: a child", t, "a.b.tracker.example.net",
        {Verdict::blocked, RuleKind::subtree, 1, 1, "tracker.example.net"});
  check("subtree: not the parent", t, "example.net", not_listed);
  check("subtree: labels, not characters", t, "bad-tracker.example.net", not_listed);
  check("subtree: not a sibling", t, "tracker.example.org", not_listed);
}

TEST(BlockTable, AllowWinsOverEveryBlockRule) {
  const BlockTable parent_allowed = make_table({{"block", "0.0.0.0 ads.example.com\n||x.example.com^\n"},
                                                {"allow", "@@||example.com^\n"}});
  check("allowed parent, blocked child (exact)", parent_allowed, "ads.example.com",
        {Verdict::allowed, RuleKind::subtree, 1, 1, "example.com"});
  check("allowed parent, blocked child (subtree)", parent_allowed, "y.x.example.com",
        {Verdict::allowed, RuleKind::subtree, 1, 1, "example.com"});

  const BlockTable child_allowed = make_table({{"block", "||ads.com^\n"}, {"allow", "@@||cdn.ads.com^\n"}});
  check("allowed child itself", child_allowed, "cdn.ads.com", {Verdict::allowed, RuleKind::subtree, 1, 1, "cdn.ads.com"});
  check("below the allowed child", child_allowed, "img.cdn.ads.com",
        {Verdict::allowed, RuleKind::subtree, 1, 1, "cdn.ads.com"});
  check("sibling of the allowed child", child_allowed, "x.ads.com", {Verdict::blocked, RuleKind::subtree, 0, 1, "ads.com"});
  check("the blocked parent", child_allowed, "ads.com", {Verdict::blocked, RuleKind::subtree, 0, 1, "ads.com"});

  const BlockTable exact_allow = make_table({{"block", "||ads.com^\n"}, {"allow", "0.0.0.0 good.ads.com\n", true}});
  check("exact allow", exact_allow, "good.ads.com", {Verdict::allowed, RuleKind::exact, 1, 1, "good.ads.com"});
  check("exact allow does not cover children", exact_allow, "x.good.ads.com",
        {Verdict::blocked, RuleKind::subtree, 0, 1, "ads.com"});

  const BlockTable same_list = make_table({{"mixed", "||ads.com^\n@@||ads.com^\n"}});
  check("allow and block of one name in one list", same_list, "ads.com",
        {Verdict::allowed, RuleKind::subtree, 0, 2, "ads.com"});
}

TEST(BlockTable, TheMostSpecificRuleIsReported) {
  const BlockTable t = make_table({{"a", "||example.com^\n||ads.example.com^\n0.0.0.0 x.ads.example.com\n"}});
  check("exact before subtree", t, "x.ads.example.com", {Verdict::blocked, RuleKind::exact, 0, 3, "x.ads.example.com"});
  check("the nearest subtree", t, "y.ads.example.com",
        {Verdict::blocked, RuleKind::subtree, 0, 2, "ads.example.com"});
  check("the farther subtree", t, "www.example.com", {Verdict::blocked, RuleKind::subtree, 0, 1, "example.com"});
}

TEST(BlockTable, SeveralListsReportTheFirstThatHasTheName) {
  const BlockTable t = make_table({{"one", "# x\n# y\n# z\n# w\n0.0.0.0 both.example.com\n"},
                                   {"two", "0.0.0.0 both.example.com\n0.0.0.0 only-two.example.com\n"},
                                   {"three", "||only-three.example^\n"}});
  check("in lists 0 and 1", t, "both.example.com", {Verdict::blocked, RuleKind::exact, 0, 5, "both.example.com"});
  check("in list 1", t, "only-two.example.com", {Verdict::blocked, RuleKind::exact, 1, 2, "only-two.example.com"});
  check("in list 2", t, "a.only-three.example", {Verdict::blocked, RuleKind::subtree, 2, 1, "only-three.example"});
  CHECK_EQUAL(2u, t.rules(RuleKind::exact, false));  // the shared name once
  CHECK_EQUAL(3u, t.lists().size());
  STRCMP_EQUAL("two", t.lists()[1].name.c_str());
  CHECK_EQUAL(2u, t.lists()[1].counts.rules);
}

TEST(BlockTable, CaseDoesNotMatter) {
  const BlockTable t = make_table({{"a", "0.0.0.0 Ads.Example.COM\n||TRACKER.example^\n"}});
  check("upper-case query, exact", t, "ADS.example.com", {Verdict::blocked, RuleKind::exact, 0, 1, "ads.example.com"});
  check("mixed-case query, subtree", t, "wWw.TrAcKeR.ExAmPlE", {Verdict::blocked, RuleKind::subtree, 0, 2,
                                                               "tracker.example"});
}

TEST(BlockTable, NamesAtTheLimits) {
  const std::string l63(63, 'a');
  const std::string longest = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'b');  // 253: 255 wire octets
  const BlockTable t = make_table({{"a", "0.0.0.0 " + longest + "\n||z^\n"}});
  check("the longest name", t, longest, {Verdict::blocked, RuleKind::exact, 0, 1, longest.c_str()});
  std::string deepest;  // 127 labels of one octet: 255 wire octets, the most labels a name can have
  for (int i = 0; i < 126; ++i) deepest += "a.";
  deepest += "z";
  check("the deepest name", t, deepest, {Verdict::blocked, RuleKind::subtree, 0, 2, "z"});
  check("the root", t, ".", not_listed);
}

TEST(BlockTable, MalformedWireNamesAreNotListed) {
  const BlockTable t = make_table({{"a", "||example.com^\n"}});
  const dns::Bytes good = wire("example.com");
  const std::vector<dns::Bytes> bad = {
      {},
      dns::Bytes(good.begin(), good.end() - 1),                // no root label
      {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o'},     // label runs past the end
      {0xC0, 0x0C},                                            // a compression pointer
  };
  for (const dns::Bytes& b : bad) CHECK_TRUE(t.decide(b).verdict == Verdict::not_listed);
  CHECK_TRUE(t.decide(good).verdict == Verdict::blocked);
}

TEST(BlockTable, AnEmptyTableBlocksNothing) {
  const BlockTable none;
  check("default table", none, "ads.example.com", not_listed);
  CHECK_EQUAL(0u, none.rules());
  const BlockTable only_comments = make_table({{"a", "# nothing\n! here\n"}});
  check("a list of comments", only_comments, "ads.example.com", not_listed);
  CHECK_EQUAL(1u, only_comments.lists().size());
}

TEST(BlockTable, ManyRulesAreAllFoundAndNothingElse) {
  // Enough rules for the bucket array to have thousands of buckets.
  std::string hosts, domains;
  for (int i = 0; i < 20000; ++i) {
    hosts += log::cat("0.0.0.0 host", i, ".example.com\n");
    domains += log::cat("zone", i, ".example.net\n");
  }
  const BlockTable t = make_table({{"hosts", hosts}, {"domains", domains}});
  CHECK_EQUAL(20000u, t.rules(RuleKind::exact, false));
  CHECK_EQUAL(20000u, t.rules(RuleKind::subtree, false));
  for (int i = 0; i < 20000; ++i) {
    const Decision h = t.decide(wire(log::cat("host", i, ".example.com")));
    const Decision d = t.decide(wire(log::cat("www.zone", i, ".example.net")));
    if (h.verdict != Verdict::blocked || h.line != static_cast<std::uint32_t>(i + 1) || d.verdict != Verdict::blocked ||
        d.line != static_cast<std::uint32_t>(i + 1) || d.list != 1) {
      FAIL(log::cat("rule ", i, " not found").c_str());
    }
    if (t.decide(wire(log::cat("host", i, ".example.org"))).verdict != Verdict::not_listed ||
        t.decide(wire(log::cat("zone", i + 20000, ".example.net"))).verdict != Verdict::not_listed) {
      FAIL(log::cat("name ", i, " found but never listed").c_str());
    }
  }
  CHECK_TRUE(t.memory_bytes() < 40000u * 13u + 64u * 1024u);
}

TEST(BlockTable, ExplainListsEveryRuleAndWhyTellsWhichWon) {
  const BlockTable t = make_table({{"block.txt", "||example.com^\n0.0.0.0 ads.example.com\n"},
                                   {"allow.txt", "@@||ads.example.com^\n"}});
  const dns::Bytes name = wire("ads.example.com");
  const Explanation x = t.explain(name);
  CHECK_TRUE(x.decision.verdict == Verdict::allowed);
  CHECK_EQUAL(3u, x.matches.size());
  CHECK_TRUE(x.matches[0].verdict == Verdict::allowed && x.matches[0].list == 1);
  CHECK_TRUE(x.matches[1].verdict == Verdict::blocked && x.matches[1].kind == RuleKind::exact);
  CHECK_TRUE(x.matches[2].verdict == Verdict::blocked && x.matches[2].kind == RuleKind::subtree &&
             x.matches[2].line == 1);
  const std::string why = t.why(name);
  STRCMP_EQUAL("ads.example.com. is allowed by allow ads.example.com (and every name below it), list 1 allow.txt, "
               "line 1; allow rules win over block ads.example.com (that name only), list 0 block.txt, line 2; "
               "allow rules win over block example.com (and every name below it), list 0 block.txt, line 1",
               why.c_str());
  STRCMP_EQUAL("other.test. is not listed: no rule of 2 lists (3 rules) covers it", t.why(wire("other.test")).c_str());
}

TEST(BlockTable, PresentationNamesAsWhyIsGivenThem) {
  const BlockTable t = make_table({{"hosts", "0.0.0.0 ads.example.com\n"}});
  CHECK_TRUE(t.decide_text("ADS.example.com.").verdict == Verdict::blocked);
  CHECK_TRUE(t.decide_text("ads.example.com").line == 1);
  CHECK_TRUE(t.decide_text("x.ads.example.com").verdict == Verdict::not_listed);
  CHECK_TRUE(t.decide_text("ads..example.com").verdict == Verdict::not_listed);
  STRCMP_EQUAL("Ads.example.com. is blocked by block ads.example.com (that name only), list 0 hosts, line 1",
               t.why_text("Ads.example.com").c_str());
  STRCMP_EQUAL("\"a..b\" is not a DNS name", t.why_text("a..b").c_str());
}
