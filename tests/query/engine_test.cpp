#include <optional>
#include <vector>

#include "query/engine.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using query::Engine;
using query::Protocol;
using upstream::Cause;

namespace {

dns::Bytes make_q(std::uint16_t id, const char* name = "www.example.test", std::optional<std::uint16_t> edns = {}) {
  auto wire = dns::name_from_text(name);
  return dns::make_query(id, *wire, 1, edns);
}

struct Rig {
  test::FakeScheduler sched;
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<Engine> engine;
  std::vector<std::optional<dns::Bytes>> replies;

  explicit Rig(loop::Duration attempt = 2000ms, loop::Duration total = 5000ms) {
    std::vector<upstream::EntrySpec> specs;
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    upstream::PoolOptions po;
    po.attempt_budget = attempt;
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), po);
    engine = std::make_unique<Engine>(sched, *pool, query::EngineOptions{total});
  }
  ~Rig() {
    engine.reset();
    pool.reset();
  }
  Engine::Result send(const dns::Bytes& pkt, Protocol p = Protocol::udp) {
    const std::size_t slot = replies.size();
    replies.emplace_back();
    return engine->submit(pkt, p, [this, slot](dns::Bytes&& b) { replies[slot] = std::move(b); });
  }
};

std::uint8_t rcode_of(const dns::Bytes& b) { return b[3] & 0x0F; }

}  // namespace

TEST_GROUP(Engine){};

TEST(Engine, ForwardsAQueryAndRelaysTheAnswer) {
  Rig r;
  auto res = r.send(make_q(0xBEEF));
  CHECK(res.kind == Engine::Admission::forwarded);
  CHECK_EQUAL(1u, r.fake->live());
  r.fake->answer_oldest();
  r.sched.run_ready();
  CHECK_TRUE(r.replies[0].has_value());
  CHECK_EQUAL(0xBEEF, dns::get_id(*r.replies[0]));
  CHECK_EQUAL(0, rcode_of(*r.replies[0]));
  CHECK_EQUAL(1u, r.engine->counters().replies_by_rcode[0][0]);
  CHECK_EQUAL(0u, r.engine->in_flight());
}

TEST(Engine, TotalBudgetGivesServfailExactlyAtTheBudget) {
  Rig r(10s, 5s);  // the attempt would outlast the total budget
  r.send(make_q(7));
  r.sched.advance(4999ms);
  CHECK_FALSE(r.replies[0].has_value());
  r.sched.advance(1ms);
  CHECK_TRUE(r.replies[0].has_value());
  CHECK_EQUAL(2, rcode_of(*r.replies[0]));
  CHECK_EQUAL(7, dns::get_id(*r.replies[0]));
  CHECK_EQUAL(1u, r.fake->cancelled());  // the stuck attempt was abandoned
  CHECK_EQUAL(1u, r.engine->counters().budget_exhausted);
}

TEST(Engine, TotalBudgetCoversTimeSpentQueued) {
  Rig r(10s, 5s);
  for (std::size_t i = 0; i < upstream::max_in_flight_per_entry; ++i) r.send(make_q(static_cast<std::uint16_t>(i)));
  r.send(make_q(999));  // queues behind 64 stalled exchanges
  CHECK_EQUAL(1u, r.pool->snapshot()[0].queue_depth);
  r.sched.advance(5s);
  auto& waiter = r.replies.back();
  CHECK_TRUE(waiter.has_value());
  CHECK_EQUAL(2, rcode_of(*waiter));
  auto s = r.pool->snapshot()[0];
  CHECK_EQUAL(0u, s.queue_depth);
  CHECK_EQUAL(1u, s.queued_total);
  DOUBLES_EQUAL(5.0, s.queued_seconds_total, 1e-9);
}

TEST(Engine, FailedUpstreamGivesServfailEchoingTheQuestion) {
  Rig r;
  auto q = make_q(0x0102);
  r.send(q);
  r.fake->fail_oldest(Cause::connect_failed);
  r.sched.run_ready();
  auto& rep = *r.replies[0];
  CHECK_EQUAL(2, rcode_of(rep));
  auto parsed = dns::parse_query(q);
  CHECK(dns::validate_response(*parsed.query, rep) == dns::ResponseError::none);
  CHECK_EQUAL(1u, r.engine->counters().upstream_failed);
}

TEST(Engine, MalformedWithReadableHeaderGetsFormerrNow) {
  Rig r;
  dns::Bytes junk{0xAB, 0xCD, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x05, 'a'};
  auto res = r.send(junk);
  CHECK(res.kind == Engine::Admission::answered);
  CHECK_EQUAL(1, rcode_of(res.reply));
  CHECK_EQUAL(0xABCD, dns::get_id(res.reply));
  CHECK_EQUAL(0u, r.fake->started());
  CHECK_EQUAL(1u, r.engine->counters().formerr_unparseable[0]);
}

TEST(Engine, PacketShorterThanAHeaderIsDroppedAndCounted) {
  Rig r;
  dns::Bytes junk{0x01, 0x02, 0x03};
  auto res = r.send(junk, Protocol::tcp);
  CHECK(res.kind == Engine::Admission::dropped);
  CHECK_TRUE(res.reply.empty());
  CHECK_EQUAL(1u, r.engine->counters().dropped_unreadable[1]);
}

TEST(Engine, LargeAnswerIsTruncatedForUdpButNotForTcp) {
  auto big = [](const dns::Bytes& q) {
    dns::Bytes a = q;
    a[2] |= 0x80;
    a[7] = 1;  // ancount = 1
    // one A-ish record with a 700-byte rdata: name pointer to the question
    dns::Bytes rr{0xC0, 0x0C, 0x00, 0x10, 0x00, 0x01, 0, 0, 0, 60, 0x02, 0xBC};
    a.insert(a.end(), rr.begin(), rr.end());
    a.insert(a.end(), 700, 'x');
    return a;
  };
  Rig r;
  r.send(make_q(1));
  r.send(make_q(2), Protocol::tcp);
  r.fake->respond_oldest(big);
  r.fake->respond_oldest(big);
  r.sched.run_ready();
  auto& udp = *r.replies[0];
  auto& tcp = *r.replies[1];
  CHECK_TRUE(udp.size() <= 512);
  CHECK_TRUE(dns::parse_header(udp)->tc());
  CHECK_FALSE(dns::parse_header(tcp)->tc());
  CHECK_TRUE(tcp.size() > 700);
}

TEST(Engine, UdpLimitFollowsTheClientsEdnsSize) {
  Rig r;
  r.send(make_q(1, "a.test", 1232));
  r.fake->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes a = q;
    a[2] |= 0x80;
    return a;
  });
  r.sched.run_ready();
  CHECK_FALSE(dns::parse_header(*r.replies[0])->tc());
}

// A mismatched answer never reaches the engine: its transport refuses it
// (the transports' tests, integration.lying_upstreams). What the engine sees
// is the failed attempt, counted as the bad answer it was.
TEST(Engine, AnswerItsTransportRefusedIsServfailCountedAsABadAnswer) {
  Rig r;
  r.send(make_q(5, "asked.test"));
  r.fake->fail_oldest(Cause::bad_response);
  r.sched.run_ready();
  CHECK_EQUAL(2, rcode_of(*r.replies[0]));
  CHECK_EQUAL(5, dns::get_id(*r.replies[0]));
  CHECK_EQUAL(1u, r.engine->counters().bad_upstream_answer);
  CHECK_EQUAL(0u, r.engine->counters().upstream_failed);
}

TEST(Engine, AbandonedQueryGetsNoReplyAndFreesItsAttempt) {
  Rig r;
  auto res = r.send(make_q(3), Protocol::tcp);
  r.engine->abandon(res.id);
  CHECK_EQUAL(1u, r.fake->cancelled());
  r.sched.advance(10s);
  CHECK_FALSE(r.replies[0].has_value());
  CHECK_EQUAL(0u, r.engine->in_flight());
}

TEST(Engine, FailAllAnswersEveryPendingQueryWithServfail) {
  Rig r;
  r.send(make_q(1));
  r.send(make_q(2), Protocol::tcp);
  r.engine->fail_all();
  CHECK_EQUAL(2, rcode_of(*r.replies[0]));
  CHECK_EQUAL(2, rcode_of(*r.replies[1]));
  CHECK_EQUAL(0u, r.engine->in_flight());
  CHECK_EQUAL(0u, r.fake->live());
}

TEST(Engine, RefuseEchoesTheQuestionWithRefused) {
  Rig r;
  auto rep = r.engine->refuse(make_q(9), Protocol::udp);
  CHECK_EQUAL(5, rcode_of(rep));
  CHECK_EQUAL(9, dns::get_id(rep));
  CHECK_EQUAL(1u, r.engine->counters().replies_by_rcode[0][5]);
}

// --- Hop-by-hop EDNS, local answers, size cap ---

namespace {

// The client's query as an answer (QR set) with the given OPT appended as
// the only additional record (any OPT the query had is replaced).
dns::Bytes answer_with_opt(const dns::Bytes& q, const dns::Bytes& opt) {
  auto parsed = dns::parse_query(q);
  dns::Bytes a(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(parsed.query->question_end));
  a[2] |= 0x80;
  a[10] = 0;
  a[11] = 1;
  a.insert(a.end(), opt.begin(), opt.end());
  return a;
}
// OPT: payload 4096, ttl as given, one keepalive and one padding option.
dns::Bytes upstream_opt(std::uint32_t ttl) {
  dns::Bytes o{0, 0, 41, 0x10, 0x00};
  for (int s = 24; s >= 0; s -= 8) o.push_back(static_cast<std::uint8_t>(ttl >> s));
  const dns::Bytes rdata{0, 11, 0, 2, 0, 100, 0, 12, 0, 3, 0, 0, 0};
  o.push_back(0);
  o.push_back(static_cast<std::uint8_t>(rdata.size()));
  o.insert(o.end(), rdata.begin(), rdata.end());
  return o;
}
std::uint16_t arcount_of(const dns::Bytes& b) { return static_cast<std::uint16_t>((b[10] << 8) | b[11]); }

}  // namespace

TEST(Engine, ClientWithoutEdnsNeverReceivesTheUpstreamsOpt) {
  Rig r;
  r.send(make_q(1, "a.test"));
  r.send(make_q(2, "b.test"), Protocol::tcp);
  for (int i = 0; i < 2; ++i)
    r.fake->respond_oldest([](const dns::Bytes& q) { return answer_with_opt(q, upstream_opt(0)); });
  r.sched.run_ready();
  for (int i = 0; i < 2; ++i) {
    CHECK_EQUAL(0, rcode_of(*r.replies[i]));
    CHECK_EQUAL(0, arcount_of(*r.replies[i]));
  }
}

TEST(Engine, EdnsClientReceivesOurOptWithoutHopByHopOptions) {
  Rig r;
  r.send(make_q(1, "a.test", 4096));
  r.fake->respond_oldest([](const dns::Bytes& q) { return answer_with_opt(q, upstream_opt(0x8000)); });
  r.sched.run_ready();
  const dns::Bytes& rep = *r.replies[0];
  CHECK_EQUAL(1, arcount_of(rep));
  CHECK_FALSE(dns::edns_tcp_keepalive(rep).has_value());
  // Ours: root, OPT, payload 1232, ttl DO only, no options.
  const dns::Bytes ours{0, 0, 41, 0x04, 0xD0, 0, 0, 0x80, 0, 0, 0};
  CHECK_EQUAL(ours.size(), rep.size() - dns::parse_query(make_q(1, "a.test")).query->question_end);
  MEMCMP_EQUAL(ours.data(), rep.data() + rep.size() - ours.size(), ours.size());
}

TEST(Engine, TruncatedReplyToClientWithoutEdnsHasNoOpt) {
  Rig r;
  r.send(make_q(1, "a.test"));
  r.fake->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes a = answer_with_opt(q, upstream_opt(0));
    // 40 A records before the OPT: far over 512.
    dns::Bytes records;
    for (int i = 0; i < 40; ++i) records.insert(records.end(), {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1});
    auto parsed = dns::parse_query(q);
    a.insert(a.begin() + static_cast<std::ptrdiff_t>(parsed.query->question_end), records.begin(), records.end());
    a[7] = 40;
    return a;
  });
  r.sched.run_ready();
  const dns::Bytes& rep = *r.replies[0];
  CHECK_TRUE(dns::parse_header(rep)->tc());
  CHECK_EQUAL(0, arcount_of(rep));
  CHECK_TRUE(rep.size() <= 512);
}

TEST(Engine, UnrewritableAnswerBecomesServfail) {
  Rig r;
  r.send(make_q(1, "a.test", 1232));
  r.fake->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes a = answer_with_opt(q, upstream_opt(0));
    const dns::Bytes second = upstream_opt(0);
    a.insert(a.end(), second.begin(), second.end());
    a[11] = 2;  // two OPT records (RFC 6891 §6.1.1 allows one)
    return a;
  });
  r.sched.run_ready();
  CHECK_EQUAL(2, rcode_of(*r.replies[0]));
  CHECK_EQUAL(1, arcount_of(*r.replies[0]));
  CHECK_EQUAL(1u, r.engine->counters().bad_upstream_answer);
}

TEST(Engine, ExtendedRcodeIsCountedWithItsTwelveBits) {
  Rig r;
  r.send(make_q(1, "a.test", 1232));
  r.fake->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes a = answer_with_opt(q, upstream_opt(0x01000000));  // ext 1, header 7: BADCOOKIE (23)
    a[3] = static_cast<std::uint8_t>((a[3] & 0xF0) | 7);
    return a;
  });
  r.sched.run_ready();
  CHECK_EQUAL(23, *dns::reply_rcode(*r.replies[0]));
  CHECK_EQUAL(1u, r.engine->counters().replies_by_rcode[0][23]);
  CHECK_EQUAL(0u, r.engine->counters().replies_by_rcode[0][7]);
}

TEST(Engine, EdnsVersionOneGetsBadversLocally) {
  Rig r;
  dns::Bytes q = make_q(0x1111, "v1.test", 1232);
  q[q.size() - 5] = 1;  // OPT TTL: ext-rcode, VERSION, flags; then RDLENGTH
  for (Protocol p : {Protocol::udp, Protocol::tcp}) {
    auto res = r.send(q, p);
    CHECK(res.kind == Engine::Admission::answered);
    CHECK_EQUAL(16, *dns::reply_rcode(res.reply));
    CHECK_EQUAL(0, rcode_of(res.reply));
    CHECK_EQUAL(1u, r.engine->counters().replies_by_rcode[static_cast<std::size_t>(p)][16]);
    CHECK_EQUAL(0u, r.engine->counters().replies_by_rcode[static_cast<std::size_t>(p)][0]);
  }
  CHECK_EQUAL(0u, r.fake->started());
}

TEST(Engine, ZoneTransfersAreRefusedLocally) {
  Rig r;
  for (std::uint16_t qtype : {dns::type_axfr, dns::type_ixfr}) {
    for (Protocol p : {Protocol::udp, Protocol::tcp}) {
      auto res = r.send(dns::make_query(4, *dns::name_from_text("zone.test"), qtype, std::nullopt), p);
      CHECK(res.kind == Engine::Admission::answered);
      CHECK_EQUAL(5, rcode_of(res.reply));
      CHECK_EQUAL(4, dns::get_id(res.reply));
    }
  }
  CHECK_EQUAL(0u, r.fake->started());
  // ANY is forwarded (RFC 8482: the upstream decides how minimal).
  auto any = r.send(dns::make_query(5, *dns::name_from_text("zone.test"), dns::type_any, std::nullopt));
  CHECK(any.kind == Engine::Admission::forwarded);
}

TEST(Engine, OddQueriesAreAnsweredLocallyEchoingCd) {
  // Each, forwarded, would come back as an error that counts against an
  // upstream's health (real resolvers answer REFUSED or FORMERR).
  struct Row {
    std::uint16_t qtype, qclass, flags;
    std::uint8_t rcode;
  };
  const Row rows[] = {
      {16, 3, 0x0110, 5},    // version.bind CH TXT, CD
      {1, 4, 0x0100, 5},     // HS
      {250, 1, 0x0110, 1},   // TSIG
      {249, 1, 0x0100, 1},   // TKEY
      {254, 1, 0x0100, 1},   // MAILA
      {41, 1, 0x0100, 1},    // OPT
      {1, 1, 0x0310, 1},     // TC set in a query
  };
  Rig r;
  for (const Row& row : rows) {
    dns::Bytes q = dns::make_query(9, *dns::name_from_text("version.bind"), row.qtype, std::uint16_t{1232});
    q[2] = static_cast<std::uint8_t>(row.flags >> 8);
    q[3] = static_cast<std::uint8_t>(row.flags & 0xFF);
    q[q.size() - 13] = static_cast<std::uint8_t>(row.qclass >> 8);  // the question's class, before the 11-octet OPT
    q[q.size() - 12] = static_cast<std::uint8_t>(row.qclass & 0xFF);
    for (Protocol p : {Protocol::udp, Protocol::tcp}) {
      auto res = r.send(q, p);
      CHECK(res.kind == Engine::Admission::answered);
      CHECK_EQUAL(row.rcode, rcode_of(res.reply));
      CHECK_EQUAL(row.flags & 0x0010, res.reply[3] & 0x10);  // CD echoed (RFC 4035 §3.1.6)
      CHECK_EQUAL(0, res.reply[2] & 0x02);                    // never TC
    }
  }
  CHECK_EQUAL(0u, r.fake->started());
}

TEST(Engine, ForwardedAnswerCarriesTheClientsRdAndCd) {
  // The upstream answered our query (RD and AD set); the client asked with
  // RD clear and CD set (dig +norec +cd), and neither AD nor DO.
  Rig r;
  dns::Bytes q = make_q(0x0D0D);
  q[2] = 0x00;
  q[3] = 0x10;
  r.send(q);
  r.fake->respond_oldest([](const dns::Bytes& sent) {
    dns::Bytes a = sent;
    a[2] = 0x81;
    a[3] = 0xA0;
    return a;
  });
  r.sched.run_ready();
  CHECK_TRUE(r.replies[0].has_value());
  CHECK_EQUAL(0x80, (*r.replies[0])[2]);  // QR, RD clear like the query
  CHECK_EQUAL(0x90, (*r.replies[0])[3]);  // RA, CD; AD cleared: not asked for
}

TEST(Engine, OtherOpcodesGetNotimpNotFormerr) {
  Rig r;
  for (std::uint8_t opcode : {1, 2, 4, 5}) {
    dns::Bytes q = make_q(6, "zone.test");
    q[2] = static_cast<std::uint8_t>((q[2] & 0x87) | (opcode << 3));
    auto res = r.send(q, Protocol::udp);
    CHECK(res.kind == Engine::Admission::answered);
    CHECK_EQUAL(4, rcode_of(res.reply));
    CHECK_EQUAL(opcode, (res.reply[2] >> 3) & 0xF);
  }
  CHECK_EQUAL(0u, r.fake->started());
  CHECK_EQUAL(4u, r.engine->counters().replies_by_rcode[0][4]);
}

TEST(Engine, QueryOverTheSizeCapIsNeverForwarded) {
  Rig r;
  dns::Bytes q = make_q(8, "big.test", 1232);
  // Grow the OPT's RDATA with one option until the message is over the cap.
  const std::size_t data = dns::max_client_query + 1 - q.size() - 4;
  q[q.size() - 2] = static_cast<std::uint8_t>((data + 4) >> 8);
  q[q.size() - 1] = static_cast<std::uint8_t>((data + 4) & 0xFF);
  q.insert(q.end(), {0xFD, 0xE9, static_cast<std::uint8_t>(data >> 8), static_cast<std::uint8_t>(data & 0xFF)});
  q.insert(q.end(), data, 0);
  CHECK_EQUAL(dns::max_client_query + 1, q.size());
  auto res = r.send(q, Protocol::udp);
  CHECK(res.kind == Engine::Admission::answered);
  CHECK_EQUAL(1, rcode_of(res.reply));
  CHECK_EQUAL(0u, r.fake->started());
  CHECK_EQUAL(1u, r.engine->counters().formerr_unparseable[0]);
}
