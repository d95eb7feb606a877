// The immutable set of the household's own records and its lookup: CNAME
// chains followed within the local data. The records come from
// record_line.cpp (static records) and hosts_file.cpp (hosts files).
#include "route/local_records.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "dns/wire.hpp"
#include "route/lower_case.hpp"

namespace nxdns::route {

namespace {

// What RDLENGTH can state (RFC 1035 §3.2.1).
constexpr std::size_t max_rdata = 0xFFFF;
// Enough for any chain a household writes; a longer one is a mistake, and
// the bound keeps a lookup's work fixed whatever the data holds.
constexpr int max_cname_hops = 8;

// One uncompressed wire name and nothing after it.
bool complete_name(dns::ByteView name) {
  const dns::wire::NameWalk w = dns::wire::walk_name(name, 0, nullptr);
  return w.error == dns::ParseError::none && w.next == name.size();
}

std::string type_name(std::uint16_t type) {
  switch (type) {
    case type_a: return "A";
    case type_ns: return "NS";
    case type_cname: return "CNAME";
    case type_soa: return "SOA";
    case type_ptr: return "PTR";
    case type_mx: return "MX";
    case type_txt: return "TXT";
    case type_aaaa: return "AAAA";
    case type_srv: return "SRV";
    default: return "TYPE" + std::to_string(type);
  }
}

}  // namespace

std::optional<LocalRecords> LocalRecords::build(std::vector<Record> records, std::string* why) {
  LocalRecords out;
  for (Record& r : records) {
    const bool name_rdata = r.type == type_cname || r.type == type_ptr;
    if (!complete_name(r.owner) || r.rdata.size() > max_rdata || (name_rdata && !complete_name(r.rdata))) {
      if (why) *why = r.source + ": malformed record";
      return std::nullopt;
    }
    // One spelling, so that records differing only in case are one.
    lower_case(r.owner);
    if (name_rdata) lower_case(r.rdata);
    std::vector<Record>& at = out.by_owner_[lower_case_key(r.owner)];
    const bool duplicate = std::any_of(at.begin(), at.end(), [&](const Record& o) {
      return o.type == r.type && o.rdata == r.rdata;
    });
    if (duplicate) continue;
    // RFC 1034 §3.6.2 (RFC 2181 §10.1): a CNAME owner has no other data,
    // another CNAME included. Whatever is already there is consistent, so
    // its first record stands for it.
    if (!at.empty() && (r.type == type_cname || at.front().type == type_cname)) {
      const Record& old = at.front();
      if (why) {
        *why = dns::name_to_text(r.owner) + " has a CNAME and other data (" + type_name(old.type) + " at " +
               old.source + ", " + type_name(r.type) + " at " + r.source +
               "): a CNAME owner can hold nothing else (RFC 1034 §3.6.2)";
      }
      return std::nullopt;
    }
    at.push_back(std::move(r));
    ++out.count_;
  }
  return out;
}

LocalRecords::Lookup LocalRecords::find(dns::ByteView qname, std::uint16_t qtype) const {
  return find_lower(lower_case_key(qname), qtype);
}

LocalRecords::Lookup LocalRecords::find_lower(std::string key, std::uint16_t qtype) const {
  Lookup l;
  auto it = by_owner_.find(key);
  if (it == by_owner_.end()) return l;
  std::vector<std::string> seen{key};
  for (int hops = 0;;) {
    const std::vector<Record>& here = it->second;
    const std::size_t before = l.chain.size();
    // ANY asks for whatever the owner holds (RFC 1035 §3.2.3), a CNAME
    // query for the CNAME itself: both stop here, at the alias.
    for (const Record& r : here)
      if (r.type == qtype || qtype == dns::type_any) l.chain.push_back(&r);
    if (l.chain.size() > before) break;
    const Record& alias = here.front();
    if (alias.type != type_cname || hops == max_cname_hops) {
      l.kind = l.chain.empty() ? Lookup::Kind::nodata : Lookup::Kind::answer;
      return l;
    }
    l.chain.push_back(&alias);
    ++hops;
    key = lower_case_key(alias.rdata);
    // A loop, or a target outside the local data: the chain ends with the
    // CNAME, and whoever resolves the target takes it from there.
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) break;
    it = by_owner_.find(key);
    if (it == by_owner_.end()) break;
    seen.push_back(key);
  }
  l.kind = Lookup::Kind::answer;
  return l;
}

bool LocalRecords::has_owner(dns::ByteView qname) const { return by_owner_.contains(lower_case_key(qname)); }

}  // namespace nxdns::route
