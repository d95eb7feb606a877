// The engine carries out the routing step: local answers never reach a
// pool, LAN zones go to their LAN group and nowhere else, and a home
// router that cannot answer costs a query nothing but its local answer.
#include <optional>
#include <vector>

#include "query/engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "block/table_builder.hpp"
#include "dns/wire.hpp"
#include "query/lan_forwarders.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using query::Engine;
using query::Protocol;
using upstream::Cause;

namespace {

constexpr std::uint16_t t_a = 1, t_aaaa = 28, t_ptr = 12;

dns::Bytes make_q(std::uint16_t id, const char* name, std::uint16_t qtype = t_a, std::optional<std::uint16_t> edns = {}) {
  return dns::make_query(id, *dns::name_from_text(name), qtype, edns);
}

route::Record rec(const char* line) {
  std::string why;
  auto r = route::parse_record(line, "test", &why);
  if (!r) FAIL(why.c_str());
  return *r;
}

struct Rig {
  test::FakeScheduler sched;
  test::FakeTransport* upstream = nullptr;
  test::FakeTransport* router = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<query::LanForwarders> lan;
  std::unique_ptr<Engine> engine;
  std::vector<std::optional<dns::Bytes>> replies;

  explicit Rig(bool lan_cache = false) {
    std::vector<upstream::EntrySpec> specs;
    auto t = std::make_unique<test::FakeTransport>();
    upstream = t.get();
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), upstream::PoolOptions{});
    query::LanOptions lo;
    lo.cache.max_bytes = lan_cache ? query::lan_cache_bytes : 0;
    lo.cache.clamp.max_negative = query::lan_max_negative_ttl;
    lan = std::make_unique<query::LanForwarders>(nullptr, sched, lo, [this](const net::Endpoint&) {
      auto f = std::make_unique<test::FakeTransport>();
      router = f.get();
      return f;
    });
    engine = std::make_unique<Engine>(sched, *pool, query::EngineOptions{5000ms});
    route::RouteInputs in;
    in.router = *net::parse_endpoint("192.168.1.1", 53, nullptr);
    in.records = {rec("nas.home.arpa. 300 IN A 192.168.1.20")};
    std::string why;
    auto table = route::RouteTable::build(std::move(in), &why);
    lan->adopt(*table, 5000ms);
    engine->set_routes(std::move(table), lan.get());
  }
  ~Rig() {
    engine.reset();
    lan.reset();
    pool.reset();
  }
  Engine::Result send(const dns::Bytes& pkt) {
    const std::size_t slot = replies.size();
    replies.emplace_back();
    return engine->submit(pkt, Protocol::udp, [this, slot](dns::Bytes&& b) { replies[slot] = std::move(b); });
  }
  std::uint64_t routed(route::RouteKind k) const { return engine->counters().routed[static_cast<std::size_t>(k)]; }
};

std::uint8_t rcode_of(const dns::Bytes& b) { return b[3] & 0x0F; }
std::uint16_t count(const dns::Bytes& b, std::size_t at) { return static_cast<std::uint16_t>((b[at] << 8) | b[at + 1]); }

}  // namespace

TEST_GROUP(EngineRoutes){};

TEST(EngineRoutes, LocalRecordsAreAnsweredAtOnceAndNeverForwarded) {
  Rig r;
  auto res = r.send(make_q(0x1234, "NAS.home.arpa"));
  CHECK(res.kind == Engine::Admission::answered);
  CHECK_EQUAL(0x1234, dns::get_id(res.reply));
  CHECK_EQUAL(0, rcode_of(res.reply));
  CHECK_EQUAL(1, count(res.reply, 6));  // one A record
  CHECK_EQUAL(0u, r.upstream->started());
  CHECK_EQUAL(1u, r.routed(route::RouteKind::records));
  CHECK_EQUAL(1u, r.engine->counters().replies_by_rcode[0][0]);
}

TEST(EngineRoutes, SpecialUseNamesAreAnsweredHere) {
  Rig r;
  auto inv = r.send(make_q(1, "x.invalid", t_a, 1232));
  CHECK(inv.kind == Engine::Admission::answered);
  CHECK_EQUAL(3, rcode_of(inv.reply));  // NXDOMAIN
  CHECK_EQUAL(1, count(inv.reply, 8));  // the SOA in authority
  auto lo = r.send(make_q(2, "localhost", t_aaaa));
  CHECK_EQUAL(0, rcode_of(lo.reply));
  CHECK_EQUAL(1, count(lo.reply, 6));
  auto ptr = r.send(make_q(3, "4.3.2.10.in-addr.arpa", t_ptr));
  CHECK_EQUAL(3, rcode_of(ptr.reply));
  CHECK_EQUAL(0u, r.upstream->started());
  CHECK_EQUAL(2u, r.routed(route::RouteKind::negative));
  CHECK_EQUAL(1u, r.routed(route::RouteKind::loopback));
}

TEST(EngineRoutes, LanZoneGoesToTheRouterOnly) {
  Rig r;
  auto res = r.send(make_q(9, "tv.lan"));
  CHECK(res.kind == Engine::Admission::forwarded);
  r.sched.run_ready();
  CHECK_EQUAL(1u, r.router->started());
  CHECK_EQUAL(0u, r.upstream->started());
  r.router->answer_oldest();
  r.sched.run_ready();
  CHECK_TRUE(r.replies[0].has_value());
  CHECK_EQUAL(9, dns::get_id(*r.replies[0]));
  CHECK_EQUAL(1u, r.routed(route::RouteKind::lan));
}

TEST(EngineRoutes, ARouterThatRefusesConnectionsGivesTheLocalAnswer) {
  Rig r;
  r.send(make_q(5, "tv.lan"));
  r.sched.run_ready();
  r.router->fail_oldest(Cause::connect_failed);
  r.sched.run_ready();
  CHECK_TRUE(r.replies[0].has_value());
  CHECK_EQUAL(3, rcode_of(*r.replies[0]));  // NXDOMAIN, not SERVFAIL
  CHECK_EQUAL(1u, r.engine->counters().lan_fallbacks);
  CHECK_EQUAL(0u, r.upstream->started());
  // Once in backoff, the next names are answered at once, without a wait.
  r.send(make_q(6, "other.lan"));
  r.sched.run_ready();
  r.router->fail_oldest(Cause::connect_failed);
  r.sched.run_ready();
  auto quick = r.send(make_q(7, "third.lan"));
  CHECK(quick.kind == Engine::Admission::answered);
  CHECK_EQUAL(3, rcode_of(quick.reply));
  CHECK_EQUAL(2u, r.router->started());  // the third never reached it
}

TEST(EngineRoutes, ARouterServfailFallsBackButItsNxdomainIsRelayed) {
  Rig r;
  r.send(make_q(5, "tv.lan"));
  r.sched.run_ready();
  r.router->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes a = q;
    a[2] |= 0x80;
    a[3] = static_cast<std::uint8_t>((a[3] & 0xF0) | 2);  // SERVFAIL
    return a;
  });
  r.sched.run_ready();
  CHECK_EQUAL(3, rcode_of(*r.replies[0]));
  CHECK_EQUAL(1u, r.engine->counters().lan_fallbacks);
}

TEST(EngineRoutes, WithoutARouteTableEverythingGoesUpstream) {
  Rig r;
  r.engine->set_routes(nullptr, nullptr);
  r.send(make_q(1, "x.invalid"));
  r.sched.run_ready();
  CHECK_EQUAL(1u, r.upstream->started());
}

namespace {
std::shared_ptr<const block::BlockTable> ads_list() {
  std::vector<block::ListSource> lists;
  lists.push_back({"ads.txt", false, std::make_shared<const std::string>("||ads.example^\n"), {}});
  auto r = block::build_table(lists);
  return r.table;
}
// The INFO-CODE of the reply's first Extended DNS Error option, if any.
std::optional<std::uint16_t> ede_of(const dns::Bytes& reply) {
  const auto l = dns::wire::scan(reply);
  if (!l.opt) return std::nullopt;
  std::optional<std::uint16_t> code;
  dns::wire::for_each_option(dns::ByteView(reply).subspan(l.opt->rdata, l.opt->rdlength),
                             [&code](const dns::wire::Option& o) {
                               if (o.code == dns::opt_extended_error && o.data.size() >= 2)
                                 code = dns::wire::load16(o.data, 0);
                             });
  return code;
}
}  // namespace

TEST(EngineRoutes, ABlockedNameIsAnsweredHereWithExtendedError15) {
  Rig r;
  query::BlockingPolicy p;
  p.table = ads_list();
  r.engine->set_blocking(p);
  auto res = r.send(make_q(1, "x.ads.example", t_a, 1232));
  CHECK(res.kind == Engine::Admission::answered);
  CHECK_EQUAL(3, rcode_of(res.reply));
  CHECK_EQUAL(dns::ede_blocked, ede_of(res.reply).value_or(0));
  // Without EDNS the client gets the answer without the option.
  auto plain = r.send(make_q(2, "y.ads.example"));
  CHECK_EQUAL(3, rcode_of(plain.reply));
  CHECK_FALSE(ede_of(plain.reply).has_value());
  CHECK_EQUAL(0u, r.upstream->started());
  CHECK_EQUAL(2u, r.routed(route::RouteKind::blocked));
  CHECK_EQUAL(2u, r.engine->counters().blocked_by_list[0]);
}

TEST(EngineRoutes, NullAndRefusedAnswers) {
  Rig r;
  query::BlockingPolicy p;
  p.table = ads_list();
  p.answer = route::BlockedAnswer::null;
  r.engine->set_blocking(p);
  auto a = r.send(make_q(1, "x.ads.example", t_a, 1232));
  CHECK_EQUAL(0, rcode_of(a.reply));
  CHECK_EQUAL(1, count(a.reply, 6));
  CHECK_EQUAL(dns::ede_blocked, ede_of(a.reply).value_or(0));
  auto mx = r.send(make_q(2, "x.ads.example", 15));
  CHECK_EQUAL(0, rcode_of(mx.reply));
  CHECK_EQUAL(0, count(mx.reply, 6));  // NODATA for other types
  p.answer = route::BlockedAnswer::refused;
  r.engine->set_blocking(p);
  CHECK_EQUAL(5, rcode_of(r.send(make_q(3, "x.ads.example")).reply));
}

TEST(EngineRoutes, AClientOutsideTheFilteredGroupsIsNotBlocked) {
  Rig r;
  query::BlockingPolicy p;
  p.table = ads_list();
  std::string why;
  p.groups = std::make_shared<const route::BlockingGroups>(
      std::vector<route::GroupRule>{{*server::parse_cidr("192.168.1.0/28", &why), false}});
  r.engine->set_blocking(p);
  sockaddr_in kid{};
  kid.sin_family = AF_INET;
  kid.sin_addr.s_addr = htonl(0xC0A80105);  // 192.168.1.5: in the unfiltered group
  r.replies.emplace_back();
  auto res = r.engine->submit(make_q(1, "x.ads.example"), Protocol::udp, [](dns::Bytes&&) {},
                              Engine::HitDelivery::from_loop, reinterpret_cast<const sockaddr*>(&kid));
  CHECK(res.kind == Engine::Admission::forwarded);
  sockaddr_in other = kid;
  other.sin_addr.s_addr = htonl(0xC0A80164);  // 192.168.1.100: filtered
  auto blocked = r.engine->submit(make_q(2, "x.ads.example"), Protocol::udp, [](dns::Bytes&&) {},
                                  Engine::HitDelivery::from_loop, reinterpret_cast<const sockaddr*>(&other));
  CHECK(blocked.kind == Engine::Admission::answered);
  CHECK_EQUAL(3, rcode_of(blocked.reply));
}
