#pragma once
// The daemon's configuration as plain structs. load_* validates everything up
// front: a Config that exists is a Config the daemon can start from.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "net/endpoint.hpp"
#include "net/host_name.hpp"
#include "route/local_records.hpp"
#include "server/access_control.hpp"
#include "server/client_limits.hpp"
#include "upstream/budgets.hpp"

namespace nxdns::config {

enum class Protocol { dot, doh };
using Sha256 = std::array<std::uint8_t, 32>;
enum class DohMethod { post, get };

struct Upstream {
  std::string url;          // as written in the file
  Protocol protocol = Protocol::dot;
  // URL host as written (IP literal for DoT; name or IP for DoH). An IPv6
  // literal is stored without its brackets.
  std::string host;
  std::uint16_t port = 853; // from the URL, else 853 (tls) / 443 (https)
  std::string path;         // DoH only, e.g. "/dns-query"; "" for DoT
  // Where to connect. DoT: the URL's IP. DoH: the URL host if it is an IP
  // literal, else the `address` key (required then: resolving the name would
  // need DNS, which may be this daemon).
  net::Endpoint address;
  std::string tls_name;     // SNI and certificate name; defaults to a URL host name
  int priority = 0;         // lower is preferred; ties keep file order
  bool enabled = true;
  std::optional<std::string> ca_file;  // absolute; was readable at load time
  // SHA-256 of ca_file's contents as the loader read them; unset without a
  // ca_file, or when LoadOptions::check_files is off.
  std::optional<Sha256> ca_digest;
  DohMethod method = DohMethod::post;  // DoH only
  int line = 0;             // where the entry starts in the file (1-based)
};

struct Budgets {
  std::chrono::milliseconds attempt = upstream::default_attempt_budget;
  std::chrono::milliseconds total = upstream::default_total_budget;
};

struct Http {
  bool enabled = true;
  net::Endpoint listen;  // default 127.0.0.1:8053
  // Host names and addresses the surface answers to beyond its own
  // (web/host_check.hpp); no wildcard exists.
  net::HostList allowed_hosts;
};

// The answer cache (src/cache/). TTLs in seconds, as DNS writes them.
struct Cache {
  bool enabled = true;
  std::size_t max_bytes = 16u << 20;  // counted with per-entry overhead
  std::uint32_t min_ttl = 0;          // raises short TTLs (never a TTL of 0)
  std::uint32_t max_ttl = 86400;
  bool prefetch = true;
  bool serve_stale = true;  // RFC 8767
  std::chrono::seconds stale_window{86400};
  // The cache file kept across restarts (cache/persistence.hpp); empty: off.
  std::string persist_file;
  // Saves at most this often, and only when the cache changed.
  std::chrono::seconds persist_interval{900};
};

// Names answered at home (src/route/): zones sent to plain-DNS servers on
// the LAN, the home router, hosts files and static records.
struct LocalZone {
  std::string zone;  // presentation form, lower case, no trailing dot
  std::vector<net::Endpoint> servers;  // port 53 unless written
  int line = 0;
};

struct HomeRouter {
  enum class Mode : std::uint8_t { automatic, off, address };
  Mode mode = Mode::automatic;
  net::Endpoint address;  // Mode::address only
};

struct HostsFile {
  std::string path;  // absolute
  // Read and parsed at load (when LoadOptions::check_files): a bad line
  // fails the load, so a reload that meets one changes nothing.
  std::vector<route::Record> records;
};

struct LocalNames {
  std::vector<LocalZone> zones;  // file order; each zone once
  HomeRouter home_router;
  std::vector<HostsFile> hosts_files;
  std::vector<route::Record> records;  // source "records[N]"
  // Built-in special-use zones sent upstream like any other name (RFC 6761
  // has caching servers answer `test` themselves "by default"; a lab whose
  // upstream serves it opts out here). Lower case, no trailing dot.
  std::vector<std::string> forward_special_zones;
};

// Blocklists (src/block/). The lists are read off the event loop; the
// loader checks only their form (and that each file opens).
struct BlockListSource {
  std::string file;  // absolute; or
  std::string url;   // https:// only
  std::optional<std::string> ca_file;  // url lists only
  int line = 0;
};

struct BlockGroup {
  std::vector<server::Cidr> clients;
  bool blocking = true;
};

struct Blocking {
  std::vector<BlockListSource> lists;
  std::chrono::seconds refresh{86400};  // URL lists
  std::vector<std::string> allow;       // names never blocked, with their subdomains
  enum class Answer : std::uint8_t { nxdomain, null, refused };
  Answer answer = Answer::nxdomain;
  std::vector<BlockGroup> groups;  // by longest prefix; a client in none is filtered
  // Where the last good copy of each URL list is kept (a reboot without
  // WAN still blocks).
  std::string state_dir = "/var/lib/nxdns/lists";
};

// Listener and web defaults (also what an absent key means).
inline constexpr std::uint16_t kDefaultDnsPort = 53;
inline constexpr std::uint16_t kDefaultHttpPort = 8053;

struct Config {
  std::string source;                 // file path, or a label for in-memory text
  // Default 0.0.0.0:53 and [::]:53. The two only coexist if the server sets
  // IPV6_V6ONLY on IPv6 sockets; a wildcard and a specific address of the
  // same family and port are rejected at load (TCP bind would fail).
  std::vector<net::Endpoint> listen;
  std::vector<Upstream> upstreams;    // all of them, in file order; enabled or not
  Budgets budgets;
  Http http;
  Cache cache;
  log::Level log_level = log::Level::info;
  // access_control: the operator's rules, laid over the compiled defaults
  // (server::default_access_rules) by longest prefix. No prefix twice.
  std::vector<server::AccessRule> access_rules;
  // client_limits: the per-client query rate (0 per second: off).
  server::RateLimit client_rate = server::default_rate_limit;
  LocalNames local;
  Blocking blocking;
};

// One validation failure. what() is the one-line message the CLI prints:
// "FILE:LINE:COL: KEY.PATH: MESSAGE" (LINE and COL 1-based; KEY.PATH is
// "<document>" for errors about the file as a whole, e.g. YAML syntax).
// When the file could not be read at all, line() is 0 and what() is
// "FILE: MESSAGE". what() never contains a newline or control character.
class Error : public std::runtime_error {
 public:
  Error(std::string file, std::string key_path, int line, int column, std::string message);
  const std::string& file() const { return file_; }
  const std::string& key_path() const { return key_path_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_, key_path_;
  int line_, column_;
  std::string message_;
};

struct LoadOptions {
  // Open each ca_file now (a daemon must not start with an unusable
  // upstream). Off only for offline validation where the target's files
  // are absent, e.g. `nxdns check --offline` in a build sandbox.
  bool check_files = true;
};

// Throw config::Error on any problem; never return a half-valid Config.
// load_string throws nothing else (it is fuzzed for that); both may still
// throw std::bad_alloc.
Config load_file(const std::string& path, const LoadOptions& options = {});
Config load_string(const std::string& yaml_text, const std::string& source_name,
                   const LoadOptions& options = {});

// An upstream URL fit for logs and metric labels: no userinfo, no query
// string or fragment, no path beyond its first segment (paths can carry
// per-user tokens, e.g. "/dns-query/SECRET").
std::string redact_url(const std::string& url);

}  // namespace nxdns::config
