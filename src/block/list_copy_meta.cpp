#include "block/list_copy_meta.hpp"

#include <charconv>
#include <vector>

#include "cache/atomic_file.hpp"

namespace nxdns::block {

namespace {

constexpr std::string_view magic = "nxdns-list-copy 1";
constexpr std::size_t max_validator = 1024;
// Four validator-sized lines and change: a larger file is not ours.
constexpr std::size_t max_meta_file = 8192;

template <class Int>
std::optional<Int> number(std::string_view s) {
  Int v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

bool storable_validator(std::string_view v) {
  if (v.empty() || v.size() > max_validator) return false;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

std::string encode_copy_meta(const CopyMeta& m) {
  std::string out(magic);
  out += '\n';
  if (storable_validator(m.source)) out += "source " + m.source + "\n";
  out += "bytes " + std::to_string(m.bytes) + "\n";
  out += "fetched " + std::to_string(m.fetched_unix) + "\n";
  if (storable_validator(m.etag)) out += "etag " + m.etag + "\n";
  if (storable_validator(m.last_modified)) out += "last-modified " + m.last_modified + "\n";
  return out;
}

std::optional<CopyMeta> decode_copy_meta(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;  // torn: every line ends
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  if (lines.empty() || lines.front() != magic) return std::nullopt;
  CopyMeta m;
  bool have_bytes = false, have_fetched = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const auto sp = line.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(0, sp);
    const std::string_view value = line.substr(sp + 1);
    if (key == "bytes") {
      const auto v = number<std::uint64_t>(value);
      if (!v) return std::nullopt;
      m.bytes = *v;
      have_bytes = true;
    } else if (key == "fetched") {
      const auto v = number<std::int64_t>(value);
      if (!v) return std::nullopt;
      m.fetched_unix = *v;
      have_fetched = true;
    } else if (key == "etag" || key == "last-modified" || key == "source") {
      if (!storable_validator(value)) return std::nullopt;
      (key == "etag" ? m.etag : key == "source" ? m.source : m.last_modified).assign(value);
    }
    // Other keys are skipped: a later writer may add some, and none is
    // needed to use the validators.
  }
  if (!have_bytes || !have_fetched) return std::nullopt;
  return m;
}

std::string meta_path(const std::string& copy_path) { return copy_path + ".meta"; }

std::optional<CopyMeta> read_copy_meta(const std::string& copy_path) {
  const cache::FileRead r = cache::read_whole_file(meta_path(copy_path), max_meta_file);
  if (r.status != cache::FileRead::Status::ok) return std::nullopt;
  return decode_copy_meta(std::string_view(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()));
}

std::optional<std::string> write_copy_meta(const std::string& copy_path, const CopyMeta& m) {
  const std::string text = encode_copy_meta(m);
  return cache::replace_file(meta_path(copy_path),
                             dns::ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace nxdns::block
