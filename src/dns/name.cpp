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

std::optional<Bytes> name_from_text(std::string_view text) {
  Bytes out;
  if (text.empty()) return std::nullopt;
  if (text == ".") return Bytes{0};
  Bytes label;
  auto end_label = [&]() {
    if (label.empty() || label.size() > max_label) return false;
    out.push_back(static_cast<std::uint8_t>(label.size()));
    out.insert(out.end(), label.begin(), label.end());
    label.clear();
    return out.size() + 1 <= max_name_wire;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '.') {
      if (!end_label()) return std::nullopt;
      ++i;
      continue;
    }
    if (c == '\\') {
      // \X is X literally; \DDD is one octet in decimal (RFC 1035 §5.1).
      if (i + 1 >= text.size()) return std::nullopt;
      const char d0 = text[i + 1];
      if (d0 >= '0' && d0 <= '9') {
        if (i + 3 >= text.size()) return std::nullopt;
        const char d1 = text[i + 2], d2 = text[i + 3];
        if (d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9') return std::nullopt;
        const int v = (d0 - '0') * 100 + (d1 - '0') * 10 + (d2 - '0');
        if (v > 255) return std::nullopt;
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
    if (label.size() > max_label) return std::nullopt;
  }
  // No trailing dot: the last label is still open.
  if (!label.empty() && !end_label()) return std::nullopt;
  out.push_back(0);
  if (out.size() > max_name_wire) return std::nullopt;
  return out;
}

}  // namespace nxdns::dns
