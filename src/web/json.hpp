#pragma once
// A small streaming JSON writer for the API documents. It only writes what
// the API needs (objects, arrays, strings, integers, finite doubles, bools,
// null) and escapes strings per RFC 8259 §7, so a redacted URL or an error
// detail with quotes or control characters cannot break the document.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nxdns::web {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // Inside an object: the next value's name.
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(std::int64_t n);
  JsonWriter& value(std::uint64_t n);
  JsonWriter& value(int n) { return value(static_cast<std::int64_t>(n)); }
  JsonWriter& value(unsigned n) { return value(static_cast<std::uint64_t>(n)); }
  // Non-finite numbers have no JSON form: written as null.
  JsonWriter& value(double d);
  JsonWriter& null();

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void separate();

  std::string out_;
  // One entry per open container: has it received an element yet?
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);
// Shortest round-trip decimal form of a finite double ("0.25", "3", "1e-07").
std::string format_double(double d);

}  // namespace nxdns::web
