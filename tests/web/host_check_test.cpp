// The Host check (DNS rebinding) as a table: every row names the situation
// it stands for, so a failing row says which promise broke.
#include "web/host_check.hpp"

#include <netinet/in.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using web::HostRules;
using web::HostVerdict;

namespace {

net::Endpoint ip(const char* text, std::uint16_t port = 0) {
  auto e = net::make_endpoint(text, port);
  if (!e) FAIL(text);
  return *e;
}

HostRules bound_to(const char* address, std::string machine_name = "pi",
                   std::vector<net::Endpoint> machine_addresses = {}) {
  HostRules r;
  r.listen = ip(address, 8053);
  r.machine_name = std::move(machine_name);
  r.machine_addresses = std::move(machine_addresses);
  return r;
}

struct Row {
  const char* situation;
  std::vector<std::string_view> host_lines;
  HostVerdict expected;
  bool http_1_0 = false;  // HTTP/1.1 unless a row says otherwise
};

void check(const HostRules& rules, std::initializer_list<Row> rows) {
  for (const Row& r : rows) {
    const HostVerdict got = web::judge_host(r.host_lines, r.http_1_0, rules);
    if (got != r.expected) {
      std::string lines;
      for (auto l : r.host_lines) lines += log::cat(lines.empty() ? "" : " | ", "\"", l, "\"");
      FAIL(log::cat(r.situation, ": listen ", rules.listen.to_string(), r.http_1_0 ? ", HTTP/1.0" : ", HTTP/1.1",
                    ", Host ", lines.empty() ? "(none)" : lines,
                    " gave ", describe(got), ", want ", describe(r.expected))
               .c_str());
    }
  }
}

}  // namespace

TEST_GROUP(HostCheck){};

TEST(HostCheck, LoopbackBindAnswersItsAddressAndLocalhostOnly) {
  check(bound_to("127.0.0.1"),
        {
            {"the address and port", {"127.0.0.1:8053"}, HostVerdict::ours},
            {"the address alone (port 80 in the URL)", {"127.0.0.1"}, HostVerdict::ours},
            {"another port (an SSH tunnel)", {"127.0.0.1:9053"}, HostVerdict::ours},
            {"localhost", {"localhost:8053"}, HostVerdict::ours},
            {"localhost, any case", {"LocalHost:8053"}, HostVerdict::ours},
            {"localhost with the root dot", {"localhost.:8053"}, HostVerdict::ours},
            {"a rebinding page's name", {"rebind.example:8053"}, HostVerdict::foreign},
            {"a rebinding page's name, no port", {"rebind.example"}, HostVerdict::foreign},
            {"a name ending in localhost", {"evil.localhost:8053"}, HostVerdict::foreign},
            {"a name starting with localhost", {"localhost.evil.example"}, HostVerdict::foreign},
            {"a name starting with the address", {"127.0.0.1.evil.example"}, HostVerdict::foreign},
            {"another loopback address", {"127.0.0.2:8053"}, HostVerdict::foreign},
            {"the other family's loopback", {"[::1]:8053"}, HostVerdict::foreign},
            {"the machine's name: not served on loopback", {"pi:8053"}, HostVerdict::foreign},
            {"not a host name", {"a_b:8053"}, HostVerdict::foreign},
        });
}

TEST(HostCheck, LoopbackIpv6BindAnswersTheBracketedLiteral) {
  check(bound_to("::1"), {
                             {"bracketed with port", {"[::1]:8053"}, HostVerdict::ours},
                             {"bracketed without port", {"[::1]"}, HostVerdict::ours},
                             {"the same address written long", {"[0:0:0:0:0:0:0:1]:8053"}, HostVerdict::ours},
                             {"localhost", {"localhost:8053"}, HostVerdict::ours},
                             {"IPv4 loopback", {"127.0.0.1:8053"}, HostVerdict::foreign},
                             {"a rebinding page's name", {"rebind.example:8053"}, HostVerdict::foreign},
                         });
}

TEST(HostCheck, MissingEmptyAndMalformedHosts) {
  check(bound_to("127.0.0.1"),
        {
            {"no Host (an HTTP/1.0 tool)", {}, HostVerdict::absent, true},
            {"empty Host (no authority), HTTP/1.0", {""}, HostVerdict::absent, true},
            {"no Host over HTTP/1.1 (RFC 9112: 400)", {}, HostVerdict::malformed},
            {"empty Host over HTTP/1.1", {""}, HostVerdict::malformed},
            {"HTTP/1.0 with a foreign Host", {"rebind.example"}, HostVerdict::foreign, true},
            {"HTTP/1.0 with its own Host", {"127.0.0.1:8053"}, HostVerdict::ours, true},
            {"two Host lines over HTTP/1.0", {"127.0.0.1", "127.0.0.1"}, HostVerdict::malformed, true},
            {"two Host lines, both ours", {"127.0.0.1:8053", "127.0.0.1:8053"}, HostVerdict::malformed},
            {"two Host lines, one foreign", {"127.0.0.1:8053", "rebind.example"}, HostVerdict::malformed},
            {"IPv6 without brackets", {"::1"}, HostVerdict::malformed},
            {"an unclosed bracket", {"[::1:8053"}, HostVerdict::malformed},
            {"IPv4 in brackets", {"[127.0.0.1]:8053"}, HostVerdict::malformed},
            {"a name in brackets", {"[localhost]"}, HostVerdict::malformed},
            {"junk after the bracket", {"[::1]x"}, HostVerdict::malformed},
            {"an empty port", {"127.0.0.1:"}, HostVerdict::malformed},
            {"port 0", {"127.0.0.1:0"}, HostVerdict::malformed},
            {"a port past 65535", {"127.0.0.1:65536"}, HostVerdict::malformed},
            {"a port that is not decimal", {"localhost:http"}, HostVerdict::malformed},
            {"a port and no host", {":8053"}, HostVerdict::malformed},
        });
}

TEST(HostCheck, LanBindAnswersItsAddressAndTheMachineName) {
  check(bound_to("192.168.1.2"),
        {
            {"the address", {"192.168.1.2:8053"}, HostVerdict::ours},
            {"the machine's name", {"pi:8053"}, HostVerdict::ours},
            {"the machine's mDNS name", {"pi.local:8053"}, HostVerdict::ours},
            {"the mDNS name, any case, root dot", {"PI.Local.:8053"}, HostVerdict::ours},
            {"localhost: the socket is not on loopback", {"localhost:8053"}, HostVerdict::foreign},
            {"loopback: the socket is not on loopback", {"127.0.0.1:8053"}, HostVerdict::foreign},
            {"another LAN address", {"192.168.1.3:8053"}, HostVerdict::foreign},
            {"the machine's name under a foreign domain", {"pi.rebind.example"}, HostVerdict::foreign},
            {"a rebinding page's name", {"rebind.example:8053"}, HostVerdict::foreign},
        });
  check(bound_to("192.168.1.2", "pi.lan"),
        {
            {"the full machine name", {"pi.lan:8053"}, HostVerdict::ours},
            {"its first label (the search domain)", {"pi:8053"}, HostVerdict::ours},
            {"its first label in mDNS", {"pi.local:8053"}, HostVerdict::ours},
            {"the domain alone", {"lan:8053"}, HostVerdict::foreign},
            {"the full name under a foreign domain", {"pi.lan.rebind.example"}, HostVerdict::foreign},
        });
  check(bound_to("192.168.1.2", ""), {
                                         {"no machine name known", {"pi:8053"}, HostVerdict::foreign},
                                         {"the address still", {"192.168.1.2"}, HostVerdict::ours},
                                     });
}

TEST(HostCheck, WildcardBindAnswersEveryAddressOfTheMachine) {
  const std::vector<net::Endpoint> machine = {ip("127.0.0.1"), ip("192.168.1.2"), ip("::1"), ip("2001:db8::2"),
                                              ip("fe80::1")};
  check(bound_to("0.0.0.0", "pi", machine),
        {
            {"a LAN address of the machine", {"192.168.1.2:8053"}, HostVerdict::ours},
            {"loopback", {"127.0.0.1:8053"}, HostVerdict::ours},
            {"localhost", {"localhost:8053"}, HostVerdict::ours},
            {"the machine's name", {"pi:8053"}, HostVerdict::ours},
            {"the machine's mDNS name", {"pi.local:8053"}, HostVerdict::ours},
            {"an IPv6 address of the machine", {"[2001:db8::2]:8053"}, HostVerdict::ours},
            {"a link-local address of the machine", {"[fe80::1]:8053"}, HostVerdict::ours},
            {"the bound literal", {"0.0.0.0:8053"}, HostVerdict::ours},
            {"an address the machine does not have", {"192.168.1.9:8053"}, HostVerdict::foreign},
            {"a rebinding page's name", {"rebind.example:8053"}, HostVerdict::foreign},
        });
  check(bound_to("::", "pi", machine), {
                                           {"an IPv6 address of the machine", {"[2001:db8::2]"}, HostVerdict::ours},
                                           {"localhost", {"localhost"}, HostVerdict::ours},
                                           {"a foreign IPv6 address", {"[2001:db8::9]"}, HostVerdict::foreign},
                                       });
  check(bound_to("0.0.0.0", "pi", {}),
        {
            {"addresses unknown: a LAN address is not assumed", {"192.168.1.2:8053"}, HostVerdict::foreign},
            {"addresses unknown: loopback is served all the same", {"127.0.0.1:8053"}, HostVerdict::ours},
            {"any of 127.0.0.0/8 (listed as 127.0.0.1 alone)", {"127.0.0.5:8053"}, HostVerdict::ours},
            {"IPv6 loopback", {"[::1]:8053"}, HostVerdict::ours},
        });
}

TEST(HostCheck, AllowedHostsAddNamesAndAddressesToAnyBind) {
  HostRules r = bound_to("127.0.0.1");
  r.allowed.names = {"pi.home.arpa"};
  r.allowed.addresses = {ip("203.0.113.7"), ip("2001:db8::7")};
  check(r, {
               {"a listed name", {"pi.home.arpa:8053"}, HostVerdict::ours},
               {"a listed name, any case, root dot", {"PI.Home.Arpa.:8053"}, HostVerdict::ours},
               {"a listed IPv4 address (NAT in front)", {"203.0.113.7"}, HostVerdict::ours},
               {"a listed IPv6 address", {"[2001:db8::7]:443"}, HostVerdict::ours},
               {"the bound address still", {"127.0.0.1:8053"}, HostVerdict::ours},
               {"a parent of a listed name", {"home.arpa:8053"}, HostVerdict::foreign},
               {"a child of a listed name", {"x.pi.home.arpa:8053"}, HostVerdict::foreign},
           });
}

TEST(HostCheck, OnlyOursAndAbsentAreServed) {
  CHECK_TRUE(web::served(HostVerdict::ours));
  CHECK_TRUE(web::served(HostVerdict::absent));
  CHECK_FALSE(web::served(HostVerdict::malformed));
  CHECK_FALSE(web::served(HostVerdict::foreign));
}
