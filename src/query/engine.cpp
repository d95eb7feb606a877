#include "query/engine.hpp"

#include <algorithm>

#include "log/log.hpp"
#include "route/local_reply.hpp"

namespace nxdns::query {

const char* describe(Protocol p) { return p == Protocol::udp ? "udp" : "tcp"; }

Engine::Engine(loop::Scheduler& sched, upstream::Pool& pool, EngineOptions opts, cache::CachingPool* cache)
    : sched_(sched), pool_(pool), opts_(opts), cache_(cache), ready_timer_(sched) {}

std::uint64_t Engine::forward(const ClientQuery& cq, loop::TimePoint deadline, upstream::Pool::Done done) {
  cache::CachingPool* cache = cq.lan ? cq.lan->cache.get() : cache_;
  upstream::Pool& pool = cq.lan ? *cq.lan->pool : pool_;
  // A cache flight may serve clients that arrive later than this one, so it
  // bounds its exchange by its own budget (CachingOptions::exchange_budget).
  return cache ? cache->submit(cq.parsed, cq.raw, std::move(done)) : pool.submit(cq.raw, deadline, std::move(done));
}

void Engine::cancel_forward(const ClientQuery& cq) {
  cache::CachingPool* cache = cq.lan ? cq.lan->cache.get() : cache_;
  if (cache) {
    cache->cancel(cq.ticket);
  } else {
    (cq.lan ? *cq.lan->pool : pool_).cancel(cq.ticket);
  }
}

route::Route Engine::route_for(dns::ByteView qname, std::uint16_t qtype, const sockaddr* client) const {
  if (!routes_) return {};
  route::BlockingInput b;
  if (blocking_.table) {
    b.table = blocking_.table.get();
    b.applies = !blocking_.groups || blocking_.groups->applies(client);
  }
  return route::decide_route(*routes_, qname, qtype, [this](std::size_t g) { return lan_ && lan_->available(g); }, b);
}

void Engine::set_blocking(BlockingPolicy p) {
  if (p.table != blocking_.table) {
    counters_.blocked_by_list.assign(p.table ? p.table->lists().size() : 0, 0);
  }
  blocking_ = std::move(p);
}

dns::Bytes Engine::local_reply(dns::ByteView packet, const dns::Query& q, const route::Route& r) {
  const dns::Bytes& qname = q.question.name;
  // A zone's SOA names the zone; records outside any zone answer NODATA
  // with their own name as the authority.
  const dns::ByteView apex = r.zone ? dns::ByteView(r.zone->apex) : dns::ByteView(qname);
  const std::uint32_t negative_ttl = r.zone ? r.zone->negative_ttl : route::hosts_ttl;
  dns::Bytes reply;
  switch (r.kind) {
    case route::RouteKind::blocked: {
      std::string text;
      if (blocking_.table && r.block.list < blocking_.table->lists().size()) {
        text = "blocked by " + blocking_.table->lists()[r.block.list].name;
      }
      reply = route::make_blocked_reply(packet, q, blocking_.answer, text);
      break;
    }
    case route::RouteKind::records:
      reply = route::make_records_reply(packet, q, r.lookup, apex, negative_ttl);
      break;
    case route::RouteKind::loopback:
      reply = route::make_loopback_reply(packet, q, apex, negative_ttl);
      break;
    default:
      reply = route::make_negative_reply(packet, q, r.rcode, apex, negative_ttl);
      break;
  }
  return reply;
}

Engine::~Engine() { cancel_all(); }

void Engine::count_reply(Protocol proto, dns::ByteView reply) {
  const auto rcode = dns::reply_rcode(reply);
  if (!rcode) return;
  const auto p = static_cast<std::size_t>(proto);
  ++counters_.replies_by_rcode[p][rcode_bucket(*rcode)];
}

dns::Bytes Engine::for_client(dns::ByteView reply, dns::ByteView raw_query, const dns::Query& q, Protocol proto) {
  if (auto out = dns::answer_for_client(reply, q, dns::client_link(q, proto == Protocol::udp))) return std::move(*out);
  ++counters_.bad_upstream_answer;
  log::warn("query: an answer (", reply.size(), " bytes) cannot be rewritten for the client; SERVFAIL");
  // Our own SERVFAIL always rewrites (a header, the question, our OPT).
  auto servfail = dns::make_error_reply(raw_query, q, dns::Rcode::servfail);
  auto out = dns::answer_for_client(servfail, q, dns::client_link(q, proto == Protocol::udp));
  return out ? std::move(*out) : servfail;
}

dns::Bytes Engine::refuse(dns::ByteView packet, Protocol proto) {
  auto parsed = dns::parse_query(packet);
  if (!parsed.query) return {};
  auto reply = for_client(dns::make_error_reply(packet, *parsed.query, dns::Rcode::refused), packet, *parsed.query, proto);
  count_reply(proto, reply);
  return reply;
}

Engine::Result Engine::submit(dns::ByteView packet, Protocol proto, ReplyFn reply, HitDelivery hits,
                              const sockaddr* client) {
  Result res;
  const auto p = static_cast<std::size_t>(proto);
  auto parsed = dns::parse_query(packet);
  if (!parsed.query) {
    res.why = parsed.error;
    if (parsed.error == dns::ParseError::bad_opcode) {
      res.reply = dns::make_notimp(packet);
    } else if (parsed.header_readable) {
      res.reply = dns::make_formerr(packet);
    }
    if (!res.reply.empty()) {
      res.kind = Admission::answered;
      ++counters_.formerr_unparseable[p];
      count_reply(proto, res.reply);
    } else {
      res.kind = Admission::dropped;
      ++counters_.dropped_unreadable[p];
    }
    log::debug("query: malformed ", describe(proto), " packet (", packet.size(), " bytes): ", dns::describe(parsed.error));
    return res;
  }

  if (const auto rcode = dns::local_answer(*parsed.query)) {
    res.kind = Admission::answered;
    res.reply = for_client(dns::make_error_reply(packet, *parsed.query, *rcode), packet, *parsed.query, proto);
    count_reply(proto, res.reply);
    log::debug("query: answered locally (", describe(proto), ", qtype ", parsed.query->question.qtype, ", EDNS version ",
               unsigned{parsed.query->edns.version}, ")");
    return res;
  }

  // The routing step: one decision per query, before any cache or pool.
  LanGroupRuntime* lan = nullptr;
  const route::ZoneRoute* zone = nullptr;
  if (routes_) {
    const route::Route r = route_for(parsed.query->question.name, parsed.query->question.qtype, client);
    ++counters_.routed[static_cast<std::size_t>(r.kind)];
    if (r.kind == route::RouteKind::blocked && r.block.list < counters_.blocked_by_list.size()) {
      ++counters_.blocked_by_list[r.block.list];
    } else if (r.block.verdict == block::Verdict::allowed) {
      ++counters_.allowed_by_rule;
    }
    if (r.kind == route::RouteKind::lan) {
      lan = &lan_->group(r.zone->lan_group);
      zone = r.zone;
    } else if (r.kind != route::RouteKind::upstream) {
      res.kind = Admission::answered;
      res.reply = for_client(local_reply(packet, *parsed.query, r), packet, *parsed.query, proto);
      count_reply(proto, res.reply);
      return res;
    }
  }

  cache::CachingPool* const cache = lan ? lan->cache.get() : cache_;
  if (cache) {
    // The hit path: one parse (above), one lookup, and one copy that is
    // already the client's answer (cache::client_answer: ID, question bytes,
    // aged TTLs, the client-facing OPT found when the answer was stored, UDP
    // truncation), over an answer its transport validated before it was
    // stored. An answer without that form comes back rewritten and goes
    // through for_client; anything else (no fresh entry, an answer that does
    // not rewrite) takes forward() below.
    const dns::ClientLink link = dns::client_link(*parsed.query, proto == Protocol::udp);
    std::optional<dns::Bytes> answer;
    std::optional<std::uint16_t> rcode;
    if (auto hit = cache->hit_now(*parsed.query, packet, link)) {
      rcode = hit->rcode;
      answer = rcode ? std::move(hit->bytes) : for_client(hit->bytes, packet, *parsed.query, proto);
    }
    if (answer) {
      if (hits == HitDelivery::now) {
        res.kind = Admission::answered;
        res.reply = std::move(*answer);
        if (rcode) {
          ++counters_.replies_by_rcode[p][rcode_bucket(*rcode)];
        } else {
          count_reply(proto, res.reply);
        }
        return res;
      }
      const QueryId id = next_id_++;
      ready_.push_back(ReadyReply{id, proto, std::move(reply), std::move(*answer)});
      if (!ready_timer_.armed()) ready_timer_.arm(loop::Duration::zero(), [this] { deliver_ready(); });
      res.kind = Admission::forwarded;
      res.id = id;
      return res;
    }
  }

  const QueryId id = next_id_++;
  ClientQuery& cq = live_.try_emplace(id, sched_, dns::Bytes(packet.begin(), packet.end()), std::move(*parsed.query), proto,
                                      std::move(reply))
                        .first->second;
  if (lan) {
    cq.lan = lan;
    cq.table = routes_;
    cq.zone = zone;
  }
  cq.budget.arm(opts_.total_budget, [this, id] {
    auto it = live_.find(id);
    if (it == live_.end()) return;
    ClientQuery& c = it->second;
    // Leaves the entry's queue or abandons the attempt; either way the pool
    // accounts for it (a waiter that burned the budget still counts).
    cancel_forward(c);
    ++counters_.budget_exhausted;
    complete(id, dns::make_error_reply(c.raw, c.parsed, dns::Rcode::servfail));
  });
  // The pool learns the same deadline, so that no attempt outlives the budget
  // and an attempt timeout can be followed by one more while time is left.
  // An outcome with error_answer set (every upstream answered SERVFAIL,
  // REFUSED, ...) is ok: it is an upstream's answer and takes the same path
  // to the client as any other.
  const loop::TimePoint deadline = sched_.now() + opts_.total_budget;
  cq.ticket = forward(cq, deadline, [this, id](upstream::PoolOutcome&& out) {
    auto it = live_.find(id);
    if (it == live_.end()) return;
    ClientQuery& c = it->second;
    if (c.zone && c.zone->fallback_local && (!out.ok || out.error_answer)) {
      // The LAN server could not answer a name that exists nowhere else:
      // its zone's local negative answer beats a SERVFAIL.
      ++counters_.lan_fallbacks;
      const route::Route r = route::fallback_route(*c.table, *c.zone, c.parsed.question.name);
      complete(id, local_reply(c.raw, c.parsed, r));
      return;
    }
    if (out.ok) {
      // An answer to exactly this client's query: validated against its
      // question by the transport that received it, with the client's ID
      // (upstream::PoolOutcome; the pool got the client's own query, the
      // cache rewrites for each client). Not checked again here.
      // complete() rewrites it for the client (OPT, truncation).
      complete(id, std::move(out.response));
      return;
    }
    // An answer that could not be used (its transport found it does not
    // answer the query, or the cache that its records do not walk) is told
    // apart from upstreams that gave none.
    ++(out.cause == upstream::Cause::bad_response ? counters_.bad_upstream_answer : counters_.upstream_failed);
    log::debug("query: every attempt failed (", out.attempts, "), last: upstream ", out.entry_index, " ",
               upstream::describe(out.cause), ": ", out.detail);
    complete(id, dns::make_error_reply(c.raw, c.parsed, dns::Rcode::servfail));
  });
  res.kind = Admission::forwarded;
  res.id = id;
  return res;
}

void Engine::complete(QueryId id, dns::Bytes&& reply) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  auto owned = live_.extract(it);  // the query leaves the table before its reply runs
  ClientQuery& q = owned.mapped();
  q.budget.disarm();
  dns::Bytes answer = for_client(reply, q.raw, q.parsed, q.proto);
  count_reply(q.proto, answer);
  q.reply(std::move(answer));
}

void Engine::deliver_ready() {
  delivering_.swap(ready_);
  for (ReadyReply& r : delivering_) {
    count_reply(r.proto, r.answer);
    r.reply(std::move(r.answer));
  }
  delivering_.clear();
}

void Engine::abandon(QueryId id) {
  auto ready = std::find_if(ready_.begin(), ready_.end(), [id](const ReadyReply& r) { return r.id == id; });
  if (ready != ready_.end()) {
    ready_.erase(ready);
    ++counters_.abandoned;
    return;
  }
  auto it = live_.find(id);
  if (it == live_.end()) return;
  auto owned = live_.extract(it);
  cancel_forward(owned.mapped());
  ++counters_.abandoned;
}

void Engine::fail_all() {
  // Hits already have their answer: deliver it rather than a SERVFAIL.
  ready_timer_.disarm();
  deliver_ready();
  std::vector<QueryId> ids;
  ids.reserve(live_.size());
  for (auto& [id, q] : live_) ids.push_back(id);
  for (QueryId id : ids) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    cancel_forward(it->second);
    complete(id, dns::make_error_reply(it->second.raw, it->second.parsed, dns::Rcode::servfail));
  }
}

void Engine::cancel_all() {
  ready_timer_.disarm();
  ready_.clear();
  for (auto& [id, q] : live_) cancel_forward(q);
  live_.clear();
}

}  // namespace nxdns::query
