// The `blocking:` section: which lists block names, how often URL lists are
// fetched again, what is never blocked, what a blocked name gets, and which
// clients are not filtered. The lists themselves are read off the event
// loop (src/block/); here only their form is checked, and with
// LoadOptions::check_files that each file list can be opened.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "config/posix_file.hpp"
#include "config/sections.hpp"
#include "config/url.hpp"
#include "dns/message.hpp"
#include "route/lower_case.hpp"

namespace nxdns::config::detail {

namespace {

// "90s", "30m", "24h", "7d" or a number of seconds.
std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  std::uint64_t unit = 1;
  switch (text.back()) {
    case 's': unit = 1; text.remove_suffix(1); break;
    case 'm': unit = 60; text.remove_suffix(1); break;
    case 'h': unit = 3600; text.remove_suffix(1); break;
    case 'd': unit = 86400; text.remove_suffix(1); break;
    default: break;
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return std::chrono::seconds(static_cast<std::int64_t>(v * unit));
}

std::string lower_name(std::string_view text) {
  std::string out(text);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return route::lower_case(std::move(out));
}

void read_lists(const YamlReader& r, const YAML::Node& n, const std::string& path, Blocking& b) {
  if (!n.IsSequence()) {
    r.fail(path, n.Mark(), "expected a list of {file: PATH} or {url: URL} entries, got " + describe(n));
  }
  std::size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const std::string ip = at(path, i);
    if (!item.IsMap()) r.fail(ip, item.Mark(), "expected a mapping with file or url, got " + describe(item));
    const Map m = r.read_map(item, ip, {"file", "url", "ca_file"}, "a mapping with file or url");
    const Entry* f = find(m, "file");
    const Entry* u = find(m, "url");
    const Entry* ca = find(m, "ca_file");
    if ((f != nullptr) == (u != nullptr)) r.fail(ip, item.Mark(), "give exactly one of file and url");
    BlockListSource s;
    s.line = item.Mark().line + 1;
    if (f) {
      const std::string key = join(ip, "file");
      s.file = r.read_nonempty(f->value, key);
      if (s.file.front() != '/') r.fail(key, f->value.Mark(), "must be an absolute path, got " + describe(f->value));
      if (ca) r.fail(join(ip, "ca_file"), ca->key_node.Mark(), "only for url lists");
      if (r.options().check_files) {
        struct stat st {};
        if (::stat(s.file.c_str(), &st) != 0) {
          r.fail(key, f->value.Mark(), "cannot read list " + quote(s.file) + ": " + errno_text(errno));
        }
        if (!S_ISREG(st.st_mode)) r.fail(key, f->value.Mark(), "list " + quote(s.file) + " is not a regular file");
        if (::access(s.file.c_str(), R_OK) != 0) {
          r.fail(key, f->value.Mark(), "cannot read list " + quote(s.file) + ": " + errno_text(errno));
        }
      }
    } else {
      const std::string key = join(ip, "url");
      s.url = r.read_nonempty(u->value, key);
      // Lists come over HTTPS only: a list fetched in the clear could be
      // swapped on the way for one that blocks (or allows) anything.
      if (s.url.rfind("https://", 0) != 0 || s.url.size() <= 8) {
        r.fail(key, u->value.Mark(), "must be an https:// URL, got " + describe(u->value));
      }
      if (ca) {
        const std::string ck = join(ip, "ca_file");
        s.ca_file = r.read_nonempty(ca->value, ck);
        if (s.ca_file->front() != '/') r.fail(ck, ca->value.Mark(), "must be an absolute path");
        if (r.options().check_files && ::access(s.ca_file->c_str(), R_OK) != 0) {
          r.fail(ck, ca->value.Mark(), "cannot read CA file " + quote(*s.ca_file) + ": " + errno_text(errno));
        }
      }
    }
    for (const auto& seen : b.lists) {
      if ((!s.file.empty() && seen.file == s.file) || (!s.url.empty() && seen.url == s.url)) {
        r.fail(ip, item.Mark(), "this list is already given at line " + std::to_string(seen.line));
      }
    }
    b.lists.push_back(std::move(s));
  }
}

void read_groups(const YamlReader& r, const YAML::Node& n, const std::string& path, Blocking& b) {
  if (!n.IsSequence()) {
    r.fail(path, n.Mark(), "expected a list of {clients: [CIDR...], blocking: BOOL} entries, got " + describe(n));
  }
  std::vector<std::pair<server::Cidr, int>> seen;
  std::size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const std::string ip = at(path, i);
    if (!item.IsMap()) r.fail(ip, item.Mark(), "expected a mapping with clients and blocking, got " + describe(item));
    const Map m = r.read_map(item, ip, {"clients", "blocking"}, "a mapping with clients and blocking");
    const Entry* c = find(m, "clients");
    const Entry* bl = find(m, "blocking");
    if (!c) r.fail(join(ip, "clients"), item.Mark(), "required key missing: the client prefixes, e.g. [192.168.1.0/28]");
    if (!bl) r.fail(join(ip, "blocking"), item.Mark(), "required key missing: true or false");
    BlockGroup g;
    g.blocking = r.read_bool(bl->value, join(ip, "blocking"));
    const std::string cp = join(ip, "clients");
    if (!c->value.IsSequence() || c->value.size() == 0) {
      r.fail(cp, c->value.Mark(), "expected a non-empty list of CIDR prefixes, got " + describe(c->value));
    }
    std::size_t j = 0;
    for (auto ci = c->value.begin(); ci != c->value.end(); ++ci, ++j) {
      const YAML::Node cn = *ci;
      const std::string cpi = at(cp, j);
      const std::string text = r.read_nonempty(cn, cpi);
      std::string why;
      auto net = server::parse_cidr(text, &why);
      if (!net) r.fail(cpi, cn.Mark(), "bad prefix " + quote(text) + ": " + why);
      for (const auto& [other, line] : seen) {
        if (other == *net) {
          r.fail(cpi, cn.Mark(), net->to_string() + " is already in a group at line " + std::to_string(line) +
                                     "; each prefix may appear once");
        }
      }
      seen.emplace_back(*net, cn.Mark().line + 1);
      g.clients.push_back(*net);
    }
    b.groups.push_back(std::move(g));
  }
}

}  // namespace

void read_blocking(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "blocking";
  const Map m = r.read_map(n, path, {"lists", "refresh", "allow", "answer", "groups", "state_dir"}, "a mapping");
  Blocking& b = cfg.blocking;
  if (const Entry* e = find(m, "lists")) read_lists(r, e->value, join(path, "lists"), b);
  if (const Entry* e = find(m, "refresh")) {
    const std::string key = join(path, "refresh");
    const std::string text = r.read_nonempty(e->value, key);
    const auto d = parse_duration(text);
    // At least 15 minutes: list hosts ask for no more (most lists change
    // daily); at most a week.
    if (!d || *d < std::chrono::minutes(15) || *d > std::chrono::hours(24 * 7)) {
      r.fail(key, e->value.Mark(), "expected a duration from 15m to 7d (e.g. \"24h\"), got " + quote(text));
    }
    b.refresh = *d;
  }
  if (const Entry* e = find(m, "allow")) {
    const std::string key = join(path, "allow");
    if (!e->value.IsSequence()) r.fail(key, e->value.Mark(), "expected a list of names, got " + describe(e->value));
    std::size_t i = 0;
    for (auto it = e->value.begin(); it != e->value.end(); ++it, ++i) {
      const YAML::Node item = *it;
      const std::string text = r.read_nonempty(item, at(key, i));
      if (text == "." || !dns::name_from_text(text)) r.fail(at(key, i), item.Mark(), "not a DNS name: " + quote(text));
      b.allow.push_back(lower_name(text));
    }
  }
  if (const Entry* e = find(m, "answer")) {
    const std::string key = join(path, "answer");
    const std::string text = r.read_nonempty(e->value, key);
    if (text == "nxdomain") {
      b.answer = Blocking::Answer::nxdomain;
    } else if (text == "null") {
      b.answer = Blocking::Answer::null;
    } else if (text == "refused") {
      b.answer = Blocking::Answer::refused;
    } else {
      r.fail(key, e->value.Mark(), "expected nxdomain, null or refused, got " + quote(text));
    }
  }
  if (const Entry* e = find(m, "groups")) read_groups(r, e->value, join(path, "groups"), b);
  if (const Entry* e = find(m, "state_dir")) {
    const std::string key = join(path, "state_dir");
    b.state_dir = r.read_nonempty(e->value, key);
    if (b.state_dir.front() != '/') r.fail(key, e->value.Mark(), "must be an absolute path, got " + describe(e->value));
  }
}

}  // namespace nxdns::config::detail
