#include "config/yaml_reader.hpp"

#include "config/url.hpp"

namespace nxdns::config::detail {

namespace {

constexpr const char* kDocument = "<document>";
constexpr const char* kStrTag = "tag:yaml.org,2002:str";
constexpr const char* kIntTag = "tag:yaml.org,2002:int";
constexpr const char* kBoolTag = "tag:yaml.org,2002:bool";

// Keys reaching a path are known names, except in the unknown/duplicate
// key errors themselves, where the key is the user's text.
std::string quote_if_needed(const std::string& key) {
  for (char c : key) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return quote(key);
  }
  return key.empty() ? quote(key) : key;
}

}  // namespace

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    // A URL in the wrong place (`upstreams: https://u:pw@...`) is still a
    // URL: never echo its credentials or path secrets.
    case YAML::NodeType::Scalar:
      return quote(n.Scalar().find("://") == std::string::npos ? n.Scalar() : redact_url(n.Scalar()));
    default: return "nothing";
  }
}

const Entry* find(const Map& m, std::string_view key) {
  for (const Entry& e : m)
    if (e.key == key) return &e;
  return nullptr;
}

void YamlReader::fail(const std::string& path, const YAML::Mark& mark, const std::string& msg) const {
  // yaml-cpp marks are 0-based; a null mark (-1) comes from nodes the
  // parser synthesised, and is reported at the document's start.
  const int line = mark.line >= 0 ? mark.line + 1 : 1;
  const int col = mark.column >= 0 ? mark.column + 1 : 1;
  throw Error(source_, path.empty() ? kDocument : path, line, col, msg);
}

Map YamlReader::read_map(const YAML::Node& n, const std::string& path,
                         std::initializer_list<std::string_view> allowed, const char* what) const {
  if (!n.IsMap()) fail(path, n.Mark(), std::string("expected ") + what + ", got " + describe(n));
  Map out;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
    if (!k.IsScalar()) fail(path, k.Mark(), "keys must be plain strings, got " + describe(k));
    const std::string& key = k.Scalar();
    const std::string key_path = join(path, quote_if_needed(key));
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(key_path, k.Mark(), "unknown key " + quote(key) + " (allowed here: " + list + ")");
    }
    for (const Entry& e : out) {
      if (e.key == key) {
        fail(key_path, k.Mark(),
             "duplicate key " + quote(key) + " (first given on line " + std::to_string(e.key_node.Mark().line + 1) +
                 ")");
      }
    }
    if (v.IsNull()) {
      // The value's mark points past the empty value, often at the next
      // line; the key is where the reader should look.
      fail(key_path, k.Mark(), "no value given (null); give a value or remove the key to use the default");
    }
    out.push_back(Entry{key, k, v});
  }
  return out;
}

std::string YamlReader::read_string(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) fail(path, n.Mark(), "expected a string, got " + describe(n));
  const std::string& tag = n.Tag();
  if (tag != "?" && tag != "!" && tag != kStrTag) fail(path, n.Mark(), "expected a string, got a value tagged " + quote(tag));
  return n.Scalar();
}

std::string YamlReader::read_nonempty(const YAML::Node& n, const std::string& path) const {
  std::string s = read_string(n, path);
  if (s.empty()) fail(path, n.Mark(), "must not be empty");
  return s;
}

long long YamlReader::read_int(const YAML::Node& n, const std::string& path, long long lo, long long hi) const {
  if (!n.IsScalar()) fail(path, n.Mark(), "expected an integer, got " + describe(n));
  const std::string& tag = n.Tag();
  const std::string& s = n.Scalar();
  if (tag == "!") fail(path, n.Mark(), "expected an integer, got the quoted string " + quote(s) + " (drop the quotes)");
  if (tag != "?" && tag != kIntTag) fail(path, n.Mark(), "expected an integer, got a value tagged " + quote(tag));
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  if (i == s.size()) fail(path, n.Mark(), "expected an integer, got " + quote(s));
  // Accumulate with a ceiling so a 40-digit number is "out of range", not
  // undefined behaviour.
  constexpr long long kCeiling = 1'000'000'000'000LL;
  long long v = 0;
  bool huge = false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') fail(path, n.Mark(), "expected a decimal integer, got " + quote(s));
    if (v < kCeiling) v = v * 10 + (s[i] - '0');
    else huge = true;
  }
  if (negative) v = -v;
  if (huge || v < lo || v > hi) {
    fail(path, n.Mark(),
         "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + quote(s, 24));
  }
  return v;
}

bool YamlReader::read_bool(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) fail(path, n.Mark(), "expected true or false, got " + describe(n));
  const std::string& tag = n.Tag();
  const std::string& s = n.Scalar();
  // YAML 1.2 core schema booleans only: "yes"/"on" (YAML 1.1) are the kind
  // of value that means something different to every reader.
  if (tag == "?" || tag == kBoolTag) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  fail(path, n.Mark(), "expected true or false, got " + (tag == "!" ? "the quoted string " + quote(s) : quote(s)));
}

net::Endpoint YamlReader::read_endpoint(const YAML::Node& n, const std::string& path, std::uint16_t default_port) const {
  const std::string s = read_string(n, path);
  std::string why;
  auto e = net::parse_endpoint(s, default_port, &why);
  if (!e) fail(path, n.Mark(), "bad address " + quote(s) + ": " + why);
  return *e;
}

}  // namespace nxdns::config::detail
