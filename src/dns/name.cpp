// Domain names: decompression with the pointer rules, case-insensitive
// comparison, presentation form for logs and from configuration.
#include <string>
#include <string_view>

#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace wire {

namespace {
// A legitimate name of at most 127 labels needs at most one pointer per
// label; anything beyond is a crafted chain. Termination does not rely on
// this (jumps strictly decrease), it only bounds the work per name.
constexpr int max_pointer_hops = 128;
}  // namespace

NameWalk walk_name(ByteView msg, std::size_t offset, Bytes* out) {
  NameWalk r;
  std::size_t pos = offset;
  // Start of the current run of labels: a pointer must land strictly below
  // it, which makes every jump target strictly lower than the previous one.
  std::size_t run_start = offset;
  bool jumped = false;
  int hops = 0;
  // One allocation for the whole name instead of one per doubling as labels
  // are appended: this runs several times per forwarded query.
  if (out) out->reserve(out->size() + max_name_wire);
  auto fail = [&](ParseError e) {
    if (out) out->clear();
    r.error = e;
    return r;
  };
  for (;;) {
    if (!has(msg, pos, 1)) return fail(ParseError::truncated);
    const std::uint8_t b = msg[pos];
    switch (b & 0xC0) {
      case 0xC0: {
        if (!has(msg, pos, 2)) return fail(ParseError::truncated);
        const std::size_t target = static_cast<std::size_t>(load16(msg, pos) & 0x3FFF);
        // Below the header there are no names to point at (RFC 1035 §4.1.4
        // pointers address "a prior occurrence of the same name").
        if (target < header_size || target >= run_start) return fail(ParseError::bad_pointer);
        if (++hops > max_pointer_hops) return fail(ParseError::bad_pointer);
        if (!jumped) {
          r.next = pos + 2;
          jumped = true;
        }
        pos = run_start = target;
        continue;
      }
      case 0x40:
        return fail(ParseError::label_too_long);
      case 0x80:
        return fail(ParseError::bad_label_type);
      default:
        break;
    }
    const std::size_t len = b;
    if (len == 0) {
      if (r.length + 1 > max_name_wire) return fail(ParseError::name_too_long);
      r.length += 1;
      if (out) out->push_back(0);
      if (!jumped) r.next = pos + 1;
      return r;
    }
    // +1 reserves the root octet every name still needs.
    if (r.length + 1 + len + 1 > max_name_wire) return fail(ParseError::name_too_long);
    if (!has(msg, pos + 1, len)) return fail(ParseError::truncated);
    if (out) out->insert(out->end(), msg.begin() + static_cast<std::ptrdiff_t>(pos),
                         msg.begin() + static_cast<std::ptrdiff_t>(pos + 1 + len));
    r.length += 1 + len;
    pos += 1 + len;
  }
}

}  // namespace wire

NameRead read_name(ByteView msg, std::size_t offset, Bytes& out) {
  out.clear();
  const wire::NameWalk w = wire::walk_name(msg, offset, &out);
  return NameRead{w.error, w.error == ParseError::none ? w.next : 0};
}

namespace {
std::uint8_t fold(std::uint8_t c) { return (c >= 'A' && c <= 'Z') ? static_cast<std::uint8_t>(c + ('a' - 'A')) : c; }
}  // namespace

bool names_equal(ByteView a, ByteView b) {
  // Label by label, so a length octet is never folded against a letter.
  std::size_t i = 0;
  for (;;) {
    if (i >= a.size() || i >= b.size()) return false;
    const std::size_t len = a[i];
    if (b[i] != len || len > max_label) return false;
    if (len == 0) return i + 1 == a.size() && i + 1 == b.size();
    if (!wire::has(a, i + 1, len) || !wire::has(b, i + 1, len)) return false;
    for (std::size_t k = i + 1; k <= i + len; ++k) {
      if (fold(a[k]) != fold(b[k])) return false;
    }
    i += 1 + len;
  }
}

std::string name_to_text(ByteView wire_name) {
  std::string s;
  std::size_t i = 0;
  while (i < wire_name.size()) {
    const std::size_t len = wire_name[i];
    if (len == 0) {
      // std::string(1, '.') rather than s = ".": GCC 12 at -O2 reports a
      // false -Wrestrict on assigning a literal here (GCC bug 105329).
      if (s.empty()) return std::string(1, '.');
      return s;
    }
    if (len > max_label || !wire::has(wire_name, i + 1, len)) break;
    for (std::size_t k = i + 1; k <= i + len; ++k) {
      const std::uint8_t c = wire_name[k];
      if (c == '.' || c == '\\') {
        s += '\\';
        s += static_cast<char>(c);
      } else if (c > 0x20 && c < 0x7F) {
        s += static_cast<char>(c);
      } else {
        // RFC 1035 §5.1 \DDD: keeps control octets out of log lines.
        s += '\\';
        s += static_cast<char>('0' + c / 100);
        s += static_cast<char>('0' + (c / 10) % 10);
        s += static_cast<char>('0' + c % 10);
      }
    }
    s += '.';
    i += 1 + len;
  }
  // Not a complete name: say so rather than print something plausible.
  s += "<malformed>";
  return s;
}

std::optional<Bytes> name_from_text(std::string_view text, std::string* why) {
  auto fail = [why](const char* reason) -> std::optional<Bytes> {
    if (why) *why = reason;
    return std::nullopt;
  };
  Bytes out;
  if (text.empty()) return fail("empty name");
  if (text == ".") return Bytes{0};
  Bytes label;
  // The reason when a label cannot be closed, or nullptr.
  auto end_label = [&]() -> const char* {
    if (label.empty()) return "empty label";
    if (label.size() > max_label) return "label longer than 63 octets";
    out.push_back(static_cast<std::uint8_t>(label.size()));
    out.insert(out.end(), label.begin(), label.end());
    label.clear();
    return out.size() + 1 <= max_name_wire ? nullptr : "name longer than 255 octets";
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '.') {
      if (const char* reason = end_label()) return fail(reason);
      ++i;
      continue;
    }
    if (c == '\\') {
      // \X is X literally; \DDD is one octet in decimal (RFC 1035 §5.1).
      if (i + 1 >= text.size()) return fail("bad escape");
      const char d0 = text[i + 1];
      if (d0 >= '0' && d0 <= '9') {
        if (i + 3 >= text.size()) return fail("bad escape");
        const char d1 = text[i + 2], d2 = text[i + 3];
        if (d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9') return fail("bad escape");
        const int v = (d0 - '0') * 100 + (d1 - '0') * 10 + (d2 - '0');
        if (v > 255) return fail("bad escape");
        label.push_back(static_cast<std::uint8_t>(v));
        i += 4;
      } else {
        label.push_back(static_cast<std::uint8_t>(d0));
        i += 2;
      }
    } else {
      label.push_back(static_cast<std::uint8_t>(c));
      ++i;
    }
    // Checked as we go so a huge input cannot grow `label` unbounded.
    if (label.size() > max_label) return fail("label longer than 63 octets");
  }
  // No trailing dot: the last label is still open.
  if (!label.empty()) {
    if (const char* reason = end_label()) return fail(reason);
  }
  out.push_back(0);
  if (out.size() > max_name_wire) return fail("name longer than 255 octets");
  return out;
}

}  // namespace nxdns::dns
