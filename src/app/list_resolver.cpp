#include "app/list_resolver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <memory>

#include "dns/wire.hpp"
#include "net/uri_chars.hpp"

namespace nxdns::app {

namespace {
constexpr std::uint16_t qtype_a = 1, qtype_aaaa = 28;
}  // namespace

std::vector<net::Endpoint> answer_addresses(dns::ByteView reply, std::uint16_t qtype) {
  namespace w = dns::wire;
  std::vector<net::Endpoint> out;
  const auto h = dns::parse_header(reply);
  if (!h || !h->qr() || h->rcode() != 0) return out;
  const w::Layout l = w::scan(reply);
  if (l.error != dns::ParseError::none) return out;
  std::size_t off = l.questions_end;
  for (unsigned i = 0; i < h->ancount; ++i) {
    w::Rr rr;
    if (w::read_rr(reply, off, rr) != dns::ParseError::none) break;
    off = rr.end;
    if (rr.type != qtype) continue;
    if (qtype == qtype_a && rr.rdlength == 4) {
      sockaddr_in sin{};
      sin.sin_family = AF_INET;
      sin.sin_port = htons(net::https_default_port);
      std::memcpy(&sin.sin_addr, reply.data() + rr.rdata, 4);
      net::Endpoint e;
      std::memcpy(&e.addr, &sin, sizeof sin);
      e.len = sizeof sin;
      out.push_back(e);
    } else if (qtype == qtype_aaaa && rr.rdlength == 16) {
      sockaddr_in6 sin6{};
      sin6.sin6_family = AF_INET6;
      sin6.sin6_port = htons(net::https_default_port);
      std::memcpy(&sin6.sin6_addr, reply.data() + rr.rdata, 16);
      net::Endpoint e;
      std::memcpy(&e.addr, &sin6, sizeof sin6);
      e.len = sizeof sin6;
      out.push_back(e);
    }
  }
  return out;
}

namespace {

using Done = std::function<void(std::vector<net::Endpoint>)>;

void ask(query::Engine& engine, const dns::Bytes& name, std::uint16_t qtype, Done done);

// A first; AAAA when the name has no IPv4 address.
void answered(query::Engine& engine, const dns::Bytes& name, std::uint16_t qtype, const Done& done,
              dns::ByteView reply) {
  auto found = answer_addresses(reply, qtype);
  if (found.empty() && qtype == qtype_a) {
    ask(engine, name, qtype_aaaa, done);
    return;
  }
  done(std::move(found));
}

void ask(query::Engine& engine, const dns::Bytes& name, std::uint16_t qtype, Done done) {
  const dns::Bytes q = dns::make_query(0, name, qtype, dns::max_udp_limit);
  // As a TCP client: the engine never truncates the answer.
  auto res = engine.submit(q, query::Protocol::tcp, [&engine, name, qtype, done](dns::Bytes&& reply) {
    answered(engine, name, qtype, done, reply);
  });
  if (res.kind == query::Engine::Admission::answered) {
    answered(engine, name, qtype, done, res.reply);
  } else if (res.kind == query::Engine::Admission::dropped) {
    done({});
  }
}

}  // namespace

block::ListResolver engine_resolver(query::Engine& engine) {
  return [&engine](const std::string& host, std::function<void(std::vector<net::Endpoint>)> done) {
    // An address literal needs no DNS.
    if (auto literal = net::make_endpoint(host, net::https_default_port)) {
      done({*literal});
      return;
    }
    const auto wire = dns::name_from_text(host);
    if (!wire) {
      done({});
      return;
    }
    ask(engine, *wire, qtype_a, std::move(done));
  };
}

}  // namespace nxdns::app
