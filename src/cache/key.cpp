#include "cache/key.hpp"

namespace nxdns::cache {

namespace {
constexpr std::uint16_t flag_cd = 0x0010;  // RFC 4035 §3.2.2, header bit 11
constexpr std::size_t key_tail = 5;        // qtype 2 + qclass 2 + flags 1
}  // namespace

std::string fold_name(dns::ByteView wire_name) {
  std::string out(wire_name.begin(), wire_name.end());
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Key make_key(dns::ByteView wire_name, std::uint16_t qtype, std::uint16_t qclass, bool dnssec_ok, bool checking_disabled) {
  Key k;
  k.packed = fold_name(wire_name);
  k.packed.reserve(k.packed.size() + key_tail);
  k.packed.push_back(static_cast<char>(qtype >> 8));
  k.packed.push_back(static_cast<char>(qtype & 0xFF));
  k.packed.push_back(static_cast<char>(qclass >> 8));
  k.packed.push_back(static_cast<char>(qclass & 0xFF));
  k.packed.push_back(static_cast<char>((dnssec_ok ? 1 : 0) | (checking_disabled ? 2 : 0)));
  return k;
}

Key make_key(const dns::Query& q) {
  return make_key(q.question.name, q.question.qtype, q.question.qclass, q.edns.present && q.edns.dnssec_ok,
                  (q.header.flags & flag_cd) != 0);
}

bool key_has_name(const Key& k, const std::string& folded) {
  return k.packed.size() == folded.size() + key_tail && k.packed.compare(0, folded.size(), folded) == 0;
}

}  // namespace nxdns::cache
