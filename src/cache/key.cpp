#include "cache/key.hpp"

namespace nxdns::cache {

namespace {
constexpr std::size_t key_tail = 5;        // qtype 2 + qclass 2 + flags 1
// RFC 4343: DNS names compare ASCII letters without case; nothing else folds.
constexpr char folded(std::uint8_t c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); }
}  // namespace

std::string fold_name(dns::ByteView wire_name) {
  std::string out;
  out.reserve(wire_name.size());
  for (const std::uint8_t c : wire_name) out.push_back(folded(c));
  return out;
}

Key make_key(dns::ByteView wire_name, std::uint16_t qtype, std::uint16_t qclass, bool dnssec_ok, bool checking_disabled) {
  Key k;
  // One block for name and tail: reserved before the name goes in.
  k.packed.reserve(wire_name.size() + key_tail);
  for (const std::uint8_t c : wire_name) k.packed.push_back(folded(c));
  k.packed.push_back(static_cast<char>(qtype >> 8));
  k.packed.push_back(static_cast<char>(qtype & 0xFF));
  k.packed.push_back(static_cast<char>(qclass >> 8));
  k.packed.push_back(static_cast<char>(qclass & 0xFF));
  k.packed.push_back(static_cast<char>((dnssec_ok ? 1 : 0) | (checking_disabled ? 2 : 0)));
  return k;
}

KeyBuffer::KeyBuffer(const dns::Query& q) {
  const dns::ByteView name = q.question.name;
  // A parsed name is at most 255 octets (RFC 1035 §3.1); longer is not a
  // name, and an empty view then matches no stored key.
  if (name.size() > 255) return;
  for (const std::uint8_t c : name) buf_[len_++] = folded(c);
  const std::uint16_t t = q.question.qtype, c = q.question.qclass;
  buf_[len_++] = static_cast<char>(t >> 8);
  buf_[len_++] = static_cast<char>(t & 0xFF);
  buf_[len_++] = static_cast<char>(c >> 8);
  buf_[len_++] = static_cast<char>(c & 0xFF);
  buf_[len_++] = static_cast<char>((q.edns.present && q.edns.dnssec_ok ? 1 : 0) | (q.header.cd() ? 2 : 0));
}

Key make_key(const dns::Query& q) {
  return make_key(q.question.name, q.question.qtype, q.question.qclass, q.edns.present && q.edns.dnssec_ok,
                  q.header.cd());
}

bool key_has_name(const Key& k, const std::string& folded) {
  return k.packed.size() == folded.size() + key_tail && k.packed.compare(0, folded.size(), folded) == 0;
}

}  // namespace nxdns::cache
