#include "app/blocking_service.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "log/log.hpp"

namespace nxdns::app {

namespace {

// FNV-1a 64: a stable, path-safe name for a URL's copy.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

route::BlockedAnswer answer_of(config::Blocking::Answer a) {
  switch (a) {
    case config::Blocking::Answer::null: return route::BlockedAnswer::null;
    case config::Blocking::Answer::refused: return route::BlockedAnswer::refused;
    case config::Blocking::Answer::nxdomain: break;
  }
  return route::BlockedAnswer::nxdomain;
}

constexpr const char* allow_list_name = "blocking.allow";

}  // namespace

std::string list_copy_path(const std::string& state_dir, const std::string& url) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.list", static_cast<unsigned long long>(fnv1a(url)));
  return state_dir + (state_dir.empty() || state_dir.back() != '/' ? "/" : "") + name;
}

BlockingService::BlockingService(loop::Scheduler& sched, query::Engine& engine) : sched_(sched), engine_(engine) {
  builder_ = std::make_unique<block::TableBuilder>(sched_, [this](const block::BuildResult& r) { built(r); });
}

BlockingService::~BlockingService() = default;

std::vector<block::ListSource> BlockingService::sources() const {
  std::vector<block::ListSource> out;
  for (const auto& l : cfg_.lists) {
    block::ListSource s;
    if (!l.url.empty()) {
      s.name = config::redact_url(l.url);
      s.path = list_copy_path(cfg_.state_dir, l.url);
      struct stat st {};
      // Never fetched yet (a first boot without WAN): the other lists
      // still block; this one joins when its first copy arrives.
      if (::stat(s.path.c_str(), &st) != 0) {
        log::warn("blocking: no copy of ", s.name, " yet in ", cfg_.state_dir, "; it blocks nothing until fetched");
        continue;
      }
    } else {
      s.name = l.file;
    }
    out.push_back(std::move(s));
  }
  if (!cfg_.allow.empty()) {
    std::string body;
    for (const auto& a : cfg_.allow) body += a + "\n";
    block::ListSource s;
    s.name = allow_list_name;
    s.allow_list = true;
    s.body = std::make_shared<const std::string>(std::move(body));
    out.push_back(std::move(s));
  }
  return out;
}

void BlockingService::apply(const config::Blocking& cfg) {
  cfg_ = cfg;
  std::vector<route::GroupRule> rules;
  for (const auto& g : cfg_.groups) {
    for (const auto& net : g.clients) rules.push_back({net, g.blocking});
  }
  groups_ = std::make_shared<const route::BlockingGroups>(std::move(rules));
  query::BlockingPolicy p = engine_.blocking();
  p.groups = groups_;
  p.answer = answer_of(cfg_.answer);
  if (cfg_.lists.empty()) {
    // No list: nothing blocks, and no thread is started.
    p.table.reset();
    engine_.set_blocking(std::move(p));
    return;
  }
  engine_.set_blocking(std::move(p));
  builder_->request(sources());
}

void BlockingService::built(const block::BuildResult& r) {
  last_build_seconds_ = r.wall_seconds;
  if (!r.table) {
    last_error_ = r.error.value_or("unknown error");
    log::error("blocking: lists NOT loaded, the previous table stays in use: ", *last_error_);
    return;
  }
  last_error_.reset();
  loaded_unix_ = std::time(nullptr);
  if (cfg_.lists.empty()) return;  // turned off while it was building
  query::BlockingPolicy p = engine_.blocking();
  p.table = r.table;
  engine_.set_blocking(std::move(p));
  log::info("blocking: ", r.table->rules(), " rules from ", r.table->lists().size(), " list(s) in use after ",
            r.wall_seconds, " s (", r.table->memory_bytes() / 1024, " KiB)");
}

BlockingStatus BlockingService::status() const {
  BlockingStatus s;
  s.enabled = !cfg_.lists.empty();
  const auto& table = engine_.blocking().table;
  const auto& counters = engine_.counters();
  if (table) {
    s.rules = table->rules();
    s.memory_bytes = table->memory_bytes();
    for (std::size_t i = 0; i < table->lists().size(); ++i) {
      const auto& info = table->lists()[i];
      BlockListStatus l;
      l.name = info.name;
      l.url = info.name.rfind("https://", 0) == 0;
      l.allow_list = info.allow_list;
      l.rules = info.counts.rules;
      l.rejected = info.counts.rejected();
      l.loaded_unix = loaded_unix_;
      if (i < counters.blocked_by_list.size()) l.blocked = counters.blocked_by_list[i];
      s.lists.push_back(std::move(l));
    }
  }
  const auto st = builder_->stats();
  s.building = builder_->building();
  s.builds = st.builds;
  s.build_failures = st.failures;
  s.last_error = last_error_;
  s.last_build_seconds = last_build_seconds_;
  s.allowed_by_rule = counters.allowed_by_rule;
  return s;
}

}  // namespace nxdns::app
