// Queries nxdns answers itself instead of forwarding (the policy is
// documented on local_answer in dns/message.hpp and in
// docs/architecture.md, "What is answered locally").
#include "dns/message.hpp"

namespace nxdns::dns {

std::optional<Rcode> local_answer(const Query& q) {
  // RFC 6891 §6.1.3: a version we do not implement is answered BADVERS
  // before anything else is looked at.
  if (q.edns.present && q.edns.version > 0) return Rcode::badvers;
  if (q.header.tc()) return Rcode::formerr;
  const std::uint16_t qtype = q.question.qtype;
  if (qtype == type_axfr || qtype == type_ixfr) return Rcode::refused;
  if (is_meta_type(qtype)) return Rcode::formerr;
  if (q.question.qclass != class_in) return Rcode::refused;
  return std::nullopt;
}

}  // namespace nxdns::dns
