// The `cache:` section: size, TTL bounds, prefetch, serve-stale and the
// cache file kept across restarts.
#include "config/sections.hpp"

namespace nxdns::config::detail {

void read_cache(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "cache";
  const Map m = r.read_map(n, path,
                           {"enabled", "max_bytes", "min_ttl", "max_ttl", "prefetch", "serve_stale", "stale_window",
                            "persist_file", "persist_interval"},
                           "a mapping");
  Cache& c = cfg.cache;
  if (const Entry* e = find(m, "enabled")) c.enabled = r.read_bool(e->value, join(path, "enabled"));
  if (const Entry* e = find(m, "max_bytes")) {
    // Below 64 KiB a household's working set cannot fit; above 1 GiB is
    // more than a Pi has.
    c.max_bytes = static_cast<std::size_t>(r.read_int(e->value, join(path, "max_bytes"), 65536, 1LL << 30));
  }
  const Entry* lo = find(m, "min_ttl");
  const Entry* hi = find(m, "max_ttl");
  if (lo) c.min_ttl = static_cast<std::uint32_t>(r.read_int(lo->value, join(path, "min_ttl"), 0, 86400));
  if (hi) c.max_ttl = static_cast<std::uint32_t>(r.read_int(hi->value, join(path, "max_ttl"), 1, 7 * 86400));
  if (c.min_ttl > c.max_ttl) {
    const Entry* blame = lo ? lo : hi;
    r.fail(join(path, blame == lo ? "min_ttl" : "max_ttl"), blame->value.Mark(),
           "min_ttl (" + std::to_string(c.min_ttl) + ") must not exceed max_ttl (" + std::to_string(c.max_ttl) + ")");
  }
  if (const Entry* e = find(m, "prefetch")) c.prefetch = r.read_bool(e->value, join(path, "prefetch"));
  if (const Entry* e = find(m, "serve_stale")) c.serve_stale = r.read_bool(e->value, join(path, "serve_stale"));
  if (const Entry* e = find(m, "stale_window")) {
    c.stale_window = std::chrono::seconds(r.read_int(e->value, join(path, "stale_window"), 1, 7 * 86400));
  }
  if (const Entry* e = find(m, "persist_file")) {
    const std::string key = join(path, "persist_file");
    const std::string file = r.read_nonempty(e->value, key);
    // The daemon may run from another directory than the one `nxdns check`
    // ran in; the file's directory need not exist yet (systemd creates a
    // StateDirectory when the unit starts), so only the form is checked.
    if (file.front() != '/') r.fail(key, e->value.Mark(), "must be an absolute path, got " + describe(e->value));
    if (file.find('\0') != std::string::npos) r.fail(key, e->value.Mark(), "path contains a NUL byte");
    if (file.back() == '/') r.fail(key, e->value.Mark(), "names a directory, got " + describe(e->value) + "; give a file in it");
    c.persist_file = file;
  }
  if (const Entry* e = find(m, "persist_interval")) {
    // At least a minute: each save rewrites the whole file, and an SD card
    // wears with every write. At most a day, the default stale window: a
    // file older than that holds little a restart could still serve.
    c.persist_interval = std::chrono::seconds(r.read_int(e->value, join(path, "persist_interval"), 60, 86400));
  }
}

}  // namespace nxdns::config::detail
