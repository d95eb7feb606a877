#pragma once
// What an upstream's answer says, by its RCODE (RFC 1035 §4.1.1, RFC 6895
// §2.3): relay it to the client, or treat the attempt as failed and fail
// over. Pure functions of the header RCODE, table-tested
// (tests/upstream/answer_verdict_test.cpp) in the spirit of retry_decision.
//
// Every query the pool forwards is well-formed (the engine parsed it, one
// question, opcode QUERY), so for an ordinary query (is_ordinary_query) an
// answer that says "I will not / cannot do this" is about the upstream, not
// about the name or the client. For any other, it may be the resolver's
// policy about that kind of query, and says nothing about the upstream.
#include <cstdint>

#include "dns/message.hpp"

namespace nxdns::upstream {

enum class AnswerVerdict : std::uint8_t {
  // NOERROR, NXDOMAIN: an answer about the name. Relay it.
  relay,
  // SERVFAIL: the upstream tried and could not resolve the name. Another
  // upstream may succeed, so fail over; but it is NOT a health failure: a
  // validating resolver answers SERVFAIL for names whose DNSSEC is broken or
  // whose authoritative servers are down, and a household asks such a name
  // repeatedly (A and AAAA at once, retries). Counting those would put a
  // working primary into backoff for every other name. The price: an
  // upstream that SERVFAILs everything (its own uplink is down) costs each
  // query one round trip before the failover, not an attempt budget.
  fail_over,
  // REFUSED, NOTIMP, FORMERR (to our well-formed query), and the codes that
  // have no meaning in an answer to a QUERY (YXDOMAIN..NOTZONE, DSOTYPENI,
  // unassigned 12-15): the upstream will not or cannot serve us, whatever
  // the name (an ACL, a rate limit, a broken server). Fail over, and count
  // against health so that the next queries route around it.
  fail_over_unhealthy,
};

// `rcode` is the 4-bit header RCODE (the extended bits live in the OPT
// record, which our queries only ever send as version 0).
AnswerVerdict answer_verdict(std::uint8_t rcode);

// Whether every working resolver answers this query with data, NXDOMAIN or
// NODATA: opcode QUERY, class IN, and a type that is neither a meta-type
// (dns::is_meta_type) nor ANY. Only then does an error answer to it say
// something about the upstream. Resolvers refuse or reject the others by
// policy: ANY gets NOTIMP or REFUSED from some (RFC 8482 lets them answer
// it minimally, and some decline it), other classes REFUSED, meta-types
// FORMERR. nxdns answers all but
// ANY itself (dns::local_answer), but whatever reaches an upstream must not
// put a healthy one into backoff.
bool is_ordinary_query(std::uint8_t opcode, std::uint16_t qtype, std::uint16_t qclass);
// The same for a raw query (header and one question); false when it does
// not read as one.
bool is_ordinary_query(dns::ByteView query);

// The verdict on an answer to a query that is or is not ordinary: for one
// that is not, fail_over_unhealthy becomes fail_over (another upstream may
// answer it, but this one is not to blame).
AnswerVerdict answer_verdict(std::uint8_t rcode, bool ordinary_query);

// When every upstream answered with an error, the client gets the best of
// those answers (relayed, with whatever the upstream put in it, e.g. RFC 8914
// Extended DNS Errors), not a SERVFAIL we make up. Higher is better:
//   SERVFAIL > REFUSED > NOTIMP > FORMERR > anything else.
// SERVFAIL is a statement about the name ("resolution failed"), which is
// what the client asked about; REFUSED/NOTIMP/FORMERR describe the upstream's
// relation to us, which the client never talked to, and a stub that sees
// REFUSED from its forwarder may stop using it. Among those, REFUSED is the
// one stubs act on sensibly (try another server). Ties go to the answer
// received first, i.e. the higher-priority upstream's. Only meaningful for
// rcodes whose verdict is not relay.
int error_answer_rank(std::uint8_t rcode);

const char* describe(AnswerVerdict v);

}  // namespace nxdns::upstream
