#pragma once
// One reader per top-level section of the configuration file: each checks
// its keys and fills its part of Config, failing through the YamlReader so
// every error names the key path and line:column. config.cpp's walk calls
// them in file-independent order (listen before http, so the web listener
// can be checked against the DNS listeners). Internal to config/.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <vector>

#include "config/config.hpp"
#include "config/yaml_reader.hpp"

namespace nxdns::config::detail {

// Where the listeners were written: the http-vs-dns conflict check runs after
// both sections and points at the key the user wrote.
struct ListenerMarks {
  std::vector<YAML::Mark> listen;         // parallel to Config::listen
  std::optional<YAML::Mark> http_listen;  // set when http.listen was given
};

// listeners_section.cpp
void read_listen(const YamlReader& r, const YAML::Node& n, Config& cfg, ListenerMarks& marks);
void read_http(const YamlReader& r, const YAML::Node& n, Config& cfg, ListenerMarks& marks);
void check_http_vs_dns(const YamlReader& r, const Config& cfg, const ListenerMarks& marks);

// upstreams_section.cpp
void read_upstreams(const YamlReader& r, const YAML::Node& n, Config& cfg);

// budgets_section.cpp
void read_budgets(const YamlReader& r, const YAML::Node& n, Config& cfg);

// cache_section.cpp
void read_cache(const YamlReader& r, const YAML::Node& n, Config& cfg);

// log_section.cpp
void read_log(const YamlReader& r, const YAML::Node& n, Config& cfg);

// clients_section.cpp: who may ask (access_control) and how fast (client_limits).
void read_access_control(const YamlReader& r, const YAML::Node& n, Config& cfg);
void read_client_limits(const YamlReader& r, const YAML::Node& n, Config& cfg);

// blocking_section.cpp
void read_blocking(const YamlReader& r, const YAML::Node& n, Config& cfg);

// local_names_section.cpp: local_zones, home_router, hosts_files, records.
void read_local_zones(const YamlReader& r, const YAML::Node& n, Config& cfg);
void read_home_router(const YamlReader& r, const YAML::Node& n, Config& cfg);
void read_hosts_files(const YamlReader& r, const YAML::Node& n, Config& cfg);
void read_records(const YamlReader& r, const YAML::Node& n, Config& cfg);
void read_forward_special_zones(const YamlReader& r, const YAML::Node& n, Config& cfg);
// After both: the records of every source together must form one
// consistent set (no CNAME beside other data at one name).
void check_local_records(const YamlReader& r, const YAML::Node& root, const Config& cfg);

}  // namespace nxdns::config::detail
