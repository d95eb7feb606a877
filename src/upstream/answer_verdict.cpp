#include "upstream/answer_verdict.hpp"

#include "dns/message.hpp"

namespace nxdns::upstream {

AnswerVerdict answer_verdict(std::uint8_t rcode) {
  switch (static_cast<dns::Rcode>(rcode & 0x0F)) {
    case dns::Rcode::noerror:
    case dns::Rcode::nxdomain: return AnswerVerdict::relay;
    case dns::Rcode::servfail: return AnswerVerdict::fail_over;
    case dns::Rcode::formerr:
    case dns::Rcode::notimp:
    case dns::Rcode::refused:
    // Extended codes (BADVERS, 16) need the OPT's upper bits; a header
    // RCODE alone never reaches them.
    case dns::Rcode::badvers: return AnswerVerdict::fail_over_unhealthy;
  }
  return AnswerVerdict::fail_over_unhealthy;  // 6..15: meaningless in an answer to a QUERY
}

bool is_ordinary_query(std::uint8_t opcode, std::uint16_t qtype, std::uint16_t qclass) {
  return opcode == 0 && qclass == dns::class_in && qtype != dns::type_any && !dns::is_meta_type(qtype);
}

bool is_ordinary_query(dns::ByteView query) {
  const auto h = dns::parse_header(query);
  const auto q = dns::parse_question_of(query);
  return h && q && is_ordinary_query(h->opcode(), q->qtype, q->qclass);
}

AnswerVerdict answer_verdict(std::uint8_t rcode, bool ordinary_query) {
  const AnswerVerdict v = answer_verdict(rcode);
  return v == AnswerVerdict::fail_over_unhealthy && !ordinary_query ? AnswerVerdict::fail_over : v;
}

int error_answer_rank(std::uint8_t rcode) {
  switch (static_cast<dns::Rcode>(rcode & 0x0F)) {
    case dns::Rcode::servfail: return 4;
    case dns::Rcode::refused: return 3;
    case dns::Rcode::notimp: return 2;
    case dns::Rcode::formerr: return 1;
    case dns::Rcode::noerror:
    case dns::Rcode::nxdomain:
    case dns::Rcode::badvers: break;
  }
  return 0;
}

const char* describe(AnswerVerdict v) {
  switch (v) {
    case AnswerVerdict::relay: return "relay";
    case AnswerVerdict::fail_over: return "fail_over";
    case AnswerVerdict::fail_over_unhealthy: return "fail_over_unhealthy";
  }
  return "unknown";
}

}  // namespace nxdns::upstream
