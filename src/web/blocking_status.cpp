#include "web/blocking_status.hpp"

namespace nxdns::web {

void write_blocking(JsonWriter& w, const BlockingStatus& s, std::uint64_t blocked) {
  w.begin_object();
  w.key("enabled").value(s.enabled);
  w.key("blocked").value(blocked);
  w.key("rules").value(s.rules);
  w.key("memory_bytes").value(static_cast<std::uint64_t>(s.memory_bytes));
  w.key("building").value(s.building);
  w.key("builds").value(s.builds);
  w.key("build_failures").value(s.build_failures);
  w.key("last_error");
  if (s.last_error) {
    w.value(*s.last_error);
  } else {
    w.null();
  }
  w.key("allowed_by_rule").value(s.allowed_by_rule);
  w.key("lists").begin_array();
  for (const auto& l : s.lists) {
    w.begin_object();
    w.key("name").value(l.name);
    w.key("url").value(l.url);
    w.key("allow_list").value(l.allow_list);
    w.key("rules").value(l.rules);
    w.key("rejected_lines").value(l.rejected);
    w.key("loaded_unix");
    if (l.loaded_unix) {
      w.value(static_cast<std::int64_t>(*l.loaded_unix));
    } else {
      w.null();
    }
    w.key("blocked").value(l.blocked);
    if (l.url) {
      w.key("fetched_unix");
      if (l.fetched_unix) {
        w.value(*l.fetched_unix);
      } else {
        w.null();
      }
      w.key("fetch_error");
      if (l.fetch_error.empty()) {
        w.null();
      } else {
        w.value(l.fetch_error);
      }
      w.key("fetch_failures").value(l.fetch_failures);
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace nxdns::web
