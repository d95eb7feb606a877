#pragma once
// The daemon's configuration as plain structs. load_* validates everything up
// front: a Config that exists is a Config the daemon can start from.
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "net/endpoint.hpp"

namespace nxdns::config {

enum class Protocol { dot, doh };
enum class DohMethod { post, get };

struct Upstream {
  std::string url;          // as written in the file
  Protocol protocol = Protocol::dot;
  std::string host;         // URL host (IP literal for DoT; name or IP for DoH)
  std::uint16_t port = 853;
  std::string path;         // DoH only, e.g. "/dns-query"
  // Where to connect. DoT: the URL's IP. DoH: the URL host if it is an IP
  // literal, else the `address` key (required then: resolving the name would
  // need DNS, which may be this daemon).
  net::Endpoint address;
  std::string tls_name;     // SNI and certificate name; defaults to a URL host name
  int priority = 0;         // lower is preferred; ties keep file order
  bool enabled = true;
  std::optional<std::string> ca_file;
  DohMethod method = DohMethod::post;  // DoH only
  int line = 0;             // where the entry starts in the file (1-based)
};

struct Budgets {
  std::chrono::milliseconds attempt{2000};
  std::chrono::milliseconds total{5000};
};

struct Http {
  bool enabled = true;
  net::Endpoint listen;  // default 127.0.0.1:8053
};

struct Config {
  std::string source;                 // file path, or a label for in-memory text
  std::vector<net::Endpoint> listen;  // default 0.0.0.0:53 and [::]:53
  std::vector<Upstream> upstreams;    // all of them, in file order; enabled or not
  Budgets budgets;
  Http http;
  log::Level log_level = log::Level::info;
};

// One validation failure. what() is the one-line message the CLI prints:
// "FILE:LINE:COL: KEY.PATH: MESSAGE".
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

// Throw config::Error on any problem; never return a half-valid Config.
Config load_file(const std::string& path);
Config load_string(const std::string& yaml_text, const std::string& source_name);

// An upstream URL fit for logs and metric labels: no userinfo, no query
// string or fragment, no path beyond its first segment (paths can carry
// per-user tokens, e.g. "/dns-query/SECRET").
std::string redact_url(const std::string& url);

}  // namespace nxdns::config
