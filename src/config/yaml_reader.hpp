#pragma once
// The typed walk over a YAML tree: a mapping read with its keys checked
// (plain, known, once, not null), strings, integers in a range, booleans and
// addresses, each failure thrown as config::Error with the file, key path and
// line:column of the node at fault. The sections (sections.hpp) say what
// each key means; this says how a value is read. Internal to config/.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "net/endpoint.hpp"

namespace nxdns::config::detail {

// One key of a mapping, with the nodes its errors point at.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};
using Map = std::vector<Entry>;

// "a.b", or "b" at the top level.
std::string join(const std::string& path, std::string_view key);
// "a[3]".
std::string at(const std::string& path, std::size_t i);
// A node as an error names it: "null", "a list", "a mapping" or its quoted
// (and, for a URL, redacted) text.
std::string describe(const YAML::Node& n);
const Entry* find(const Map& m, std::string_view key);

class YamlReader {
 public:
  YamlReader(std::string source, const LoadOptions& options) : source_(std::move(source)), options_(options) {}

  const LoadOptions& options() const { return options_; }

  // Throws the Error for `path` (the document when empty) at `mark`.
  [[noreturn]] void fail(const std::string& path, const YAML::Mark& mark, const std::string& msg) const;

  // A mapping, read with the checks YAML leaves to us: keys are plain
  // strings, no key twice (yaml-cpp keeps both and lookups would silently
  // take one), no unknown key, no null value (an empty `key:` is almost
  // always an indentation slip, and silently meaning "default" hides it).
  Map read_map(const YAML::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed,
               const char* what) const;
  std::string read_string(const YAML::Node& n, const std::string& path) const;
  std::string read_nonempty(const YAML::Node& n, const std::string& path) const;
  long long read_int(const YAML::Node& n, const std::string& path, long long lo, long long hi) const;
  bool read_bool(const YAML::Node& n, const std::string& path) const;
  net::Endpoint read_endpoint(const YAML::Node& n, const std::string& path, std::uint16_t default_port) const;

 private:
  std::string source_;
  LoadOptions options_;
};

}  // namespace nxdns::config::detail
