// Who may run an operator action (POST), as a table: every row names the
// request it stands for, so a failing row says which promise broke.
#include "web/action_guard.hpp"

#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using web::ActionRequest;
using web::ActionVerdict;

namespace {

struct Row {
  const char* situation;
  bool loopback;
  bool action_header;
  std::vector<std::string_view> origins;
  std::optional<std::string_view> host;
  ActionVerdict expected;
};

void check(std::initializer_list<Row> rows) {
  for (const Row& r : rows) {
    ActionRequest req;
    req.peer_loopback = r.loopback;
    req.has_action_header = r.action_header;
    req.origin_lines = r.origins;
    req.host = r.host;
    const ActionVerdict got = web::judge_action(req);
    if (got != r.expected)
      FAIL(log::cat(r.situation, ": gave ", describe(got), ", want ", describe(r.expected)).c_str());
  }
}

constexpr std::string_view here = "127.0.0.1:8053";

}  // namespace

TEST_GROUP(ActionGuard){};

TEST(ActionGuard, ToolsWithTheHeaderAreAllowed) {
  check({
      {"nxdns cache flush / curl -H: no Origin", true, true, {}, here, ActionVerdict::allowed},
      {"an HTTP/1.0 tool without Host", true, true, {}, std::nullopt, ActionVerdict::allowed},
      {"a page of this server (same origin)", true, true, {"http://127.0.0.1:8053"}, here, ActionVerdict::allowed},
      {"same origin, other letter case", true, true, {"HTTP://LocalHost:8053"}, "localhost:8053",
       ActionVerdict::allowed},
      {"same origin on port 80 (no port in either)", true, true, {"http://localhost"}, "localhost",
       ActionVerdict::allowed},
  });
}

TEST(ActionGuard, SimpleCrossOriginRequestsAreRefused) {
  // A form post or fetch() with a text/plain body: no custom header, so the
  // browser sends it without a preflight.
  check({
      {"simple POST from another origin", true, false, {"http://rebind.example"}, here,
       ActionVerdict::no_action_header},
      {"simple POST without Origin (an old browser, a form)", true, false, {}, here, ActionVerdict::no_action_header},
      {"simple POST from this very origin", true, false, {"http://127.0.0.1:8053"}, here,
       ActionVerdict::no_action_header},
  });
}

TEST(ActionGuard, ForeignOriginsAreRefusedEvenWithTheHeader) {
  check({
      {"another site", true, true, {"http://rebind.example"}, here, ActionVerdict::foreign_origin},
      {"another port on this host", true, true, {"http://127.0.0.1:3000"}, here, ActionVerdict::foreign_origin},
      {"https origin of the same host", true, true, {"https://127.0.0.1:8053"}, here, ActionVerdict::foreign_origin},
      {"localhost page acting on the address", true, true, {"http://localhost:8053"}, here,
       ActionVerdict::foreign_origin},
      {"a sandboxed frame or file (null)", true, true, {"null"}, here, ActionVerdict::foreign_origin},
      {"an origin with a path is not an origin", true, true, {"http://127.0.0.1:8053/"}, here,
       ActionVerdict::foreign_origin},
      {"a prefix of the origin", true, true, {"http://127.0.0.1:805"}, here, ActionVerdict::foreign_origin},
      {"two Origin lines, one ours", true, true, {"http://127.0.0.1:8053", "http://rebind.example"}, here,
       ActionVerdict::foreign_origin},
      {"an Origin but no Host to match", true, true, {"http://127.0.0.1:8053"}, std::nullopt,
       ActionVerdict::foreign_origin},
      {"an Origin and an empty Host", true, true, {"http://"}, "", ActionVerdict::foreign_origin},
  });
}

TEST(ActionGuard, OnlyLoopbackPeersWhateverTheyCarry) {
  check({
      {"LAN peer with everything right", false, true, {}, here, ActionVerdict::not_loopback},
      {"LAN peer, same origin", false, true, {"http://127.0.0.1:8053"}, here, ActionVerdict::not_loopback},
      {"LAN peer, simple request", false, false, {"http://rebind.example"}, here, ActionVerdict::not_loopback},
  });
}

TEST(ActionGuard, EveryRefusalSaysWhy) {
  STRCMP_EQUAL("", web::refusal_text(ActionVerdict::allowed));
  for (ActionVerdict v : {ActionVerdict::not_loopback, ActionVerdict::no_action_header, ActionVerdict::foreign_origin})
    CHECK_TRUE(std::string_view(web::refusal_text(v)).size() > 10);
  CHECK_TRUE(std::string_view(web::refusal_text(ActionVerdict::no_action_header)).find("X-Nxdns-Request") !=
             std::string_view::npos);
}
