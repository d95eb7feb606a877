// libFuzzer target for the household's own records: arbitrary bytes as a
// hosts file and, line by line, as static records; what parses is built
// into a LocalRecords set, looked up, answered and passed to a client.
//
// The contract under test: each parser either returns records that are
// well-formed (lower-case complete owner names, RDATA that walks for its
// type, TTLs within RFC 2181 §8) or a one-line reason (the hosts one
// starting with "FILE:LINE: "); a set that builds answers every lookup with
// at most 8 CNAMEs, and every reply made from it is one the engine's
// dns::answer_for_client accepts. A violated invariant traps.
//
// Built by tests/fuzz/CMakeLists.txt under NXDNS_FUZZ; scripts/fuzz.sh runs
// it over tests/fuzz/corpus/local_records.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dns/message.hpp"
#include "dns/wire.hpp"
#include "route/local_records.hpp"
#include "route/local_reply.hpp"

using namespace nxdns;
using namespace nxdns::route;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

bool complete_name(dns::ByteView name, std::size_t& end) {
  const dns::wire::NameWalk w = dns::wire::walk_name(name, 0, nullptr);
  end = w.next;
  return w.error == dns::ParseError::none;
}

bool lower_case(dns::ByteView name) {
  for (std::uint8_t c : name)
    if (c >= 'A' && c <= 'Z') return false;
  return true;
}

bool one_line(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20) return false;
  return true;
}

// A name, possibly after `skip` fixed octets, ends exactly at the RDATA's end.
bool name_rdata(const dns::Bytes& rdata, std::size_t skip) {
  if (rdata.size() <= skip) return false;
  std::size_t end = 0;
  const dns::ByteView rest = dns::ByteView(rdata).subspan(skip);
  return complete_name(rest, end) && end == rest.size() && lower_case(rest);
}

void check_record(const Record& r) {
  std::size_t end = 0;
  require(complete_name(r.owner, end) && end == r.owner.size() && lower_case(r.owner));
  require(r.ttl <= 0x7FFFFFFF);
  require(r.rdata.size() <= 0xFFFF);
  switch (r.type) {
    case type_a: require(r.rdata.size() == 4); break;
    case type_aaaa: require(r.rdata.size() == 16); break;
    case type_cname:
    case type_ptr: require(name_rdata(r.rdata, 0)); break;
    case type_mx: require(name_rdata(r.rdata, 2)); break;
    case type_srv: require(name_rdata(r.rdata, 6)); break;
    case type_txt: {
      // Character-strings tile the RDATA.
      std::size_t off = 0;
      while (off < r.rdata.size()) off += 1 + std::size_t{r.rdata[off]};
      require(off == r.rdata.size() && !r.rdata.empty());
      break;
    }
    default: require(false);
  }
}

void answer(const LocalRecords& set, const Record& r, std::uint16_t qtype) {
  const LocalRecords::Lookup l = set.find(r.owner, qtype);
  require(l.kind != LocalRecords::Lookup::Kind::absent);
  std::size_t cnames = 0;
  for (const Record* c : l.chain) cnames += c->type == type_cname ? 1 : 0;
  require(cnames <= 8);
  for (const bool edns : {false, true}) {
    const auto payload = edns ? std::optional<std::uint16_t>(1232) : std::nullopt;
    const dns::Bytes raw = dns::make_query(0x1234, r.owner, qtype, payload);
    const dns::QueryParse p = dns::parse_query(raw);
    require(p.query.has_value());
    const dns::Query& q = *p.query;
    const dns::Bytes reply = make_records_reply(raw, q, l, r.owner, 30);
    require(dns::answer_for_client(reply, q, dns::client_link(q, true)).has_value());
    require(reply.size() > dns::max_stream_message ||
            dns::answer_for_client(reply, q, dns::client_link(q, false)).has_value());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Record> all;

  std::string why;
  if (const auto hosts = parse_hosts(text, "fuzz.hosts", &why)) {
    for (const Record& r : *hosts) {
      check_record(r);
      require(r.type == type_a || r.type == type_aaaa || r.type == type_ptr);
      require(r.ttl == hosts_ttl && r.source.starts_with("fuzz.hosts:"));
      all.push_back(r);
    }
  } else {
    require(one_line(why) && why.starts_with("fuzz.hosts:"));
  }

  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    why.clear();
    if (const auto r = parse_record(line, "records[0]", &why)) {
      check_record(*r);
      all.push_back(*r);
    } else {
      require(one_line(why));
    }
  }

  const auto set = LocalRecords::build(all, &why);
  if (!set) {
    require(one_line(why));
    return 0;
  }
  require(set->size() <= all.size());
  for (const Record& r : all) {
    require(set->has_owner(r.owner));
    for (std::uint16_t qtype : {type_a, type_aaaa, type_cname, type_txt, type_ptr, dns::type_any})
      answer(*set, r, qtype);
  }
  return 0;
}
