// The sections that say which names are answered at home: `local_zones`
// (zones sent to plain-DNS servers on the LAN), `home_router`, `hosts_files`
// and `records` (src/route/ decides each query's route from them).
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "config/posix_file.hpp"
#include "config/sections.hpp"
#include "config/url.hpp"
#include "dns/message.hpp"
#include "route/local_records.hpp"
#include "route/lower_case.hpp"
#include "route/special_zones.hpp"

namespace nxdns::config::detail {

namespace {

// A hosts file is a household's handful of names, not a blocklist (those
// belong in a list the daemon keeps compact); a few MiB is far past any
// real one and keeps a mistaken path from filling memory at load.
constexpr std::size_t kMaxHostsFileBytes = 4u << 20;

// Lower case, no trailing dot; nullopt when not a valid name.
std::optional<std::string> canonical_zone(std::string_view text) {
  if (text == "." || text.empty()) return std::nullopt;
  auto wire = dns::name_from_text(text);
  if (!wire) return std::nullopt;
  std::string out = dns::name_to_text(*wire);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return route::lower_case(std::move(out));
}

std::optional<std::string> read_text_file(const std::string& file, std::string* why) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    *why = errno_text(errno);
    return std::nullopt;
  }
  // stat first: open() on a FIFO would block the loader.
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    return std::nullopt;
  }
  if (static_cast<std::size_t>(st.st_size) > kMaxHostsFileBytes) {
    *why = "larger than 4 MiB; a blocklist belongs in blocking, not in hosts_files";
    return std::nullopt;
  }
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    *why = errno_text(errno);
    return std::nullopt;
  }
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *why = errno_text(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxHostsFileBytes) {
      *why = "larger than 4 MiB; a blocklist belongs in blocking, not in hosts_files";
      return std::nullopt;
    }
  }
  return text;
}

}  // namespace

// local_zones: [{zone: NAME, servers: [IP[:PORT], ...]}, ...]. The longest
// matching zone decides a name's route, so nesting is allowed; the same
// zone twice is not (which one would win would depend on file order).
void read_local_zones(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "local_zones";
  if (!n.IsSequence()) {
    r.fail(path, n.Mark(),
           "expected a list of {zone: NAME, servers: [IP, ...]} entries (e.g. - zone: lan), got " + describe(n));
  }
  std::size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const std::string ip = at(path, i);
    if (!item.IsMap()) r.fail(ip, item.Mark(), "expected a mapping with zone and servers, got " + describe(item));
    const Map m = r.read_map(item, ip, {"zone", "servers"}, "a mapping with zone and servers");
    const Entry* z = find(m, "zone");
    const Entry* s = find(m, "servers");
    if (!z) r.fail(join(ip, "zone"), item.Mark(), "required key missing: the zone, e.g. \"lan\"");
    if (!s) r.fail(join(ip, "servers"), item.Mark(), "required key missing: the LAN server(s) to ask, e.g. [192.168.1.1]");
    LocalZone lz;
    lz.line = item.Mark().line + 1;
    const std::string text = r.read_nonempty(z->value, join(ip, "zone"));
    const auto zone = canonical_zone(text);
    if (!zone) {
      r.fail(join(ip, "zone"), z->value.Mark(), "not a DNS name: " + quote(text) + " (the root cannot be a local zone)");
    }
    lz.zone = *zone;
    for (const LocalZone& seen : cfg.local.zones) {
      if (seen.zone == lz.zone) {
        r.fail(join(ip, "zone"), z->value.Mark(),
               quote(lz.zone) + " is already given at line " + std::to_string(seen.line) + "; each zone may appear once");
      }
    }
    const std::string sp = join(ip, "servers");
    if (!s->value.IsSequence() || s->value.size() == 0) {
      r.fail(sp, s->value.Mark(), "expected a non-empty list of addresses (e.g. [192.168.1.1]), got " + describe(s->value));
    }
    std::size_t j = 0;
    for (auto si = s->value.begin(); si != s->value.end(); ++si, ++j) {
      const YAML::Node addr = *si;
      const std::string ap = at(sp, j);
      // Plain DNS: the address must be a literal (resolving it would need
      // DNS, which may be this daemon).
      const net::Endpoint ep = r.read_endpoint(addr, ap, 53);
      for (const auto& other : lz.servers) {
        if (other == ep) r.fail(ap, addr.Mark(), ep.to_string() + " is listed twice");
      }
      lz.servers.push_back(ep);
    }
    cfg.local.zones.push_back(std::move(lz));
  }
}

// home_router: auto | off | IP[:PORT].
void read_home_router(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "home_router";
  const std::string text = r.read_nonempty(n, path);
  HomeRouter& h = cfg.local.home_router;
  if (text == "auto") {
    h.mode = HomeRouter::Mode::automatic;
  } else if (text == "off") {
    h.mode = HomeRouter::Mode::off;
  } else {
    std::string why;
    auto ep = net::parse_endpoint(text, 53, &why);
    if (!ep) {
      r.fail(path, n.Mark(), "expected auto, off or the router's IP address, got " + quote(text) + " (" + why + ")");
    }
    h.mode = HomeRouter::Mode::address;
    h.address = *ep;
  }
}

// hosts_files: [PATH, ...]: read now, so that a bad line is a config error
// (named FILE:LINE) and a reload meeting one changes nothing.
void read_hosts_files(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "hosts_files";
  if (!n.IsSequence()) r.fail(path, n.Mark(), "expected a list of file paths (e.g. [/etc/hosts]), got " + describe(n));
  std::size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const std::string ip = at(path, i);
    const std::string file = r.read_nonempty(item, ip);
    if (file.front() != '/') r.fail(ip, item.Mark(), "must be an absolute path, got " + describe(item));
    for (const HostsFile& seen : cfg.local.hosts_files) {
      if (seen.path == file) r.fail(ip, item.Mark(), quote(file) + " is listed twice");
    }
    HostsFile h;
    h.path = file;
    if (r.options().check_files) {
      std::string why;
      const auto text = read_text_file(file, &why);
      if (!text) r.fail(ip, item.Mark(), "cannot read hosts file " + quote(file) + ": " + why);
      auto records = route::parse_hosts(*text, file, &why);
      if (!records) r.fail(ip, item.Mark(), "bad hosts file: " + why);
      h.records = std::move(*records);
    }
    cfg.local.hosts_files.push_back(std::move(h));
  }
}

// records: ["nas.home.arpa. 300 IN A 192.168.1.20", ...] in zone-file
// syntax (route::parse_record says which).
void read_records(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "records";
  if (!n.IsSequence()) {
    r.fail(path, n.Mark(), "expected a list of records (e.g. [\"nas.home.arpa. 300 IN A 192.168.1.20\"]), got " + describe(n));
  }
  std::size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const std::string ip = at(path, i);
    const std::string text = r.read_nonempty(item, ip);
    std::string why;
    auto rec = route::parse_record(text, ip, &why);
    if (!rec) r.fail(ip, item.Mark(), "bad record " + quote(text) + ": " + why);
    cfg.local.records.push_back(std::move(*rec));
  }
}

// forward_special_zones: [NAME, ...], each a built-in zone answered with
// NXDOMAIN (localhost is not one: it is this host).
void read_forward_special_zones(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "forward_special_zones";
  if (!n.IsSequence()) r.fail(path, n.Mark(), "expected a list of built-in zone names (e.g. [test]), got " + describe(n));
  std::size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const std::string ip = at(path, i);
    const std::string text = r.read_nonempty(item, ip);
    const auto zone = canonical_zone(text);
    bool known = false;
    for (const route::SpecialZone& z : route::special_zones()) {
      if (zone && z.name == *zone && z.kind == route::SpecialKind::empty_zone) known = true;
    }
    if (!known) {
      r.fail(ip, item.Mark(),
             quote(text) + " is not a built-in zone answered here (e.g. test, invalid, onion, home.arpa, "
                           "10.in-addr.arpa; see the configuration reference)");
    }
    for (const auto& seen : cfg.local.forward_special_zones) {
      if (seen == *zone) r.fail(ip, item.Mark(), quote(*zone) + " is listed twice");
    }
    cfg.local.forward_special_zones.push_back(*zone);
  }
}

void check_local_records(const YamlReader& r, const YAML::Node& root, const Config& cfg) {
  std::vector<route::Record> all = cfg.local.records;
  for (const HostsFile& h : cfg.local.hosts_files) all.insert(all.end(), h.records.begin(), h.records.end());
  if (all.empty()) return;
  std::string why;
  // The conflict names both records' sources (file:line, records[N]).
  if (!route::LocalRecords::build(std::move(all), &why)) r.fail("records", root.Mark(), why);
}

}  // namespace nxdns::config::detail
