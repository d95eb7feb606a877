// parse_hosts: the files distributions ship, verbatim, and the household's
// own additions; every error names the file and the line.
#include <string>
#include <vector>

#include "dns/packets.hpp"
#include "route/local_records.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::dns::Bytes;
using nxdns::dns::test::wname;
using namespace nxdns::route;

namespace {

// What the Debian 12 installer writes (netcfg): tabs on the IPv4 lines,
// spaces on the IPv6 ones.
constexpr std::string_view debian_hosts =
    "127.0.0.1\tlocalhost\n"
    "127.0.1.1\tpi.example.org\tpi\n"
    "\n"
    "# The following lines are desirable for IPv6 capable hosts\n"
    "::1     localhost ip6-localhost ip6-loopback\n"
    "ff02::1 ip6-allnodes\n"
    "ff02::2 ip6-allrouters\n";

// Ubuntu's and Raspberry Pi OS's shape: the fe00::0 / ff00::0 lines too.
constexpr std::string_view ubuntu_hosts =
    "127.0.0.1 localhost\n"
    "127.0.1.1 ubuntu\n"
    "\n"
    "# The following lines are desirable for IPv6 capable hosts\n"
    "::1     ip6-localhost ip6-loopback\n"
    "fe00::0 ip6-localnet\n"
    "ff00::0 ip6-mcastprefix\n"
    "ff02::1 ip6-allnodes\n"
    "ff02::2 ip6-allrouters\n";

// NixOS (nixos/modules/config/networking.nix): the localhost file, then
// networking.hosts (hostName "pi", domain "lan"), then an empty extraHosts.
constexpr std::string_view nixos_hosts =
    "127.0.0.1 localhost\n"
    "::1 localhost\n"
    "127.0.0.2 pi.lan pi\n";
// The same with networking.enableIPv6 = false and no domain: the IPv6 line
// becomes an empty one.
constexpr std::string_view nixos_hosts_v4 =
    "127.0.0.1 localhost\n"
    "\n"
    "127.0.0.2 nixos\n";

std::vector<Record> parsed(std::string_view text, std::string_view file = "/etc/hosts") {
  std::string why;
  auto r = parse_hosts(text, file, &why);
  if (!r) FAIL(("rejected: " + why).c_str());
  return r ? *r : std::vector<Record>{};
}

LocalRecords built(std::vector<Record> records) {
  std::string why;
  auto set = LocalRecords::build(std::move(records), &why);
  if (!set) FAIL(("build: " + why).c_str());
  return set ? std::move(*set) : LocalRecords{};
}

// The RDATA of the records answering (name, type), in order.
std::vector<Bytes> answers(const LocalRecords& set, std::string_view name, std::uint16_t type) {
  std::vector<Bytes> out;
  for (const Record* r : set.find(wname(name), type).chain) out.push_back(r->rdata);
  return out;
}

std::vector<Bytes> one(Bytes b) { return {std::move(b)}; }
const Bytes v6_loopback{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
// 1.0.0.0 ... 0.ip6.arpa: ::1's reverse name, written out.
std::string v6_reverse_of_one() {
  std::string s = "1.";
  for (int i = 0; i < 31; ++i) s += "0.";
  return s + "ip6.arpa";
}

std::string error_of(std::string_view text, std::string_view file = "home.hosts") {
  std::string why;
  const auto r = parse_hosts(text, file, &why);
  if (r) FAIL(("accepted: " + std::string(text)).c_str());
  return why;
}

}  // namespace

TEST_GROUP(HostsFile){};

TEST(HostsFile, DebianStockFile) {
  const std::vector<Record> records = parsed(debian_hosts);
  // Names: localhost, pi.example.org, pi, localhost, ip6-localhost,
  // ip6-loopback, ip6-allnodes, ip6-allrouters; one PTR per address (5).
  LONGS_EQUAL(8 + 5, records.size());
  const LocalRecords set = built(records);
  CHECK(answers(set, "localhost", type_a) == one({127, 0, 0, 1}));
  CHECK(answers(set, "localhost", type_aaaa) == one(v6_loopback));
  CHECK(answers(set, "ip6-loopback", type_aaaa) == one(v6_loopback));
  CHECK(answers(set, "pi", type_a) == one({127, 0, 1, 1}));
  CHECK(answers(set, "pi.example.org", type_a) == one({127, 0, 1, 1}));
  CHECK(answers(set, "ip6-allnodes", type_aaaa) ==
        one({0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  CHECK(answers(set, "1.0.0.127.in-addr.arpa", type_ptr) == one(wname("localhost")));
  CHECK(answers(set, "1.1.0.127.in-addr.arpa", type_ptr) == one(wname("pi.example.org")));
  CHECK(answers(set, v6_reverse_of_one(), type_ptr) == one(wname("localhost")));
  std::string ff02_2 = "2.";
  for (int i = 0; i < 27; ++i) ff02_2 += "0.";
  CHECK(answers(set, ff02_2 + "2.0.f.f.ip6.arpa", type_ptr) == one(wname("ip6-allrouters")));
  // Where each came from, for `nxdns why`.
  STRCMP_EQUAL("/etc/hosts:5", set.find(wname("ip6-localhost"), type_aaaa).chain.at(0)->source.c_str());
  for (const Record& r : records) UNSIGNED_LONGS_EQUAL(hosts_ttl, r.ttl);
}

TEST(HostsFile, UbuntuStyleFile) {
  const LocalRecords set = built(parsed(ubuntu_hosts));
  CHECK(answers(set, "ip6-localnet", type_aaaa) == one({0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(answers(set, "ip6-mcastprefix", type_aaaa) == one({0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(answers(set, v6_reverse_of_one(), type_ptr) == one(wname("ip6-localhost")));
  CHECK(set.find(wname("localhost"), type_aaaa).kind == LocalRecords::Lookup::Kind::nodata);
}

TEST(HostsFile, NixosStockFiles) {
  const LocalRecords set = built(parsed(nixos_hosts));
  // localhost on two lines, one per family: both kept.
  CHECK(answers(set, "localhost", type_a) == one({127, 0, 0, 1}));
  CHECK(answers(set, "localhost", type_aaaa) == one(v6_loopback));
  CHECK(answers(set, "pi.lan", type_a) == one({127, 0, 0, 2}));
  CHECK(answers(set, "pi", type_a) == one({127, 0, 0, 2}));
  CHECK(answers(set, "2.0.0.127.in-addr.arpa", type_ptr) == one(wname("pi.lan")));
  LONGS_EQUAL(4 + 3, set.size());

  const LocalRecords v4 = built(parsed(nixos_hosts_v4));
  CHECK(answers(v4, "nixos", type_a) == one({127, 0, 0, 2}));
  STRCMP_EQUAL("/etc/hosts:3", v4.find(wname("nixos"), type_a).chain.at(0)->source.c_str());
}

TEST(HostsFile, CommentsBlanksTabsAndCrlf) {
  const std::vector<Record> records = parsed(
      "# household\r\n"
      "\r\n"
      "   \t \r\n"
      "192.168.1.2\tnas\t# the NAS\r\n"
      "192.168.1.3 printer#no space before the comment\r\n"
      "  192.168.1.4   tv  ",  // no final newline, blanks around
      "lan.hosts");
  const LocalRecords set = built(records);
  CHECK(answers(set, "nas", type_a) == one({192, 168, 1, 2}));
  CHECK(answers(set, "printer", type_a) == one({192, 168, 1, 3}));
  CHECK(answers(set, "tv", type_a) == one({192, 168, 1, 4}));
  STRCMP_EQUAL("lan.hosts:6", set.find(wname("tv"), type_a).chain.at(0)->source.c_str());
  LONGS_EQUAL(6, records.size());
}

TEST(HostsFile, AliasesShareTheAddressAndThePtrNamesTheFirst) {
  const std::vector<Record> records = parsed("192.168.1.2 NAS.home.arpa nas files.\n");
  // Lower case, whatever the file wrote: owners and the PTR's target.
  LONGS_EQUAL(4, records.size());
  CHECK(records[0].owner == wname("nas.home.arpa"));
  LONGS_EQUAL(type_ptr, records[3].type);
  CHECK(records[3].owner == wname("2.1.168.192.in-addr.arpa"));
  CHECK(records[3].rdata == wname("nas.home.arpa"));
  const LocalRecords set = built(records);
  for (const char* name : {"nas.home.arpa", "nas", "files"})
    CHECK(answers(set, name, type_a) == one({192, 168, 1, 2}));
  CHECK(answers(set, "2.1.168.192.in-addr.arpa", type_ptr) == one(wname("nas.home.arpa")));
}

TEST(HostsFile, NamesAcrossLinesMergeAndAnAddressGetsOnePtr) {
  const LocalRecords set = built(parsed(
      "192.168.1.2 nas\n"
      "192.168.1.3 nas\n"
      "192.168.1.2 files\n"
      "192.168.1.2 nas\n"));
  CHECK(answers(set, "nas", type_a) == (std::vector<Bytes>{{192, 168, 1, 2}, {192, 168, 1, 3}}));
  CHECK(answers(set, "files", type_a) == one({192, 168, 1, 2}));
  CHECK(answers(set, "2.1.168.192.in-addr.arpa", type_ptr) == one(wname("nas")));
  CHECK(answers(set, "3.1.168.192.in-addr.arpa", type_ptr) == one(wname("nas")));
}

TEST(HostsFile, IPv6PtrIsTheNibbleName) {
  const LocalRecords set = built(parsed("fd12:3456:789a::5 laptop\n"));
  std::string reverse = "5.";
  for (int i = 0; i < 19; ++i) reverse += "0.";
  reverse += "a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa";
  CHECK(answers(set, reverse, type_ptr) == one(wname("laptop")));
}

TEST(HostsFile, ZoneIndexLinesAreSkipped) {
  const std::vector<Record> records = parsed(
      "fe80::1%eth0 router\n"
      "fe80::2%2 other bad/name\n"
      "192.168.1.2 nas\n");
  const LocalRecords set = built(records);
  CHECK_FALSE(set.has_owner(wname("router")));
  CHECK_FALSE(set.has_owner(wname("other")));
  CHECK(answers(set, "nas", type_a) == one({192, 168, 1, 2}));
  LONGS_EQUAL(2, records.size());
}

TEST(HostsFile, EmptyFileHasNoRecords) {
  CHECK_TRUE(parsed("").empty());
  CHECK_TRUE(parsed("# nothing\n\n").empty());
}

TEST(HostsFile, BadLinesNameFileAndLine) {
  STRCMP_EQUAL("home.hosts:3: '192.168.1.300' is not an IPv4 or IPv6 address",
               error_of("# c\n192.168.1.2 nas\n192.168.1.300 tv\n").c_str());
  STRCMP_EQUAL("home.hosts:2: 'nas' is not an IPv4 or IPv6 address", error_of("\r\nnas 192.168.1.2\r\n").c_str());
  STRCMP_EQUAL("home.hosts:1: 'bad/name' is not a valid host name (letters, digits, '-' and '_' in labels of 1..63)",
               error_of("192.168.1.2 good bad/name\n").c_str());
  STRCMP_EQUAL("home.hosts:1: no name after the address '192.168.1.2'", error_of("192.168.1.2   # nas\n").c_str());
  const std::string label64(64, 'a');
  CHECK(error_of("10.0.0.1 " + label64 + ".lan\n").starts_with("home.hosts:1: 'aaaa"));
  for (const char* name : {"a..b", ".lan", "x.lan..", "*.lan", "caf\xc3\xa9", "a\"b"}) {
    const std::string why = error_of(std::string("10.0.0.1 ") + name + "\n");
    CHECK_TEXT(why.find("is not a valid host name") != std::string::npos, why.c_str());
  }
  // Control octets are shown escaped: the reason stays one line.
  STRCMP_EQUAL("home.hosts:1: 'n\\001s' is not a valid host name (letters, digits, '-' and '_' in labels of 1..63)",
               error_of("10.0.0.1 n\x01s\n").c_str());
  // Nothing of a file with a bad line is used.
  std::string why;
  CHECK_FALSE(parse_hosts("10.0.0.1 good\n10.0.0.x bad\n", "f", nullptr).has_value());
}
