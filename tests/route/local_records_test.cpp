// LocalRecords: building the set (duplicates, the CNAME rule) and looking
// names up (case, nodata, CNAME chains within the local data).
#include <string>
#include <vector>

#include "dns/packets.hpp"
#include "route/local_records.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::dns::Bytes;
using nxdns::dns::test::wname;
using namespace nxdns::route;
using Kind = LocalRecords::Lookup::Kind;

namespace {

Record rec(std::string_view owner, std::uint16_t type, Bytes rdata, std::string source = "records[0]",
           std::uint32_t ttl = 300) {
  return Record{wname(owner), type, ttl, std::move(rdata), std::move(source)};
}
Record a(std::string_view owner, std::uint8_t last, std::string source = "records[0]", std::uint32_t ttl = 300) {
  return rec(owner, type_a, {192, 168, 1, last}, std::move(source), ttl);
}
Record cname(std::string_view owner, std::string_view target, std::string source = "records[0]") {
  return rec(owner, type_cname, wname(target), std::move(source));
}

LocalRecords built(std::vector<Record> records) {
  std::string why;
  auto set = LocalRecords::build(std::move(records), &why);
  if (!set) FAIL(("build: " + why).c_str());
  return set ? std::move(*set) : LocalRecords{};
}

std::string build_error(std::vector<Record> records) {
  std::string why;
  if (LocalRecords::build(std::move(records), &why)) FAIL("built");
  return why;
}

// The chain as "owner TYPE" steps, for readable failures.
std::string steps(const LocalRecords::Lookup& l) {
  std::string s;
  for (const Record* r : l.chain) {
    if (!s.empty()) s += ", ";
    s += nxdns::dns::name_to_text(r->owner) + (r->type == type_cname ? " CNAME" : r->type == type_a ? " A" : " ?");
  }
  return s;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::absent: return "absent";
    case Kind::nodata: return "nodata";
    case Kind::answer: return "answer";
  }
  return "?";
}

struct Row {
  const char* situation;
  const char* qname;
  std::uint16_t qtype;
  Kind kind;
  const char* chain;
};

void check(const LocalRecords& set, const Row& r) {
  const LocalRecords::Lookup l = set.find(wname(r.qname), r.qtype);
  const std::string got = std::string(kind_name(l.kind)) + ": " + steps(l);
  const std::string want = std::string(kind_name(r.kind)) + ": " + r.chain;
  if (got != want) FAIL((std::string(r.situation) + "\n want " + want + "\n got  " + got).c_str());
}

}  // namespace

TEST_GROUP(LocalRecords){};

TEST(LocalRecords, Lookups) {
  std::vector<Record> records = {
      a("nas.home.arpa", 2),
      a("nas.home.arpa", 3),
      rec("nas.home.arpa", type_txt, {2, 'h', 'i'}),
      cname("www.home.arpa", "NAS.home.arpa"),
      cname("files.home.arpa", "www.home.arpa"),
      cname("ext.home.arpa", "nas.example.net"),
      cname("loop-a.home.arpa", "loop-b.home.arpa"),
      cname("loop-b.home.arpa", "loop-a.home.arpa"),
      cname("self.home.arpa", "self.home.arpa"),
  };
  const LocalRecords set = built(std::move(records));
  const Row rows[] = {
      {"exact", "nas.home.arpa", type_a, Kind::answer, "nas.home.arpa. A, nas.home.arpa. A"},
      {"any case", "NaS.HoMe.ArPa", type_a, Kind::answer, "nas.home.arpa. A, nas.home.arpa. A"},
      {"owner without the type", "nas.home.arpa", type_aaaa, Kind::nodata, ""},
      {"not ours", "tv.home.arpa", type_a, Kind::absent, ""},
      {"a parent of an owner is not an owner", "home.arpa", type_a, Kind::absent, ""},
      {"ANY: every record of the name", "nas.home.arpa", nxdns::dns::type_any, Kind::answer,
       "nas.home.arpa. A, nas.home.arpa. A, nas.home.arpa. ?"},
      {"one CNAME, then the target's records", "www.home.arpa", type_a, Kind::answer,
       "www.home.arpa. CNAME, nas.home.arpa. A, nas.home.arpa. A"},
      {"two CNAMEs", "FILES.home.arpa", type_a, Kind::answer,
       "files.home.arpa. CNAME, www.home.arpa. CNAME, nas.home.arpa. A, nas.home.arpa. A"},
      {"chain ends at a name without the type", "www.home.arpa", type_aaaa, Kind::answer, "www.home.arpa. CNAME"},
      {"a CNAME query gets the CNAME", "www.home.arpa", type_cname, Kind::answer, "www.home.arpa. CNAME"},
      {"ANY at an alias gets the CNAME", "www.home.arpa", nxdns::dns::type_any, Kind::answer,
       "www.home.arpa. CNAME"},
      {"chain leaves the local data", "ext.home.arpa", type_a, Kind::answer, "ext.home.arpa. CNAME"},
      {"loop", "loop-a.home.arpa", type_a, Kind::answer, "loop-a.home.arpa. CNAME, loop-b.home.arpa. CNAME"},
      {"self loop", "self.home.arpa", type_a, Kind::answer, "self.home.arpa. CNAME"},
  };
  for (const Row& r : rows) check(set, r);
}

TEST(LocalRecords, ChainsStopAfterEightHops) {
  // c0 -> c1 -> ... -> cN, cN has the A.
  auto chain_of = [](int hops) {
    std::vector<Record> records;
    for (int i = 0; i < hops; ++i) records.push_back(cname("c" + std::to_string(i), "c" + std::to_string(i + 1)));
    records.push_back(a("c" + std::to_string(hops), 1));
    return records;
  };
  const LocalRecords eight = built(chain_of(8));
  const LocalRecords::Lookup l8 = eight.find(wname("c0"), type_a);
  LONGS_EQUAL(9, l8.chain.size());
  LONGS_EQUAL(type_a, l8.chain.back()->type);

  const LocalRecords nine = built(chain_of(9));
  const LocalRecords::Lookup l9 = nine.find(wname("c0"), type_a);
  CHECK(l9.kind == Kind::answer);
  LONGS_EQUAL(8, l9.chain.size());
  for (const Record* r : l9.chain) LONGS_EQUAL(type_cname, r->type);
}

TEST(LocalRecords, HasOwnerIsExactAndCaseInsensitive) {
  const LocalRecords set = built({a("nas.home.arpa", 2)});
  CHECK_TRUE(set.has_owner(wname("nas.home.arpa")));
  CHECK_TRUE(set.has_owner(wname("NAS.HOME.ARPA")));
  CHECK_FALSE(set.has_owner(wname("home.arpa")));
  CHECK_FALSE(set.has_owner(wname("x.nas.home.arpa")));
}

TEST(LocalRecords, IdenticalRecordsAreKeptOnceWithTheFirstTtlAndSource) {
  const LocalRecords set = built({
      a("nas.home.arpa", 2, "/etc/hosts:4", 60),
      a("NAS.home.arpa", 2, "records[0]", 300),
      a("nas.home.arpa", 3, "records[1]"),
      cname("www.home.arpa", "nas.home.arpa", "records[2]"),
      cname("www.home.arpa", "NAS.home.arpa", "records[3]"),
  });
  LONGS_EQUAL(3, set.size());
  const LocalRecords::Lookup l = set.find(wname("nas.home.arpa"), type_a);
  LONGS_EQUAL(2, l.chain.size());
  UNSIGNED_LONGS_EQUAL(60, l.chain[0]->ttl);
  STRCMP_EQUAL("/etc/hosts:4", l.chain[0]->source.c_str());
}

TEST(LocalRecords, CnameWithOtherDataIsRefusedNamingBoth) {
  STRCMP_EQUAL(
      "www.home.arpa. has a CNAME and other data (A at /etc/hosts:3, CNAME at records[1]): a CNAME owner can hold "
      "nothing else (RFC 1034 §3.6.2)",
      build_error({a("www.home.arpa", 2, "/etc/hosts:3"), cname("WWW.home.arpa", "nas.home.arpa", "records[1]")})
          .c_str());
  STRCMP_EQUAL(
      "www.home.arpa. has a CNAME and other data (CNAME at records[0], A at records[1]): a CNAME owner can hold "
      "nothing else (RFC 1034 §3.6.2)",
      build_error({cname("www.home.arpa", "nas.home.arpa", "records[0]"), a("www.home.arpa", 2, "records[1]")})
          .c_str());
  // Two different CNAMEs (RFC 2181 §10.1).
  const std::string two = build_error({cname("www", "a", "records[0]"), cname("www", "b", "records[1]")});
  CHECK_TEXT(two.find("CNAME at records[0], CNAME at records[1]") != std::string::npos, two.c_str());
}

TEST(LocalRecords, MalformedRecordIsRefused) {
  Record bad = a("nas", 1, "records[4]");
  bad.owner = {3, 'n', 'a'};  // the label runs past the end
  STRCMP_EQUAL("records[4]: malformed record", build_error({bad}).c_str());
  Record huge = rec("t", type_txt, Bytes(70000, 1), "records[5]");
  STRCMP_EQUAL("records[5]: malformed record", build_error({huge}).c_str());
}

TEST(LocalRecords, RecordsFromBothParsersMeet) {
  std::string why;
  auto hosts = parse_hosts("192.168.1.2 nas.home.arpa\n", "/etc/hosts", &why);
  auto alias = parse_record("www.home.arpa CNAME nas.home.arpa", "records[0]", &why);
  CHECK_TRUE(hosts && alias);
  hosts->push_back(*alias);
  const LocalRecords set = built(*hosts);
  check(set, {"hosts name behind a static CNAME", "www.home.arpa", type_a, Kind::answer,
              "www.home.arpa. CNAME, nas.home.arpa. A"});
}
