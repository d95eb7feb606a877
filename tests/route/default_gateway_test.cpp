// Reading the default gateway out of /proc/net/route, as a table of texts
// the kernel writes (most captured from a network namespace, with its tab
// separators and trailing padding) and texts it never should.
#include "route/home_network.hpp"

#include <cstdio>
#include <string>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::route::default_gateway_from_proc;
using nxdns::route::Gateway;

namespace {

const std::string header =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"
    "                                                       \n";

struct Row {
  const char* situation;
  std::string text;
  const char* gateway;    // dotted quad, or nullptr for none
  const char* interface;
};

std::string describe(const std::optional<Gateway>& g) {
  if (!g) return "none";
  return nxdns::log::cat(int(g->addr[0]), '.', int(g->addr[1]), '.', int(g->addr[2]), '.', int(g->addr[3]), " on ",
                         g->interface);
}

}  // namespace

TEST_GROUP(DefaultGatewayFromProc){};

TEST(DefaultGatewayFromProc, Table) {
  const std::string pad = "                                                                               \n";
  const Row rows[] = {
      {"one default route, a home router on Wi-Fi",
       header + ("wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0" + pad) +
           ("wlan0\t0001A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0" + pad),
       "192.168.1.1", "wlan0"},
      {"several default routes: the lowest metric wins, wherever it stands",
       header + ("nx0\t00000000\t014DA8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0" + pad) +
           ("nx2\t00000000\tFE00090A\t0003\t0\t0\t700\t00000000\t0\t0\t0" + pad) +
           ("nx2\t00000000\t0100090A\t0003\t0\t0\t100\t00000000\t0\t0\t0" + pad) +
           ("*\t00000000\t00000000\t0201\t0\t0\t900\t00000000\t0\t0\t0" + pad) +
           ("nx2\t0000090A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0" + pad),
       "10.9.0.1", "nx2"},
      {"equal metrics: the kernel's first",
       header + ("eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0" + pad) +
           ("eth1\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0" + pad),
       "10.0.0.1", "eth0"},
      {"a default route without the gateway flag (point-to-point link) names no router",
       header + ("ppp0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0" + pad), nullptr, ""},
      {"without the gateway flag it loses even to a worse metric",
       header + ("ppp0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0" + pad) +
           ("eth0\t00000000\t0101A8C0\t0003\t0\t0\t500\t00000000\t0\t0\t0" + pad),
       "192.168.1.1", "eth0"},
      {"a route that is not up (flags 0002, RTF_UP clear) is not used",
       header + ("eth0\t00000000\t0101A8C0\t0002\t0\t0\t0\t00000000\t0\t0\t0" + pad), nullptr, ""},
      {"an unreachable default (RTF_REJECT) is not a gateway",
       header + ("*\t00000000\t0101A8C0\t0203\t0\t0\t0\t00000000\t0\t0\t0" + pad), nullptr, ""},
      {"a gateway on a route that is not the default",
       header + ("eth0\t0064A8C0\t0101A8C0\t0003\t0\t0\t0\t00FFFFFF\t0\t0\t0" + pad), nullptr, ""},
      {"destination 0 with a mask is not the default",
       header + ("eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t000000FF\t0\t0\t0" + pad), nullptr, ""},
      {"a public gateway is read as it is: judging it is home_network_from's",
       header + ("eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0" + pad), "192.0.2.1", "eth0"},
      {"lower-case hex", header + "eth0 00000000 0101a8c0 0003 0 0 0 00000000 0 0 0\n", "192.168.1.1", "eth0"},
      {"no newline at the end", header + "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0",
       "192.168.1.1", "eth0"},
      {"a line that does not parse is passed over, the others stand",
       header + "eth0\t00000000\tZZ01A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" + "eth1\t00000000\n" +
           "eth2\t00000000\t0101A8C0\t0003\t0\t0\t-1\t00000000\t0\t0\t0\n" +
           "eth3\t00000000\t0100000A\t0003\t0\t0\t7\t00000000\t0\t0\t0\n",
       "10.0.0.1", "eth3"},
      {"a gateway field over 8 digits",
       header + "eth0\t00000000\t1000000000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n", nullptr, ""},
      {"gateway 0.0.0.0 with the gateway flag",
       header + "eth0\t00000000\t00000000\t0003\t0\t0\t0\t00000000\t0\t0\t0\n", nullptr, ""},
      {"header only", header, nullptr, ""},
      {"empty", "", nullptr, ""},
      {"garbage", "hello world\n\x01\x02\xff\n0 0 0 0 0 0 0 0 0\n", nullptr, ""},
      {"no header: rows alone are not trusted", "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
       nullptr, ""},
      {"a header of other columns",
       "Iface\tGateway\tDestination\tFlags\tRefCnt\tUse\tMetric\tMask\n"
       "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\n",
       nullptr, ""},
  };
  for (const Row& r : rows) {
    const auto got = default_gateway_from_proc(r.text);
    std::optional<Gateway> want;
    if (r.gateway) {
      unsigned a, b, c, d;
      CHECK_EQUAL(4, std::sscanf(r.gateway, "%u.%u.%u.%u", &a, &b, &c, &d));
      want = Gateway{{std::uint8_t(a), std::uint8_t(b), std::uint8_t(c), std::uint8_t(d)}, r.interface};
    }
    if (got != want) FAIL(nxdns::log::cat(r.situation, ": got ", describe(got), ", want ", describe(want)).c_str());
  }
}
