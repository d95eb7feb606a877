#include "config/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <initializer_list>
#include <sstream>
#include <string_view>
#include <system_error>

#include "config/url.hpp"

namespace nxdns::config {

namespace {

using detail::quote;

// Config files are a few hundred bytes. The cap keeps `nxdns check /dev/zero`
// (or a mistyped path to a log file) from eating the Pi's memory.
constexpr std::size_t kMaxFileBytes = 1 << 20;

constexpr const char* kDocument = "<document>";
constexpr const char* kStrTag = "tag:yaml.org,2002:str";
constexpr const char* kIntTag = "tag:yaml.org,2002:int";
constexpr const char* kBoolTag = "tag:yaml.org,2002:bool";

std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

std::string format_what(const std::string& file, const std::string& key_path, int line, int column,
                        const std::string& message) {
  if (line <= 0) return one_line(file) + ": " + one_line(message);
  return one_line(file) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + one_line(key_path) +
         ": " + one_line(message);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(int err) { return std::generic_category().message(err); }

// Records where each document starts; the node tree comes from YAML::Load.
struct DocumentStarts final : YAML::EventHandler {
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The walk over the YAML tree. Every check that can fail goes through fail(),
// so each error carries the file, key path and mark of the node at fault.
class Loader {
 public:
  Loader(std::string source, const LoadOptions& opts) : source_(std::move(source)), opts_(opts) {}

  Config run(const std::string& text);

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  using Map = std::vector<Entry>;

  [[noreturn]] void fail(const std::string& path, const YAML::Mark& mark, const std::string& msg) const {
    // yaml-cpp marks are 0-based; a null mark (-1) comes from nodes the
    // parser synthesised, and is reported at the document's start.
    const int line = mark.line >= 0 ? mark.line + 1 : 1;
    const int col = mark.column >= 0 ? mark.column + 1 : 1;
    throw Error(source_, path.empty() ? kDocument : path, line, col, msg);
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

  static std::string describe(const YAML::Node& n) {
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

  // A mapping, read with the checks YAML leaves to us: keys are plain
  // strings, no key twice (yaml-cpp keeps both and lookups would silently
  // take one), no unknown key, no null value (an empty `key:` is almost
  // always an indentation slip, and silently meaning "default" hides it).
  Map read_map(const YAML::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed,
               const char* what) const {
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

  // Keys reaching a path are known names, except in the unknown/duplicate
  // key errors themselves, where the key is the user's text.
  static std::string quote_if_needed(const std::string& key) {
    for (char c : key) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
        return quote(key);
    }
    return key.empty() ? quote(key) : key;
  }

  static const Entry* find(const Map& m, std::string_view key) {
    for (const Entry& e : m)
      if (e.key == key) return &e;
    return nullptr;
  }

  std::string read_string(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(path, n.Mark(), "expected a string, got " + describe(n));
    const std::string& tag = n.Tag();
    if (tag != "?" && tag != "!" && tag != kStrTag) fail(path, n.Mark(), "expected a string, got a value tagged " + quote(tag));
    return n.Scalar();
  }

  std::string read_nonempty(const YAML::Node& n, const std::string& path) const {
    std::string s = read_string(n, path);
    if (s.empty()) fail(path, n.Mark(), "must not be empty");
    return s;
  }

  long long read_int(const YAML::Node& n, const std::string& path, long long lo, long long hi) const {
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

  bool read_bool(const YAML::Node& n, const std::string& path) const {
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

  net::Endpoint read_endpoint(const YAML::Node& n, const std::string& path, std::uint16_t default_port) const {
    const std::string s = read_string(n, path);
    std::string why;
    auto e = net::parse_endpoint(s, default_port, &why);
    if (!e) fail(path, n.Mark(), "bad address " + quote(s) + ": " + why);
    return *e;
  }

  void read_listen(const YAML::Node& n, Config& cfg) {
    const std::string path = "listen";
    if (!n.IsSequence()) fail(path, n.Mark(), "expected a list of addresses, got " + describe(n));
    if (n.size() == 0) fail(path, n.Mark(), "must list at least one address");
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node item = *it;
      const std::string p = at(path, cfg.listen.size());
      if (item.IsNull()) fail(p, item.Mark(), "empty list entry");
      net::Endpoint e = read_endpoint(item, p, kDefaultDnsPort);
      for (std::size_t j = 0; j < cfg.listen.size(); ++j) {
        const net::Endpoint& o = cfg.listen[j];
        if (o == e) {
          fail(p, item.Mark(), e.to_string() + " is listed twice (first as " + at(path, j) + ")");
        }
        if (o.family() == e.family() && o.port() == e.port() && (net::is_unspecified(o) || net::is_unspecified(e))) {
          fail(p, item.Mark(),
               e.to_string() + " overlaps " + at(path, j) + " " + o.to_string() +
                   " (a wildcard address takes the port on every address of its family)");
        }
      }
      cfg.listen.push_back(e);
      listen_marks_.push_back(item.Mark());
    }
  }

  void check_ca_file(const std::string& file, const YAML::Node& n, const std::string& path) const {
    // Relative paths would resolve against the daemon's working directory
    // (/ under systemd), not the config file's: a trap either way.
    if (file.front() != '/') fail(path, n.Mark(), "must be an absolute path, got " + quote(file));
    if (file.find('\0') != std::string::npos) fail(path, n.Mark(), "path contains a NUL byte");
    if (!opts_.check_files) return;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      fail(path, n.Mark(), "cannot read CA file " + quote(file) + ": " + errno_text(errno));
    }
    // stat first: open() on a FIFO would block the loader.
    if (!S_ISREG(st.st_mode)) fail(path, n.Mark(), "CA file " + quote(file) + " is not a regular file");
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) fail(path, n.Mark(), "cannot read CA file " + quote(file) + ": " + errno_text(errno));
    if (st.st_size == 0) fail(path, n.Mark(), "CA file " + quote(file) + " is empty");
  }

  Upstream read_upstream(const YAML::Node& n, const std::string& path, YAML::Mark& url_mark) const {
    const Map m = read_map(n, path, {"url", "tls_name", "priority", "enabled", "ca_file", "address", "method"},
                           "a mapping with at least a url key");
    Upstream u;
    u.line = n.Mark().line + 1;

    const Entry* url = find(m, "url");
    if (!url) fail(join(path, "url"), n.Mark(), "required key missing");
    u.url = read_nonempty(url->value, join(path, "url"));
    url_mark = url->value.Mark();
    std::string why;
    auto parsed = detail::parse_upstream_url(u.url, &why);
    if (!parsed) fail(join(path, "url"), url->value.Mark(), "bad URL: " + why);
    u.protocol = parsed->protocol;
    u.host = parsed->host;
    u.port = parsed->port;
    u.path = parsed->path;
    const bool doh = u.protocol == Protocol::doh;

    if (const Entry* e = find(m, "address")) {
      const std::string p = join(path, "address");
      if (!doh) fail(p, e->key_node.Mark(), "only for https:// upstreams (a tls:// URL already holds the IP address)");
      if (parsed->ip) {
        fail(p, e->key_node.Mark(),
             "the URL host is already an IP address; remove address (or put a host name in the URL)");
      }
      const std::string s = read_nonempty(e->value, p);
      auto ep = net::make_endpoint(s, u.port);
      if (!ep) {
        std::string unused;
        if (net::parse_endpoint(s, kDefaultDnsPort, &unused)) {
          fail(p, e->value.Mark(), "give a bare IP address without brackets or port (the port comes from the URL), got " + quote(s));
        }
        fail(p, e->value.Mark(), "not an IP address: " + quote(s) + " (host names would need DNS to resolve)");
      }
      u.address = *ep;
    } else if (parsed->ip) {
      u.address = *parsed->ip;
    } else {
      fail(join(path, "address"), n.Mark(),
           "required because the URL host " + quote(u.host) +
               " is a name: give its IP address (looking it up would need DNS, which may be this daemon)");
    }

    if (const Entry* e = find(m, "tls_name")) {
      const std::string p = join(path, "tls_name");
      u.tls_name = read_nonempty(e->value, p);
      if (net::is_ip_literal(u.tls_name)) {
        fail(p, e->value.Mark(), "must be a host name: certificates are checked by name, not by IP address");
      }
      if (!detail::is_host_name(u.tls_name)) fail(p, e->value.Mark(), "not a valid host name: " + quote(u.tls_name));
    } else if (!parsed->ip) {
      u.tls_name = u.host;
    } else {
      fail(join(path, "tls_name"), n.Mark(),
           "required because the URL host is an IP address: give the name the server's certificate is issued to");
    }

    if (const Entry* e = find(m, "priority")) {
      u.priority = static_cast<int>(read_int(e->value, join(path, "priority"), -1'000'000, 1'000'000));
    }
    if (const Entry* e = find(m, "enabled")) u.enabled = read_bool(e->value, join(path, "enabled"));
    if (const Entry* e = find(m, "ca_file")) {
      const std::string p = join(path, "ca_file");
      std::string f = read_nonempty(e->value, p);
      check_ca_file(f, e->value, p);
      u.ca_file = std::move(f);
    }
    if (const Entry* e = find(m, "method")) {
      const std::string p = join(path, "method");
      if (!doh) fail(p, e->key_node.Mark(), "only for https:// upstreams");
      const std::string s = read_string(e->value, p);
      if (s == "post" || s == "POST") {
        u.method = DohMethod::post;
      } else if (s == "get" || s == "GET") {
        u.method = DohMethod::get;
      } else {
        fail(p, e->value.Mark(), "expected post or get, got " + quote(s));
      }
    }
    return u;
  }

  // Two spellings of one server (tls://192.0.2.1 and tls://192.0.2.1:853)
  // are one server: compare what is dialed and asked, not the text.
  static std::string identity(const Upstream& u) {
    std::string host;
    if (net::is_ip_literal(u.host)) {
      host = net::make_endpoint(u.host, 0)->host_string();
    } else {
      for (char c : u.host) host += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    }
    return std::string(u.protocol == Protocol::dot ? "tls" : "https") + "|" + host + "|" + std::to_string(u.port) +
           "|" + u.path;
  }

  void read_upstreams(const YAML::Node& n, Config& cfg) const {
    const std::string path = "upstreams";
    if (!n.IsSequence()) fail(path, n.Mark(), "expected a list of upstreams, got " + describe(n));
    if (n.size() == 0) fail(path, n.Mark(), "must list at least one upstream");
    std::vector<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node item = *it;
      const std::string p = at(path, cfg.upstreams.size());
      if (item.IsNull()) fail(p, item.Mark(), "empty list entry");
      YAML::Mark url_mark;
      Upstream u = read_upstream(item, p, url_mark);
      const std::string id = identity(u);
      for (std::size_t j = 0; j < seen.size(); ++j) {
        if (seen[j] == id) {
          fail(join(p, "url"), url_mark,
               "same server as " + at(path, j) + " (line " + std::to_string(cfg.upstreams[j].line) + ")");
        }
      }
      seen.push_back(id);
      cfg.upstreams.push_back(std::move(u));
    }
    bool any_enabled = false;
    for (const Upstream& u : cfg.upstreams) any_enabled = any_enabled || u.enabled;
    if (!any_enabled) fail(path, n.Mark(), "every upstream is disabled; enable at least one");
  }

  void read_budgets(const YAML::Node& n, Config& cfg) const {
    const std::string path = "budgets";
    const Map m = read_map(n, path, {"attempt_ms", "total_ms"}, "a mapping");
    const Entry* a = find(m, "attempt_ms");
    const Entry* t = find(m, "total_ms");
    if (a) cfg.budgets.attempt = std::chrono::milliseconds(read_int(a->value, join(path, "attempt_ms"), 100, 30000));
    if (t) cfg.budgets.total = std::chrono::milliseconds(read_int(t->value, join(path, "total_ms"), 200, 60000));
    if (cfg.budgets.total < cfg.budgets.attempt) {
      const std::string att = std::to_string(cfg.budgets.attempt.count());
      const std::string tot = std::to_string(cfg.budgets.total.count());
      // Blame the key the user wrote; if both were written, the total.
      if (t) {
        fail(join(path, "total_ms"), t->value.Mark(),
             "must be at least attempt_ms (" + att + (a ? "" : ", the default") + "), got " + tot);
      }
      fail(join(path, "attempt_ms"), a->value.Mark(),
           "must not exceed total_ms (" + tot + ", the default), got " + att);
    }
  }

  void read_http(const YAML::Node& n, Config& cfg) {
    const std::string path = "http";
    const Map m = read_map(n, path, {"enabled", "listen"}, "a mapping");
    if (const Entry* e = find(m, "enabled")) cfg.http.enabled = read_bool(e->value, join(path, "enabled"));
    if (const Entry* e = find(m, "listen")) {
      cfg.http.listen = read_endpoint(e->value, join(path, "listen"), kDefaultHttpPort);
      http_listen_mark_ = e->value.Mark();
    }
  }

  void check_http_vs_dns(const Config& cfg) const {
    if (!cfg.http.enabled) return;
    const net::Endpoint& h = cfg.http.listen;
    for (std::size_t j = 0; j < cfg.listen.size(); ++j) {
      const net::Endpoint& d = cfg.listen[j];
      if (d.family() != h.family() || d.port() != h.port()) continue;
      // DNS listens on TCP too, so the same port is a bind conflict.
      if (d == h || net::is_unspecified(d) || net::is_unspecified(h)) {
        const std::string dns = "listen[" + std::to_string(j) + "]";
        if (http_listen_mark_) {
          fail("http.listen", *http_listen_mark_,
               h.to_string() + " conflicts with " + dns + " " + d.to_string() + " (both need TCP on that port)");
        }
        fail(dns, j < listen_marks_.size() ? listen_marks_[j] : YAML::Mark::null_mark(),
             d.to_string() + " conflicts with the web listener's default http.listen " + h.to_string() +
                 " (both need TCP on that port); move one of them");
      }
    }
  }

  void read_cache(const YAML::Node& n, Config& cfg) const {
    const std::string path = "cache";
    const Map m = read_map(n, path,
                           {"enabled", "max_bytes", "min_ttl", "max_ttl", "prefetch", "serve_stale", "stale_window"},
                           "a mapping");
    Cache& c = cfg.cache;
    if (const Entry* e = find(m, "enabled")) c.enabled = read_bool(e->value, join(path, "enabled"));
    if (const Entry* e = find(m, "max_bytes")) {
      // Below 64 KiB a household's working set cannot fit; above 1 GiB is
      // more than a Pi has.
      c.max_bytes = static_cast<std::size_t>(read_int(e->value, join(path, "max_bytes"), 65536, 1LL << 30));
    }
    const Entry* lo = find(m, "min_ttl");
    const Entry* hi = find(m, "max_ttl");
    if (lo) c.min_ttl = static_cast<std::uint32_t>(read_int(lo->value, join(path, "min_ttl"), 0, 86400));
    if (hi) c.max_ttl = static_cast<std::uint32_t>(read_int(hi->value, join(path, "max_ttl"), 1, 7 * 86400));
    if (c.min_ttl > c.max_ttl) {
      const Entry* blame = lo ? lo : hi;
      fail(join(path, blame == lo ? "min_ttl" : "max_ttl"), blame->value.Mark(),
           "min_ttl (" + std::to_string(c.min_ttl) + ") must not exceed max_ttl (" + std::to_string(c.max_ttl) + ")");
    }
    if (const Entry* e = find(m, "prefetch")) c.prefetch = read_bool(e->value, join(path, "prefetch"));
    if (const Entry* e = find(m, "serve_stale")) c.serve_stale = read_bool(e->value, join(path, "serve_stale"));
    if (const Entry* e = find(m, "stale_window")) {
      c.stale_window = std::chrono::seconds(read_int(e->value, join(path, "stale_window"), 1, 7 * 86400));
    }
  }

  void read_log(const YAML::Node& n, Config& cfg) const {
    const std::string path = "log";
    const Map m = read_map(n, path, {"level"}, "a mapping");
    if (const Entry* e = find(m, "level")) {
      const std::string p = join(path, "level");
      const std::string s = read_string(e->value, p);
      if (s == "debug") cfg.log_level = log::Level::debug;
      else if (s == "info") cfg.log_level = log::Level::info;
      else if (s == "warn") cfg.log_level = log::Level::warn;
      else if (s == "error") cfg.log_level = log::Level::error;
      else fail(p, e->value.Mark(), "expected debug, info, warn or error, got " + quote(s));
    }
  }

  // access_control: {allow: [CIDR...], refuse: [CIDR...]}. Longest prefix
  // decides, so the order of the lists carries no meaning; the same prefix
  // twice would, and is rejected.
  void read_access_control(const YAML::Node& n, Config& cfg) const {
    const std::string path = "access_control";
    const Map m = read_map(n, path, {"allow", "refuse"}, "a mapping with allow and/or refuse lists of CIDR prefixes");
    struct Seen {
      server::Cidr net;
      std::string path;
      int line;
    };
    std::vector<Seen> seen;
    for (const Entry& e : m) {
      const std::string p = join(path, e.key);
      const server::Access access = e.key == "allow" ? server::Access::allow : server::Access::refuse;
      if (!e.value.IsSequence()) {
        fail(p, e.value.Mark(), "expected a list of CIDR prefixes (e.g. [192.168.0.0/16, \"fd00::/8\"]), got " + describe(e.value));
      }
      std::size_t i = 0;
      for (auto it = e.value.begin(); it != e.value.end(); ++it, ++i) {
        const YAML::Node item = *it;
        const std::string ip = at(p, i);
        if (item.IsNull()) fail(ip, item.Mark(), "empty list entry");
        const std::string text = read_nonempty(item, ip);
        std::string why;
        const std::optional<server::Cidr> net = server::parse_cidr(text, &why);
        if (!net) fail(ip, item.Mark(), "bad prefix " + quote(text) + ": " + why);
        for (const Seen& s : seen) {
          if (s.net == *net) {
            fail(ip, item.Mark(),
                 net->to_string() + " is already given as " + s.path + " (line " + std::to_string(s.line) +
                     "); each prefix may appear once");
          }
        }
        seen.push_back(Seen{*net, ip, item.Mark().line + 1});
        cfg.access_rules.push_back(server::AccessRule{*net, access});
      }
    }
  }

  void read_client_limits(const YAML::Node& n, Config& cfg) const {
    const std::string path = "client_limits";
    const Map m = read_map(n, path, {"queries_per_second", "burst"}, "a mapping");
    const Entry* q = find(m, "queries_per_second");
    const Entry* b = find(m, "burst");
    if (q) {
      cfg.client_rate.per_second =
          static_cast<std::uint32_t>(read_int(q->value, join(path, "queries_per_second"), 0, 1'000'000));
      // The default burst is ten seconds' worth, as in the compiled default.
      cfg.client_rate.burst = cfg.client_rate.per_second * 10;
    }
    if (b) {
      if (q && cfg.client_rate.per_second == 0) {
        fail(join(path, "burst"), b->key_node.Mark(), "has no effect when queries_per_second is 0 (no limit); remove it");
      }
      cfg.client_rate.burst = static_cast<std::uint32_t>(read_int(b->value, join(path, "burst"), 1, 10'000'000));
    }
  }

  std::string source_;
  LoadOptions opts_;
  std::vector<YAML::Mark> listen_marks_;       // parallel to Config::listen
  std::optional<YAML::Mark> http_listen_mark_;  // set when http.listen was given
};

Config Loader::run(const std::string& text) {
  YAML::Node root;
  try {
    // Count documents with a bare event pass instead of YAML::LoadAll: on a
    // token no rule consumes (a stray ',' at the top level), yaml-cpp 0.7
    // reports an empty document without advancing, forever, and LoadAll
    // collects them until memory runs out (jbeder/yaml-cpp#1040). Such a
    // stall shows as two documents starting at the same position.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    for (int i = 0; i < 3 && parser.HandleNextDocument(starts); ++i) {
    }
    const std::vector<YAML::Mark>& m = starts.marks;
    for (std::size_t i = 1; i < m.size(); ++i) {
      if (m[i].pos == m[i - 1].pos) {
        const auto pos = static_cast<std::size_t>(m[i].pos);
        fail("", m[i], "YAML syntax error: unexpected " + (pos < text.size() ? quote(text.substr(pos, 1)) : "end"));
      }
    }
    if (m.size() > 1) fail("", m[1], "only one YAML document is allowed (found a second \"---\")");
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail("", e.mark, "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    // Not expected from parsing, but load_string promises config::Error only.
    fail("", e.mark, "YAML error: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) {
    fail("", root.IsDefined() ? root.Mark() : YAML::Mark::null_mark(),
         "the file holds no settings; at least \"upstreams\" is required");
  }
  if (!root.IsMap()) fail("", root.Mark(), "expected a mapping of settings at the top level, got " + describe(root));

  try {
    const Map m = read_map(root, "", {"listen", "upstreams", "budgets", "http", "cache", "log", "access_control",
                                      "client_limits"},
                           "a mapping");
    Config cfg;
    cfg.source = source_;
    if (const Entry* e = find(m, "listen")) {
      read_listen(e->value, cfg);
    } else {
      cfg.listen = {*net::parse_endpoint("0.0.0.0:53", std::nullopt, nullptr),
                    *net::parse_endpoint("[::]:53", std::nullopt, nullptr)};
    }
    const Entry* ups = find(m, "upstreams");
    if (!ups) fail("upstreams", root.Mark(), "required key missing: list at least one upstream");
    read_upstreams(ups->value, cfg);
    if (const Entry* e = find(m, "budgets")) read_budgets(e->value, cfg);
    cfg.http.listen = *net::parse_endpoint("127.0.0.1:8053", std::nullopt, nullptr);
    if (const Entry* e = find(m, "http")) read_http(e->value, cfg);
    check_http_vs_dns(cfg);
    if (const Entry* e = find(m, "cache")) read_cache(e->value, cfg);
    if (const Entry* e = find(m, "log")) read_log(e->value, cfg);
    if (const Entry* e = find(m, "access_control")) read_access_control(e->value, cfg);
    if (const Entry* e = find(m, "client_limits")) read_client_limits(e->value, cfg);
    return cfg;
  } catch (const YAML::Exception& e) {
    // The walk only uses non-throwing accessors on checked node types; this
    // is the backstop for the promise that only config::Error escapes.
    fail("", e.mark, std::string("internal error reading YAML: ") + e.what());
  }
}

}  // namespace

Error::Error(std::string file, std::string key_path, int line, int column, std::string message)
    : std::runtime_error(format_what(file, key_path, line, column, message)),
      file_(std::move(file)),
      key_path_(std::move(key_path)),
      line_(line),
      column_(column),
      message_(std::move(message)) {}

Config load_string(const std::string& yaml_text, const std::string& source_name, const LoadOptions& options) {
  return Loader(source_name, options).run(yaml_text);
}

Config load_file(const std::string& path, const LoadOptions& options) {
  auto cannot = [&](const std::string& why) { return Error(path, "", 0, 0, "cannot read: " + why); };
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw cannot(errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw cannot(errno_text(errno));
  if (S_ISDIR(st.st_mode)) throw cannot(errno_text(EISDIR));
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw cannot(errno_text(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxFileBytes) throw cannot("larger than 1 MiB; not a config file");
  }
  return load_string(text, path, options);
}

}  // namespace nxdns::config
