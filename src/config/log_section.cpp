// The `log:` section: the log level.
#include "config/sections.hpp"

#include "config/url.hpp"

namespace nxdns::config::detail {

void read_log(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "log";
  const Map m = r.read_map(n, path, {"level"}, "a mapping");
  if (const Entry* e = find(m, "level")) {
    const std::string p = join(path, "level");
    const std::string s = r.read_string(e->value, p);
    if (s == "debug") cfg.log_level = log::Level::debug;
    else if (s == "info") cfg.log_level = log::Level::info;
    else if (s == "warn") cfg.log_level = log::Level::warn;
    else if (s == "error") cfg.log_level = log::Level::error;
    else r.fail(p, e->value.Mark(), "expected debug, info, warn or error, got " + quote(s));
  }
}

}  // namespace nxdns::config::detail
