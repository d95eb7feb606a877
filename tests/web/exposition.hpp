#pragma once
// A strict reader for the Prometheus text format as /metrics writes it, for
// tests: every sample keyed by its exact "name{labels}" text, plus the
// structural rules promtool enforces (HELP and TYPE once per family, before
// its samples, families not interleaved, no duplicate series).
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nxdns::test {

struct Exposition {
  std::map<std::string, std::string> samples;  // "name{labels}" -> value text
  std::map<std::string, std::string> types;    // family -> counter|gauge|histogram
  std::map<std::string, std::string> helps;
  std::vector<std::string> families;           // in order of appearance
  std::vector<std::string> errors;

  bool has(const std::string& key) const { return samples.count(key) != 0; }
  std::string value(const std::string& key) const {
    auto it = samples.find(key);
    return it == samples.end() ? "<absent>" : it->second;
  }
};

inline std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return name;
}

inline Exposition parse_exposition(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line, current;
  std::set<std::string> closed;  // families already finished
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const bool help = line[2] == 'H';
      const std::string rest = line.substr(7);
      const auto sp = rest.find(' ');
      const std::string fam = rest.substr(0, sp);
      const std::string val = sp == std::string::npos ? "" : rest.substr(sp + 1);
      auto& m = help ? e.helps : e.types;
      if (m.count(fam)) e.errors.push_back("second " + std::string(help ? "HELP" : "TYPE") + " for " + fam);
      m[fam] = val;
      if (fam != current) {
        if (!current.empty()) closed.insert(current);
        if (closed.count(fam)) e.errors.push_back("family " + fam + " interleaved");
        current = fam;
        e.families.push_back(fam);
      }
      continue;
    }
    if (line[0] == '#') continue;
    const auto sp = line.rfind(' ');
    if (sp == std::string::npos) {
      e.errors.push_back("no value: " + line);
      continue;
    }
    const std::string key = line.substr(0, sp);
    const std::string name = key.substr(0, key.find('{'));
    const std::string fam = family_of(name, e.types);
    if (fam != current) e.errors.push_back("sample outside its family block: " + line);
    if (!e.types.count(fam) || !e.helps.count(fam)) e.errors.push_back("no HELP/TYPE for " + fam);
    if (e.samples.count(key)) e.errors.push_back("duplicate series " + key);
    e.samples[key] = line.substr(sp + 1);
  }
  return e;
}

}  // namespace nxdns::test
