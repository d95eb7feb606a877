// The `budgets:` section: the per-attempt and per-query time budgets.
#include "config/sections.hpp"

namespace nxdns::config::detail {

void read_budgets(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "budgets";
  const Map m = r.read_map(n, path, {"attempt_ms", "total_ms"}, "a mapping");
  const Entry* a = find(m, "attempt_ms");
  const Entry* t = find(m, "total_ms");
  if (a) cfg.budgets.attempt = std::chrono::milliseconds(r.read_int(a->value, join(path, "attempt_ms"), 100, 30000));
  if (t) cfg.budgets.total = std::chrono::milliseconds(r.read_int(t->value, join(path, "total_ms"), 200, 60000));
  if (cfg.budgets.total < cfg.budgets.attempt) {
    const std::string att = std::to_string(cfg.budgets.attempt.count());
    const std::string tot = std::to_string(cfg.budgets.total.count());
    // Blame the key the user wrote; if both were written, the total.
    if (t) {
      r.fail(join(path, "total_ms"), t->value.Mark(),
             "must be at least attempt_ms (" + att + (a ? "" : ", the default") + "), got " + tot);
    }
    r.fail(join(path, "attempt_ms"), a->value.Mark(),
           "must not exceed total_ms (" + tot + ", the default), got " + att);
  }
}

}  // namespace nxdns::config::detail
