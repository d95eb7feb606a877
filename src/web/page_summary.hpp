#pragma once
// The status page's summary: the figures of /api/health and the recent
// diagnostics episodes as HTML, rendered by the server (a pure function of
// snapshots) so the page reads fully without JavaScript. The page's script
// only fetches this fragment again (/summary) and draws the chart.
//
// Every figure carries data-field="<path in /api/health>" (or
// "episodes.<i>.<field>" for /api/diagnostics) and, for numbers,
// data-value with the unrounded value: the browser tests compare the page
// with the API through them.
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostics.hpp"
#include "web/status.hpp"

namespace nxdns::web {

struct PageInput {
  HealthInput health;
  std::vector<diag::Episode> episodes;
  loop::TimePoint now{};
};

// The <main> element's content.
std::string render_summary(const PageInput& in);
// The page: `page_template` with its "<!--nxdns:summary-->" marker replaced by
// render_summary (and "<!--nxdns:version-->" by the version). A template
// without the marker is returned unchanged (the build embeds the right one).
std::string render_page(std::string_view page_template, const PageInput& in);

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view s);

}  // namespace nxdns::web
