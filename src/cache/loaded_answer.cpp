#include "cache/loaded_answer.hpp"

#include <algorithm>

#include "cache/answer_rewrite.hpp"
#include "dns/wire.hpp"

namespace nxdns::cache {

namespace {
constexpr std::uint8_t key_flag_do = 1, key_flag_cd = 2;
}  // namespace

const char* describe(LoadRefusal r) {
  switch (r) {
    case LoadRefusal::none: return "none";
    case LoadRefusal::malformed: return "malformed";
    case LoadRefusal::key_mismatch: return "key_mismatch";
    case LoadRefusal::not_cacheable: return "not_cacheable";
  }
  return "unknown";
}

LoadCheck check_loaded_answer(std::string_view packed_key, dns::ByteView answer, std::uint32_t file_ttl,
                              const TtlClamp& clamp) {
  const auto q = dns::parse_question_of(answer);
  if (!q) return {LoadRefusal::malformed, std::nullopt};
  // The key's last octet holds DO and CD (cache/key.hpp); the rest must be
  // exactly what the answer's own question is filed under.
  const auto flags = packed_key.empty() ? std::uint8_t{0xFF} : static_cast<std::uint8_t>(packed_key.back());
  if ((flags & ~(key_flag_do | key_flag_cd)) != 0) return {LoadRefusal::key_mismatch, std::nullopt};
  Key key = make_key(q->name, q->qtype, q->qclass, (flags & key_flag_do) != 0, (flags & key_flag_cd) != 0);
  if (key.packed != packed_key) return {LoadRefusal::key_mismatch, std::nullopt};

  const dns::wire::Layout layout = dns::wire::scan(answer);
  const AnswerTtl verdict = answer_ttl(answer, layout, clamp);
  if (verdict.verdict == Verdict::malformed) return {LoadRefusal::malformed, std::nullopt};
  if (!verdict.cacheable()) return {LoadRefusal::not_cacheable, std::nullopt};
  const bool negative = verdict.verdict == Verdict::negative;
  auto stored = clamp_record_ttls(answer, layout, clamp.min_ttl, negative ? verdict.ttl : clamp.max_ttl);
  if (!stored) return {LoadRefusal::malformed, std::nullopt};
  return {LoadRefusal::none, LoadedAnswer{std::move(key), std::move(*stored), std::min(file_ttl, verdict.ttl), negative}};
}

}  // namespace nxdns::cache
