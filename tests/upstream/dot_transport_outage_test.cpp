// DotTransport through a WAN outage against the in-process TLS server: the
// path goes down under an open session, then comes back with every
// connection from before it dead (a household router reconnecting with a
// new public address; DotTestServer::begin_outage()). The first exchange
// after the return goes on a fresh dial at once, not on the dead session
// whose stall would have to be waited out; what waited through the outage
// is carried by the fresh connection too; the dead session is retired.
#include <cstddef>
#include <cstdint>
#include <string>

#include "log/log.hpp"
#include "upstream/dot_transport_fixture.hpp"
#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

TEST_GROUP_BASE(DotTransportOutage, test::DotTransportFixture) {
  // The connection (in accept order) whose query asked for `name`; -1 when
  // the server never read one, -2 when it read more than one.
  long carried_by(const std::string& name) {
    long conn = -1;
    for (const auto& q : server->received()) {
      if (!answers_name(q.wire, name)) continue;
      if (conn != -1) return -2;
      conn = static_cast<long>(q.conn);
    }
    return conn;
  }
  // The slot whose session is established (the test opens exactly one).
  std::size_t established_slot() {
    for (std::size_t i = 0; i < dot->session_count(); ++i) {
      if (dot->session(i).established()) return i;
    }
    FAIL("no established session");
    return 0;
  }
};

TEST(DotTransportOutage, FirstExchangeAfterTheReturnGoesOnAFreshDialAtOnce) {
  serve();
  exchange_ok(1, "before.example");  // one session up; the upstream's latency is known
  const std::size_t old_slot = established_slot();
  const std::uint64_t old_dial = dot->session(old_slot).dial_count();
  server->begin_outage();
  // Two exchanges written on the session whose path is now gone: both stall,
  // and that is the outage seen.
  Outcome lost[2];
  start(lost[0], 2, "lost0.example");
  start(lost[1], 3, "lost1.example");
  run_until([&] { return dot->outage_seen(); }, 5000, "the outage to be seen");
  // Past the longest fresh-dial window (100 ms), short of the next outage
  // redial (1 s): the dial made for the stalls is not joined.
  run_for(120);
  const std::uint64_t resent_in_outage = dot->resent();
  const std::uint64_t dials_in_outage = dot->outage_dials();
  server->end_outage();
  const std::size_t returned_at = server->accepts();

  Outcome back;
  start(back, 4, "back.example");
  LONGS_EQUAL(dials_in_outage + 1, dot->outage_dials());  // a dial of its own, at once
  run_until([&] { return back.calls > 0; }, 5000, "the first exchange after the return");
  CHECK_TRUE(back.result.ok());
  CHECK_TRUE(answers_name(back.result.response, "back.example"));
  // Sent once, on a connection from after the return: not on the dead
  // session first and then re-sent past its stall deadline.
  const long conn = carried_by("back.example");
  CHECK_TRUE(conn >= static_cast<long>(returned_at));
  CHECK_TRUE(server->served(static_cast<std::size_t>(conn)));
  LONGS_EQUAL(resent_in_outage, dot->resent());
  CHECK_TRUE(dot->outage_dials() >= 1);
  CHECK_FALSE(dot->outage_seen());
  // What waited through the outage rides the fresh connection as well.
  run_until_all(lost, 5000, "the exchanges from the outage");
  for (const Outcome& o : lost) {
    if (!o.result.ok()) FAIL(log::cat(describe(o.result.cause), ": ", o.result.detail).c_str());
  }
  // The connection from before showed no life since: retired, not left to
  // take the next exchanges.
  const auto& old_session = dot->session(old_slot);
  CHECK_TRUE(!old_session.open() || old_session.dial_count() != old_dial);
  LONGS_EQUAL(1, logs->count(log::Level::info, "reachable again"));
  exchange_ok(5, "after.example");
  CHECK_TRUE(server->served(static_cast<std::size_t>(carried_by("after.example"))));
}
