// The reload plan as a table: each row is a configuration change an
// operator makes and what the running daemon must keep, drain, start and
// rebind for it. A failing row names the promise it broke.
#include "app/reload_plan.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <CppUTest/TestHarness.h>

#include "log/log.hpp"

using nxdns::app::plan_reload;
using nxdns::app::ReloadPlan;

namespace {

// Upstream lines, each a full list entry.
const std::string A = "  - url: \"tls://127.0.0.1:8531\"\n    tls_name: \"a.test\"\n";
const std::string A_prio = "  - url: \"tls://127.0.0.1:8531\"\n    tls_name: \"a.test\"\n    priority: 5\n";
const std::string A_other_name = "  - url: \"tls://127.0.0.1:8531\"\n    tls_name: \"other.test\"\n";
const std::string A_disabled = "  - url: \"tls://127.0.0.1:8531\"\n    tls_name: \"a.test\"\n    enabled: false\n";
const std::string B = "  - url: \"tls://127.0.0.2:8532\"\n    tls_name: \"b.test\"\n";
const std::string C = "  - url: \"https://127.0.0.3:8443/dns-query\"\n    tls_name: \"c.test\"\n";
const std::string C_get = "  - url: \"https://127.0.0.3:8443/dns-query\"\n    tls_name: \"c.test\"\n    method: get\n";
const std::string C_other_address =
    "  - url: \"https://c.test:8443/dns-query\"\n    address: \"127.0.0.4\"\n";
const std::string C_address = "  - url: \"https://c.test:8443/dns-query\"\n    address: \"127.0.0.3\"\n";

// An upstream with trust anchors of its own, in a file the table rewrites
// between the two loads (Row::rewrite_ca).
struct CaFile {
  std::string path;
  CaFile() {
    char tmpl[] = "/tmp/nxdns-reload-ca-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd >= 0) ::close(fd);
    path = tmpl;
    write("anchors one\n");
  }
  ~CaFile() { ::unlink(path.c_str()); }
  void write(const std::string& contents) const { std::ofstream(path, std::ios::trunc) << contents; }
};
const CaFile ca, other_ca;
const std::string A_ca = A + "    ca_file: \"" + ca.path + "\"\n";
const std::string A_other_ca_path = A + "    ca_file: \"" + other_ca.path + "\"\n";

const std::string L1 = "  - \"127.0.0.1:5301\"\n";
const std::string L2 = "  - \"127.0.0.1:5302\"\n";

std::string yaml(const std::string& listen, const std::string& ups, const std::string& rest = "") {
  return "listen:\n" + listen + "upstreams:\n" + ups + "http:\n  listen: \"127.0.0.1:8153\"\n" + rest;
}

struct Index {
  std::size_t old_index, new_index;
  int priority;
};

struct Row {
  const char* change;
  std::string before, after;
  std::vector<Index> keep;
  std::vector<std::size_t> drain, start;
  std::size_t listen_kept, listen_closed, listen_opened;
  std::vector<std::string> needs_restart;
  bool budgets = false, cache = false, log_level = false;
  std::vector<std::size_t> new_anchors = {};
  // Written over `ca` after `before` is loaded: the same path, maybe other
  // contents (the file is "anchors one\n" when `before` is read).
  const char* rewrite_ca = nullptr;
};

std::string show(const ReloadPlan& p) {
  std::string s = nxdns::app::describe(p) + " keep=";
  for (const auto& k : p.keep) s += nxdns::log::cat("(", k.old_index, "->", k.new_index, " p", k.priority, ")");
  s += " drain=";
  for (auto i : p.drain) s += nxdns::log::cat(i, " ");
  s += "start=";
  for (auto i : p.start) s += nxdns::log::cat(i, " ");
  s += "new_anchors=";
  for (auto i : p.new_trust_anchors) s += nxdns::log::cat(i, " ");
  return s;
}

void check(const Row& r) {
  ca.write("anchors one\n");
  const auto before = nxdns::config::load_string(r.before, "before.yaml");
  if (r.rewrite_ca) ca.write(r.rewrite_ca);
  const auto after = nxdns::config::load_string(r.after, "after.yaml");
  const ReloadPlan p = plan_reload(before, after);
  bool same = p.keep.size() == r.keep.size() && p.drain == r.drain && p.start == r.start &&
              p.new_trust_anchors == r.new_anchors &&
              p.keep_listen.size() == r.listen_kept && p.close_listen.size() == r.listen_closed &&
              p.open_listen.size() == r.listen_opened && p.needs_restart == r.needs_restart &&
              p.budgets_changed == r.budgets && p.cache_changed == r.cache && p.log_level_changed == r.log_level;
  for (std::size_t i = 0; same && i < r.keep.size(); ++i) {
    same = p.keep[i].old_index == r.keep[i].old_index && p.keep[i].new_index == r.keep[i].new_index &&
           p.keep[i].priority == r.keep[i].priority;
  }
  if (!same) FAIL((std::string(r.change) + ": got " + show(p)).c_str());
}

}  // namespace

TEST_GROUP(ReloadPlan){};

TEST(ReloadPlan, Table) {
  const std::vector<Row> rows = {
      {"nothing changed: everything kept", yaml(L1, A + B), yaml(L1, A + B), {{0, 0, 0}, {1, 1, 0}}, {}, {}, 1, 0, 0,
       {}},
      {"one added, one removed, one unchanged (the acceptance scenario)", yaml(L1, A + B), yaml(L1, A + C),
       {{0, 0, 0}}, {1}, {1}, 1, 0, 0, {}},
      {"an upstream moved in the file keeps its sessions under its new index", yaml(L1, A + B), yaml(L1, B + A),
       {{0, 1, 0}, {1, 0, 0}}, {}, {}, 1, 0, 0, {}},
      {"priority is not identity: kept, reordered", yaml(L1, A + B), yaml(L1, A_prio + B), {{0, 0, 5}, {1, 1, 0}},
       {}, {}, 1, 0, 0, {}},
      {"a changed TLS name is another upstream: drain and start", yaml(L1, A + B), yaml(L1, A_other_name + B),
       {{1, 1, 0}}, {0}, {0}, 1, 0, 0, {}},
      {"a changed DoH method is another transport", yaml(L1, A + C), yaml(L1, A + C_get), {{0, 0, 0}}, {1}, {1}, 1, 0,
       0, {}},
      {"a changed dial address is another upstream", yaml(L1, A + C_address), yaml(L1, A + C_other_address),
       {{0, 0, 0}}, {1}, {1}, 1, 0, 0, {}},
      {"disabling drains, the index stays put", yaml(L1, A + B), yaml(L1, A_disabled + B), {{1, 1, 0}}, {0}, {}, 1, 0,
       0, {}},
      {"enabling starts", yaml(L1, A_disabled + B), yaml(L1, A + B), {{1, 1, 0}}, {}, {0}, 1, 0, 0, {}},
      {"every upstream replaced", yaml(L1, A), yaml(L1, B + C), {}, {0}, {0, 1}, 1, 0, 0, {}},
      {"a listener added: the old one stays bound", yaml(L1, A), yaml(L1 + L2, A), {{0, 0, 0}}, {}, {}, 1, 0, 1, {}},
      {"a listener moved: close one, open one", yaml(L1, A), yaml(L2, A), {{0, 0, 0}}, {}, {}, 0, 1, 1, {}},
      {"budgets apply in place", yaml(L1, A), yaml(L1, A, "budgets:\n  attempt_ms: 900\n"), {{0, 0, 0}}, {}, {}, 1, 0,
       0, {}, true},
      {"cache size applies in place", yaml(L1, A), yaml(L1, A, "cache:\n  max_bytes: 1048576\n"), {{0, 0, 0}}, {}, {},
       1, 0, 0, {}, false, true},
      {"serve-stale off applies in place", yaml(L1, A), yaml(L1, A, "cache:\n  serve_stale: false\n"), {{0, 0, 0}}, {},
       {}, 1, 0, 0, {}, false, true},
      {"log level applies in place", yaml(L1, A), yaml(L1, A, "log:\n  level: debug\n"), {{0, 0, 0}}, {}, {}, 1, 0, 0,
       {}, false, false, true},
      {"turning the cache off needs a restart", yaml(L1, A), yaml(L1, A, "cache:\n  enabled: false\n"), {{0, 0, 0}},
       {}, {}, 1, 0, 0, {"cache.enabled"}},
      {"a new cache file needs a restart (read once, at start)", yaml(L1, A),
       yaml(L1, A, "cache:\n  persist_file: /var/lib/nxdns/cache\n"), {{0, 0, 0}}, {}, {}, 1, 0, 0,
       {"cache.persist_file"}},
      {"a new save interval needs a restart", yaml(L1, A, "cache:\n  persist_file: /var/lib/nxdns/cache\n"),
       yaml(L1, A, "cache:\n  persist_file: /var/lib/nxdns/cache\n  persist_interval: 3600\n"), {{0, 0, 0}}, {}, {},
       1, 0, 0, {"cache.persist_interval"}},
      {"moving the web surface needs a restart", yaml(L1, A),
       "listen:\n" + L1 + "upstreams:\n" + A + "http:\n  listen: \"127.0.0.1:8154\"\n", {{0, 0, 0}}, {}, {}, 1, 0, 0,
       {"http.listen"}},
      {"new certificates written over the ca_file: drained and started, named", yaml(L1, A_ca + B),
       yaml(L1, A_ca + B), {{1, 1, 0}}, {0}, {0}, 1, 0, 0, {}, false, false, false, {0}, "anchors two\n"},
      {"the ca_file rewritten with the same bytes (a new mtime): kept", yaml(L1, A_ca + B), yaml(L1, A_ca + B),
       {{0, 0, 0}, {1, 1, 0}}, {}, {}, 1, 0, 0, {}, false, false, false, {}, "anchors one\n"},
      {"new anchors and a new priority: still drained and started", yaml(L1, A_ca + B),
       yaml(L1, A_ca + "    priority: 5\n" + B), {{1, 1, 0}}, {0}, {0}, 1, 0, 0, {}, false, false, false, {0},
       "anchors two\n"},
      {"another ca_file path is another upstream, not new anchors", yaml(L1, A_ca + B), yaml(L1, A_other_ca_path + B),
       {{1, 1, 0}}, {0}, {0}, 1, 0, 0, {}, false, false, false, {}, nullptr},
      {"turning the web surface off needs a restart", yaml(L1, A),
       "listen:\n" + L1 + "upstreams:\n" + A + "http:\n  enabled: false\n", {{0, 0, 0}}, {}, {}, 1, 0, 0,
       {"http.enabled"}},
  };
  for (const Row& r : rows) check(r);
}
