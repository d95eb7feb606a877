// The routing step as a table: each row is one name, the table it is
// decided against and whether the LAN servers can answer, and names the
// promise it stands for, so a failing row says which one broke.
#include "route/route_decision.hpp"

#include <netinet/in.h>

#include <cstring>

#include <memory>
#include <string>
#include <vector>

#include <CppUTest/TestHarness.h>

#include "log/log.hpp"
#include "block/table_builder.hpp"
#include "route/blocking_groups.hpp"
#include "route/route_table.hpp"

using namespace nxdns;
using route::RouteKind;

namespace {

constexpr std::uint16_t t_a = 1, t_aaaa = 28, t_txt = 16, t_ptr = 12;

net::Endpoint ep(const char* text) { return *net::parse_endpoint(text, 53, nullptr); }

route::Record rec(const char* line) {
  std::string why;
  auto r = route::parse_record(line, "test", &why);
  if (!r) FAIL(log::cat("bad test record ", line, ": ", why).c_str());
  return *r;
}

struct Row {
  const char* situation;
  const char* qname;
  std::uint16_t qtype;
  bool lan_up;
  RouteKind kind;
  const char* zone;           // deciding zone, "" for none
  dns::Rcode rcode = dns::Rcode::noerror;  // negative only
};

void check(const route::RouteTable& t, const Row& r) {
  const auto name = dns::name_from_text(r.qname);
  CHECK_TEXT(name.has_value(), r.situation);
  const route::Route got = route::decide_route(t, *name, r.qtype, [&r](std::size_t) { return r.lan_up; });
  const std::string zone = got.zone ? got.zone->name : "";
  if (got.kind != r.kind || zone != r.zone || (got.kind == RouteKind::negative && got.rcode != r.rcode)) {
    FAIL(log::cat(r.situation, ": ", r.qname, " gave ", route::describe(got.kind), " zone '", zone, "' rcode ",
                  static_cast<int>(got.rcode), "; want ", route::describe(r.kind), " zone '", r.zone, "' rcode ",
                  static_cast<int>(r.rcode))
             .c_str());
  }
}

std::shared_ptr<const route::RouteTable> household(bool router) {
  route::RouteInputs in;
  in.zones.push_back({"corp.example", {ep("10.9.0.53")}, "local_zones[0]"});
  in.zones.push_back({"5.168.192.in-addr.arpa", {ep("192.168.5.1")}, "local_zones[1]"});
  if (router) {
    in.router = ep("192.168.1.1");
    in.router_reverse_zones = {"1.168.192.in-addr.arpa"};
  }
  in.records = {rec("nas.home.arpa. 300 IN A 192.168.1.20"), rec("printer.lan. 60 IN A 192.168.1.30"),
                rec("www.corp.example. 60 IN CNAME nas.home.arpa."), rec("deep.a.b.home.arpa. 60 IN TXT \"x\"")};
  std::string why;
  auto t = route::RouteTable::build(std::move(in), &why);
  if (!t) FAIL(why.c_str());
  return t;
}

}  // namespace

TEST_GROUP(RouteDecision){};

TEST(RouteDecision, LocalRecordsWinOverEveryZone) {
  const auto t = household(true);
  const Row rows[] = {
      {"record under a built-in zone", "nas.home.arpa", t_a, true, RouteKind::records, "home.arpa"},
      {"record of another type: NODATA from the records", "nas.home.arpa", t_aaaa, true, RouteKind::records, "home.arpa"},
      {"record under the router's zone", "printer.lan", t_a, true, RouteKind::records, "lan"},
      {"any case", "PRINTER.Lan", t_a, true, RouteKind::records, "lan"},
      {"record under a configured LAN zone", "www.corp.example", t_a, true, RouteKind::records, "corp.example"},
      {"records answer even with the LAN down", "printer.lan", t_a, false, RouteKind::records, "lan"},
      {"the built-in localhost PTR", "1.0.0.127.in-addr.arpa", t_ptr, true, RouteKind::records, "127.in-addr.arpa"},
  };
  for (const Row& r : rows) check(*t, r);
}

TEST(RouteDecision, LongestZoneDecides) {
  const auto t = household(true);
  const Row rows[] = {
      {"router zone", "tv.lan", t_a, true, RouteKind::lan, "lan"},
      {"router's own subnet reverse", "50.1.168.192.in-addr.arpa", t_ptr, true, RouteKind::lan, "1.168.192.in-addr.arpa"},
      {"configured reverse zone beats RFC 6303", "7.5.168.192.in-addr.arpa", t_ptr, true, RouteKind::lan,
       "5.168.192.in-addr.arpa"},
      {"other private reverse: RFC 6303", "9.9.168.192.in-addr.arpa", t_ptr, true, RouteKind::negative,
       "168.192.in-addr.arpa", dns::Rcode::nxdomain},
      {"10/8 reverse", "4.3.2.10.in-addr.arpa", t_ptr, true, RouteKind::negative, "10.in-addr.arpa", dns::Rcode::nxdomain},
      {"configured forward zone", "x.corp.example", t_a, true, RouteKind::lan, "corp.example"},
      {"the zone apex itself", "corp.example", t_a, true, RouteKind::lan, "corp.example"},
      {"a sibling of a configured zone is not in it", "xcorp.example", t_a, true, RouteKind::upstream, ""},
      {"public name", "www.example.org", t_a, true, RouteKind::upstream, ""},
      {"example is resolved normally (RFC 6761 §6.5)", "example", t_a, true, RouteKind::upstream, ""},
  };
  for (const Row& r : rows) check(*t, r);
}

TEST(RouteDecision, SpecialUseNamesAreAnsweredHere) {
  const auto t = household(false);
  const Row rows[] = {
      {"localhost", "localhost", t_a, true, RouteKind::loopback, "localhost"},
      {"below localhost", "app.localhost", t_aaaa, true, RouteKind::loopback, "localhost"},
      {"invalid", "x.invalid", t_a, true, RouteKind::negative, "invalid", dns::Rcode::nxdomain},
      {"test", "a.test", t_a, true, RouteKind::negative, "test", dns::Rcode::nxdomain},
      {"onion", "abc.onion", t_a, true, RouteKind::negative, "onion", dns::Rcode::nxdomain},
      {"home.arpa without a router", "tv.home.arpa", t_a, true, RouteKind::negative, "home.arpa", dns::Rcode::nxdomain},
      {"an empty non-terminal above records is NODATA", "a.b.home.arpa", t_a, true, RouteKind::negative, "home.arpa",
       dns::Rcode::noerror},
      {"link-local reverse", "1.0.254.169.in-addr.arpa", t_ptr, true, RouteKind::negative, "254.169.in-addr.arpa",
       dns::Rcode::nxdomain},
      {"without a router, lan is not ours", "tv.lan", t_a, true, RouteKind::upstream, ""},
  };
  for (const Row& r : rows) check(*t, r);
}

TEST(RouteDecision, ARouterThatCannotAnswerCostsNothing) {
  const auto t = household(true);
  const Row rows[] = {
      {"router zone, router down: local NXDOMAIN", "tv.lan", t_a, false, RouteKind::negative, "lan", dns::Rcode::nxdomain},
      {"home.arpa, router down", "tv.home.arpa", t_a, false, RouteKind::negative, "home.arpa", dns::Rcode::nxdomain},
      {"reverse, router down", "50.1.168.192.in-addr.arpa", t_ptr, false, RouteKind::negative, "1.168.192.in-addr.arpa",
       dns::Rcode::nxdomain},
      {"configured zone inside RFC 6303 falls back too", "7.5.168.192.in-addr.arpa", t_ptr, false, RouteKind::negative,
       "5.168.192.in-addr.arpa", dns::Rcode::nxdomain},
      // A zone the internet also holds is the operator's to fail: SERVFAIL
      // from the pool, never a made-up NXDOMAIN.
      {"configured public zone, server down: still asked", "x.corp.example", t_a, false, RouteKind::lan, "corp.example"},
  };
  for (const Row& r : rows) check(*t, r);
}

TEST(RouteDecision, ConfiguredZoneReplacesTheRoutersOfTheSameName) {
  route::RouteInputs in;
  in.zones.push_back({"lan", {ep("192.168.1.2")}, "local_zones[0]"});
  in.router = ep("192.168.1.1");
  std::string why;
  auto t = route::RouteTable::build(std::move(in), &why);
  CHECK(t != nullptr);
  const auto name = dns::name_from_text("tv.lan");
  const auto r = route::decide_route(*t, *name, t_a, [](std::size_t) { return true; });
  CHECK(r.kind == RouteKind::lan);
  STRCMP_EQUAL("local_zones[0]", r.zone->source.c_str());
  CHECK(t->lan_groups()[r.zone->lan_group].servers[0] == ep("192.168.1.2"));
  // home.arpa still goes to the router, which is its own group.
  const auto h = route::decide_route(*t, *dns::name_from_text("x.home.arpa"), t_a, [](std::size_t) { return true; });
  CHECK(h.kind == RouteKind::lan);
  CHECK(t->lan_groups()[h.zone->lan_group].servers[0] == ep("192.168.1.1"));
  CHECK_EQUAL(2u, t->lan_groups().size());
}

TEST(RouteDecision, ZonesNamingTheSameServersShareAGroup) {
  route::RouteInputs in;
  in.zones.push_back({"a.example", {ep("192.168.1.1")}, "local_zones[0]"});
  in.router = ep("192.168.1.1");
  std::string why;
  auto t = route::RouteTable::build(std::move(in), &why);
  CHECK_EQUAL(1u, t->lan_groups().size());
  CHECK(t->lan_groups()[0].home_router);
}

TEST(RouteDecision, ConflictingRecordsFailTheBuild) {
  route::RouteInputs in;
  in.records = {rec("a.home.arpa. 60 IN CNAME b.home.arpa."), rec("a.home.arpa. 60 IN A 192.0.2.1")};
  std::string why;
  CHECK(route::RouteTable::build(std::move(in), &why) == nullptr);
  CHECK(!why.empty());
}

TEST(RouteDecision, TxtRecordIsNotAnAddress) {
  const auto t = household(false);
  check(*t, {"TXT owner asked for A: NODATA from records", "deep.a.b.home.arpa", t_a, true, RouteKind::records, "home.arpa"});
  check(*t, {"TXT owner asked for TXT", "deep.a.b.home.arpa", t_txt, true, RouteKind::records, "home.arpa"});
}

TEST(RouteDecision, AForwardedSpecialZoneGoesUpstream) {
  route::RouteInputs in;
  in.forward_special = {"test"};
  std::string why;
  auto t = route::RouteTable::build(std::move(in), &why);
  check(*t, {"test forwarded by the operator", "a.test", t_a, true, RouteKind::upstream, ""});
  check(*t, {"invalid still answered here", "a.invalid", t_a, true, RouteKind::negative, "invalid", dns::Rcode::nxdomain});
}

namespace {
// A table blocking ads.example (subtree), tracker.example exactly, allowing
// ok.ads.example, and a hosts line for nas.home.arpa on the block list.
std::shared_ptr<const block::BlockTable> blocklist() {
  std::vector<block::ListSource> lists;
  lists.push_back({"block.txt", false,
                   std::make_shared<const std::string>(
                       "||ads.example^\n0.0.0.0 tracker.example\n0.0.0.0 nas.home.arpa\n||lan^\n"),
                   {}});
  lists.push_back({"allow.txt", true, std::make_shared<const std::string>("ok.ads.example\n"), {}});
  auto r = block::build_table(lists);
  if (!r.table) FAIL(r.error.value_or("no table").c_str());
  return r.table;
}
}  // namespace

TEST(RouteDecision, BlockingSitsBetweenRecordsAndZones) {
  const auto t = household(true);
  const auto bt = blocklist();
  auto check_blocked = [&](const char* situation, const char* name, bool applies, RouteKind want,
                           block::Verdict verdict) {
    const auto wire = dns::name_from_text(name);
    const route::Route r =
        route::decide_route(*t, *wire, t_a, [](std::size_t) { return true; }, route::BlockingInput{bt.get(), applies});
    if (r.kind != want || r.block.verdict != verdict) {
      FAIL(log::cat(situation, ": ", name, " gave ", route::describe(r.kind), " / ", block::describe(r.block.verdict),
                    "; want ", route::describe(want), " / ", block::describe(verdict))
               .c_str());
    }
  };
  check_blocked("subtree rule", "x.ads.example", true, RouteKind::blocked, block::Verdict::blocked);
  check_blocked("exact rule", "tracker.example", true, RouteKind::blocked, block::Verdict::blocked);
  check_blocked("exact rule: not below", "a.tracker.example", true, RouteKind::upstream, block::Verdict::not_listed);
  check_blocked("allow wins", "ok.ads.example", true, RouteKind::upstream, block::Verdict::allowed);
  check_blocked("group not filtered", "x.ads.example", false, RouteKind::upstream, block::Verdict::not_listed);
  check_blocked("local records are never blocked", "nas.home.arpa", true, RouteKind::records, block::Verdict::not_listed);
  check_blocked("a blocked LAN name never reaches the router", "tv.lan", true, RouteKind::blocked,
                block::Verdict::blocked);
  check_blocked("not listed", "www.example.org", true, RouteKind::upstream, block::Verdict::not_listed);
}

TEST(RouteDecision, GroupsByLongestPrefix) {
  std::string why;
  std::vector<route::GroupRule> rules = {{*server::parse_cidr("192.168.1.0/24", &why), false},
                                         {*server::parse_cidr("192.168.1.16/28", &why), true}};
  route::BlockingGroups g(rules);
  auto at = [&g](const char* ip) {
    sockaddr_storage ss{};
    auto e = net::make_endpoint(ip, 0);
    std::memcpy(&ss, &e->addr, e->len);
    return g.applies(reinterpret_cast<const sockaddr*>(&ss));
  };
  CHECK_FALSE(at("192.168.1.5"));    // the /24 says off
  CHECK_TRUE(at("192.168.1.20"));    // the /28 inside it says on
  CHECK_TRUE(at("10.0.0.1"));        // no group: filtered
  CHECK_FALSE(at("::ffff:192.168.1.5"));  // v4-mapped judged as IPv4
  CHECK_TRUE(g.applies(nullptr));    // unknown client: filtered
}
