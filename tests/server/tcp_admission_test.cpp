// The admission of a new TCP connection as a table: every row names the
// situation it stands for, so a failing row says which promise broke.
#include "server/tcp_admission.hpp"

#include <cstdint>

#include "log/log.hpp"
#include "server/limits.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::server::Access;
using nxdns::server::tcp_connection_admission;
using nxdns::server::tcp_connection_cap;
using nxdns::server::tcp_refused_budget;
using nxdns::server::TcpAdmission;

namespace {

struct Row {
  const char* situation;
  std::uint32_t open;
  std::uint32_t open_refused;
  Access access;
  TcpAdmission expected;
};

void check(const Row& r) {
  const TcpAdmission got = tcp_connection_admission(r.open, r.open_refused, r.access);
  if (got != r.expected) {
    FAIL(nxdns::log::cat(r.situation, ": open=", r.open, " refused=", r.open_refused,
                         " access=", r.access == Access::allow ? "allow" : "refuse", " gave ", describe(got), ", want ",
                         describe(r.expected))
             .c_str());
  }
}

}  // namespace

TEST_GROUP(TcpAdmission){};

TEST(TcpAdmission, AllowedClientIsServedUntilTheCap) {
  check({"first connection", 0, 0, Access::allow, TcpAdmission::serve});
  check({"one place left", tcp_connection_cap - 1, 0, Access::allow, TcpAdmission::serve});
  check({"cap reached", tcp_connection_cap, 0, Access::allow, TcpAdmission::over_cap});
  check({"cap passed (a reload cannot lower it, but never admit above)", tcp_connection_cap + 5, 0, Access::allow,
         TcpAdmission::over_cap});
}

TEST(TcpAdmission, RefusedClientsDoNotTakeWhatTheAllowedNeed) {
  // The refused budget full: an allowed client still gets every place left.
  check({"refused budget full, allowed client", tcp_refused_budget, tcp_refused_budget, Access::allow,
         TcpAdmission::serve});
  check({"refused budget full, allowed client, last place", tcp_connection_cap - 1, tcp_refused_budget, Access::allow,
         TcpAdmission::serve});
}

TEST(TcpAdmission, RefusedClientsShareASmallBudget) {
  check({"first refused connection", 0, 0, Access::refuse, TcpAdmission::refuse_once});
  check({"refused, budget has one left", 100, tcp_refused_budget - 1, Access::refuse, TcpAdmission::refuse_once});
  check({"refused, budget used", 100, tcp_refused_budget, Access::refuse, TcpAdmission::over_refused_budget});
  check({"refused, budget used, nothing else open", tcp_refused_budget, tcp_refused_budget, Access::refuse,
         TcpAdmission::over_refused_budget});
}

TEST(TcpAdmission, TheCapWinsOverEverything) {
  check({"cap reached, refused, budget free", tcp_connection_cap, 0, Access::refuse, TcpAdmission::over_cap});
  check({"cap reached, refused, budget used", tcp_connection_cap, tcp_refused_budget, Access::refuse,
         TcpAdmission::over_cap});
}
