// libFuzzer target for the cache's answer handling: answer_ttl (what is
// cached, for how long), clamp_record_ttls (the stored form) and
// rewrite_answer (a stored answer made into this client's answer), and
// client_answer (the hit path's one-copy form of the same).
//
// Input: [flags:1][client_len:2][client query bytes][stored answer bytes].
// Invariants checked: layout_of agrees with dns::wire::scan; the stored
// form clamped at layout_of's TTL offsets is the walked one; nothing
// crashes or reads out of bounds (ASan/UBSan);
// a rewritten answer is never longer than the stored one, carries the
// client's ID and exactly the client's question bytes; client_answer, where
// it answers at all, gives byte for byte what the general path gives
// (answer_for_client of rewrite_answer) and that reply's rcode: it serves
// every UDP hit, so a divergence would be a wrong answer, not a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "cache/answer_rewrite.hpp"
#include "cache/answer_ttl.hpp"
#include "dns/message.hpp"
#include "dns/wire.hpp"

using namespace nxdns;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t client_len = std::min<std::size_t>((std::size_t{data[1]} << 8) | data[2], size - 3);
  const dns::ByteView client(data + 3, client_len);
  const dns::ByteView stored(data + 3 + client_len, size - 3 - client_len);

  // layout_of walks on its own; scan() is the oracle for where it ends.
  {
    const auto mine = cache::layout_of(stored);
    const dns::wire::Layout l = dns::wire::scan(stored);
    const bool walks = l.error == dns::ParseError::none && l.questions_ok && l.header.qdcount == 1 && l.end <= 0xFFFF;
    if (mine.has_value() != walks) std::abort();
    if (mine && (mine->end != l.end || mine->question_end != l.questions_end ||
                 mine->opt_options != (l.opt ? l.opt->rdlength : 0)))
      std::abort();
  }

  const cache::TtlClamp clamp{flags & 0x0Fu, 86400};
  (void)cache::answer_ttl(stored, clamp);
  if (auto c = cache::clamp_record_ttls(stored, flags & 0x0Fu, 3600)) {
    if (c->size() != stored.size()) std::abort();
    (void)cache::answer_ttl(*c, clamp);
    // The stored form from the layout's TTL offsets (what a flight stores)
    // is the walked one; unchanged, the layout is the stored form's own.
    if (const auto layout = cache::layout_of(stored)) {
      const auto at = cache::clamp_record_ttls(stored, *layout, flags & 0x0Fu, 3600);
      if (!at || at->bytes != *c || at->changed != (*c != dns::Bytes(stored.begin(), stored.end()))) std::abort();
      if (!at->changed) {
        const auto again = cache::layout_of(at->bytes);
        if (!again || again->ttl_at != layout->ttl_at || again->end != layout->end) std::abort();
      }
    }
  }

  auto parsed = dns::parse_query(client);
  if (!parsed.query) return 0;
  const dns::Query& q = *parsed.query;
  const dns::ByteView question = cache::question_bytes(client, q);
  const cache::ClientQuestion cq{q.header.id, question, q.header.flags};
  const std::uint32_t age = (flags & 0x80) ? 0xFFFFFFFFu : flags * 97u;
  const std::optional<std::uint32_t> fixed =
      (flags & 0x40) ? std::optional<std::uint32_t>(cache::stale_answer_ttl) : std::nullopt;
  auto out = cache::rewrite_answer(stored, cq, age, fixed);
  if (!out) return 0;
  if (out->size() > stored.size()) std::abort();
  if (dns::get_id(*out) != q.header.id) std::abort();
  if (out->size() < dns::header_size + question.size() ||
      std::memcmp(out->data() + dns::header_size, question.data(), question.size()) != 0)
    std::abort();
  (void)cache::answer_ttl(*out, clamp);

  if (fixed) return 0;  // the hit path serves fresh answers only
  auto layout = cache::layout_of(stored);
  if (!layout) return 0;
  cache::find_client_form(stored, *layout);
  const dns::ClientLink link = dns::client_link(q, (flags & 0x20) == 0);
  const auto fast = cache::client_answer(stored, *layout, cq, age, q.edns, link);
  if (!fast) return 0;
  const auto general = dns::answer_for_client(*out, q, link);
  if (!general || *general != fast->bytes) std::abort();
  if (dns::reply_rcode(*general) != std::optional<std::uint16_t>(fast->rcode)) std::abort();
  return 0;
}
