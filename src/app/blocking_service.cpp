#include "app/blocking_service.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "log/log.hpp"

namespace nxdns::app {

namespace {

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

BlockingService::BlockingService(loop::Scheduler& sched, query::Engine& engine, block::ListResolver resolve)
    : sched_(sched), engine_(engine), resolve_(std::move(resolve)), refresh_(sched) {
  builder_ = std::make_unique<block::TableBuilder>(sched_, [this](const block::BuildResult& r) { built(r); });
}

BlockingService::~BlockingService() = default;

std::vector<block::ListSource> BlockingService::sources() const {
  std::vector<block::ListSource> out;
  for (const auto& l : cfg_.lists) {
    block::ListSource s;
    if (!l.url.empty()) {
      s.name = config::redact_url(l.url);
      s.path = fetcher_->copy_path(l.url);
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
    refresh_.disarm();
    fetcher_.reset();
    return;
  }
  engine_.set_blocking(std::move(p));
  const bool urls = std::any_of(cfg_.lists.begin(), cfg_.lists.end(), [](const auto& l) { return !l.url.empty(); });
  if (!urls) {
    fetcher_.reset();
    refresh_.disarm();
  } else if (!fetcher_ || fetcher_->options().directory != cfg_.state_dir) {
    block::ListFetcherOptions o;
    o.directory = cfg_.state_dir;
    fetcher_ = std::make_unique<block::ListFetcher>(sched_, resolve_, std::move(o));
  }
  // What is on disk blocks at once (a boot without WAN); fetches follow.
  builder_->request(sources());
  if (urls) fetch_all();
}

void BlockingService::fetch_all() {
  for (const auto& l : cfg_.lists) {
    if (l.url.empty()) continue;
    fetcher_->fetch(block::RemoteList{l.url, l.ca_file, config::redact_url(l.url)},
                    [this](const block::FetchResult& r) { fetched(r); });
  }
  refresh_.arm(cfg_.refresh, [this] { fetch_all(); });
}

void BlockingService::fetched(const block::FetchResult& r) {
  // A new copy changes the table; a 304 or a failure leaves it as it is.
  if (r.outcome == block::FetchOutcome::updated) builder_->request(sources());
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
  // URL lists the table does not hold yet (never fetched) are shown too.
  for (const auto& cl : cfg_.lists) {
    if (cl.url.empty()) continue;
    const std::string name = config::redact_url(cl.url);
    auto it = std::find_if(s.lists.begin(), s.lists.end(), [&](const BlockListStatus& x) { return x.name == name; });
    if (it == s.lists.end()) {
      BlockListStatus l;
      l.name = name;
      l.url = true;
      s.lists.push_back(std::move(l));
      it = s.lists.end() - 1;
    }
    if (const block::ListFetchState* f = fetcher_ ? fetcher_->state(cl.url) : nullptr) {
      it->fetched_unix = f->last_success_unix;
      it->fetch_error = f->last_error;
      it->fetch_failures = f->failures;
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
