// The `upstreams:` section: each entry's URL, address, TLS name, CA file and
// DoH method, and no server listed twice.
#include "config/sections.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "config/file_digest.hpp"
#include "config/posix_file.hpp"
#include "config/url.hpp"
#include "net/host_name.hpp"

namespace nxdns::config::detail {

namespace {

// Checks that `file` can serve as trust anchors and returns the SHA-256 of
// its contents (nothing when files are not checked).
std::optional<Sha256> check_ca_file(const YamlReader& r, const std::string& file, const YAML::Node& n,
                                    const std::string& path) {
  // Relative paths would resolve against the daemon's working directory
  // (/ under systemd), not the config file's: a trap either way.
  if (file.front() != '/') r.fail(path, n.Mark(), "must be an absolute path, got " + quote(file));
  if (file.find('\0') != std::string::npos) r.fail(path, n.Mark(), "path contains a NUL byte");
  if (!r.options().check_files) return std::nullopt;
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    r.fail(path, n.Mark(), "cannot read CA file " + quote(file) + ": " + errno_text(errno));
  }
  // stat first: open() on a FIFO would block the loader.
  if (!S_ISREG(st.st_mode)) r.fail(path, n.Mark(), "CA file " + quote(file) + " is not a regular file");
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) r.fail(path, n.Mark(), "cannot read CA file " + quote(file) + ": " + errno_text(errno));
  if (st.st_size == 0) r.fail(path, n.Mark(), "CA file " + quote(file) + " is empty");
  int err = 0;
  auto digest = sha256_of_fd(fd.get(), &err);
  if (!digest) r.fail(path, n.Mark(), "cannot read CA file " + quote(file) + ": " + errno_text(err));
  return digest;
}

Upstream read_upstream(const YamlReader& r, const YAML::Node& n, const std::string& path, YAML::Mark& url_mark) {
  const Map m = r.read_map(n, path, {"url", "tls_name", "priority", "enabled", "ca_file", "address", "method"},
                           "a mapping with at least a url key");
  Upstream u;
  u.line = n.Mark().line + 1;

  const Entry* url = find(m, "url");
  if (!url) r.fail(join(path, "url"), n.Mark(), "required key missing");
  u.url = r.read_nonempty(url->value, join(path, "url"));
  url_mark = url->value.Mark();
  std::string why;
  auto parsed = detail::parse_upstream_url(u.url, &why);
  if (!parsed) r.fail(join(path, "url"), url->value.Mark(), "bad URL: " + why);
  u.protocol = parsed->protocol;
  u.host = parsed->host;
  u.port = parsed->port;
  u.path = parsed->path;
  const bool doh = u.protocol == Protocol::doh;

  if (const Entry* e = find(m, "address")) {
    const std::string p = join(path, "address");
    if (!doh) r.fail(p, e->key_node.Mark(), "only for https:// upstreams (a tls:// URL already holds the IP address)");
    if (parsed->ip) {
      r.fail(p, e->key_node.Mark(),
             "the URL host is already an IP address; remove address (or put a host name in the URL)");
    }
    const std::string s = r.read_nonempty(e->value, p);
    auto ep = net::make_endpoint(s, u.port);
    if (!ep) {
      std::string unused;
      if (net::parse_endpoint(s, kDefaultDnsPort, &unused)) {
        r.fail(p, e->value.Mark(), "give a bare IP address without brackets or port (the port comes from the URL), got " + quote(s));
      }
      r.fail(p, e->value.Mark(), "not an IP address: " + quote(s) + " (host names would need DNS to resolve)");
    }
    u.address = *ep;
  } else if (parsed->ip) {
    u.address = *parsed->ip;
  } else {
    r.fail(join(path, "address"), n.Mark(),
           "required because the URL host " + quote(u.host) +
               " is a name: give its IP address (looking it up would need DNS, which may be this daemon)");
  }

  if (const Entry* e = find(m, "tls_name")) {
    const std::string p = join(path, "tls_name");
    u.tls_name = r.read_nonempty(e->value, p);
    if (net::is_ip_literal(u.tls_name)) {
      r.fail(p, e->value.Mark(), "must be a host name: certificates are checked by name, not by IP address");
    }
    if (!net::is_host_name(u.tls_name)) r.fail(p, e->value.Mark(), "not a valid host name: " + quote(u.tls_name));
  } else if (!parsed->ip) {
    u.tls_name = u.host;
  } else {
    r.fail(join(path, "tls_name"), n.Mark(),
           "required because the URL host is an IP address: give the name the server's certificate is issued to");
  }

  if (const Entry* e = find(m, "priority")) {
    u.priority = static_cast<int>(r.read_int(e->value, join(path, "priority"), -1'000'000, 1'000'000));
  }
  if (const Entry* e = find(m, "enabled")) u.enabled = r.read_bool(e->value, join(path, "enabled"));
  if (const Entry* e = find(m, "ca_file")) {
    const std::string p = join(path, "ca_file");
    std::string f = r.read_nonempty(e->value, p);
    u.ca_digest = check_ca_file(r, f, e->value, p);
    u.ca_file = std::move(f);
  }
  if (const Entry* e = find(m, "method")) {
    const std::string p = join(path, "method");
    if (!doh) r.fail(p, e->key_node.Mark(), "only for https:// upstreams");
    const std::string s = r.read_string(e->value, p);
    if (s == "post" || s == "POST") {
      u.method = DohMethod::post;
    } else if (s == "get" || s == "GET") {
      u.method = DohMethod::get;
    } else {
      r.fail(p, e->value.Mark(), "expected post or get, got " + quote(s));
    }
  }
  return u;
}

// Two spellings of one server (tls://192.0.2.1 and tls://192.0.2.1:853)
// are one server: compare what is dialed and asked, not the text.
std::string identity(const Upstream& u) {
  std::string host;
  if (net::is_ip_literal(u.host)) {
    host = net::make_endpoint(u.host, 0)->host_string();
  } else {
    for (char c : u.host) host += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  }
  return std::string(u.protocol == Protocol::dot ? "tls" : "https") + "|" + host + "|" + std::to_string(u.port) +
         "|" + u.path;
}

}  // namespace

void read_upstreams(const YamlReader& r, const YAML::Node& n, Config& cfg) {
  const std::string path = "upstreams";
  if (!n.IsSequence()) r.fail(path, n.Mark(), "expected a list of upstreams, got " + describe(n));
  if (n.size() == 0) r.fail(path, n.Mark(), "must list at least one upstream");
  std::vector<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node item = *it;
    const std::string p = at(path, cfg.upstreams.size());
    if (item.IsNull()) r.fail(p, item.Mark(), "empty list entry");
    YAML::Mark url_mark;
    Upstream u = read_upstream(r, item, p, url_mark);
    const std::string id = identity(u);
    for (std::size_t j = 0; j < seen.size(); ++j) {
      if (seen[j] == id) {
        r.fail(join(p, "url"), url_mark,
               "same server as " + at(path, j) + " (line " + std::to_string(cfg.upstreams[j].line) + ")");
      }
    }
    seen.push_back(id);
    cfg.upstreams.push_back(std::move(u));
  }
  bool any_enabled = false;
  for (const Upstream& u : cfg.upstreams) any_enabled = any_enabled || u.enabled;
  if (!any_enabled) r.fail(path, n.Mark(), "every upstream is disabled; enable at least one");
}

}  // namespace nxdns::config::detail
