#include "config/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <sstream>
#include <string_view>

#include "config/posix_file.hpp"
#include "config/sections.hpp"
#include "config/url.hpp"
#include "config/yaml_reader.hpp"

namespace nxdns::config {

namespace {

using detail::describe;
using detail::Entry;
using detail::errno_text;
using detail::Fd;
using detail::find;
using detail::ListenerMarks;
using detail::Map;
using detail::quote;
using detail::YamlReader;

// Config files are a few hundred bytes. The cap keeps `nxdns check /dev/zero`
// (or a mistyped path to a log file) from eating the Pi's memory.
constexpr std::size_t kMaxFileBytes = 1 << 20;

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

// The walk over the YAML tree: the document as a whole (syntax, one
// document, a mapping of known sections), each section handed to its reader
// (sections.hpp). Every check that can fail goes through the YamlReader, so
// each error carries the file, key path and mark of the node at fault.
class Loader {
 public:
  Loader(std::string source, const LoadOptions& opts) : source_(source), r_(std::move(source), opts) {}

  Config run(const std::string& text);

 private:
  [[noreturn]] void fail(const std::string& path, const YAML::Mark& mark, const std::string& msg) const {
    r_.fail(path, mark, msg);
  }

  std::string source_;
  YamlReader r_;
  ListenerMarks marks_;
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
    const Map m = r_.read_map(root, "", {"listen", "upstreams", "budgets", "http", "cache", "log", "access_control",
                                      "client_limits", "local_zones", "home_router", "hosts_files", "records", "forward_special_zones", "blocking"},
                           "a mapping");
    Config cfg;
    cfg.source = source_;
    if (const Entry* e = find(m, "listen")) {
      read_listen(r_, e->value, cfg, marks_);
    } else {
      cfg.listen = {*net::make_endpoint("0.0.0.0", kDefaultDnsPort), *net::make_endpoint("::", kDefaultDnsPort)};
    }
    const Entry* ups = find(m, "upstreams");
    if (!ups) fail("upstreams", root.Mark(), "required key missing: list at least one upstream");
    read_upstreams(r_, ups->value, cfg);
    if (const Entry* e = find(m, "budgets")) read_budgets(r_, e->value, cfg);
    cfg.http.listen = *net::make_endpoint("127.0.0.1", kDefaultHttpPort);
    if (const Entry* e = find(m, "http")) read_http(r_, e->value, cfg, marks_);
    check_http_vs_dns(r_, cfg, marks_);
    if (const Entry* e = find(m, "cache")) read_cache(r_, e->value, cfg);
    if (const Entry* e = find(m, "log")) read_log(r_, e->value, cfg);
    if (const Entry* e = find(m, "access_control")) read_access_control(r_, e->value, cfg);
    if (const Entry* e = find(m, "client_limits")) read_client_limits(r_, e->value, cfg);
    if (const Entry* e = find(m, "local_zones")) read_local_zones(r_, e->value, cfg);
    if (const Entry* e = find(m, "home_router")) read_home_router(r_, e->value, cfg);
    if (const Entry* e = find(m, "hosts_files")) read_hosts_files(r_, e->value, cfg);
    if (const Entry* e = find(m, "records")) read_records(r_, e->value, cfg);
    check_local_records(r_, root, cfg);
    if (const Entry* e = find(m, "forward_special_zones")) read_forward_special_zones(r_, e->value, cfg);
    if (const Entry* e = find(m, "blocking")) read_blocking(r_, e->value, cfg);
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
