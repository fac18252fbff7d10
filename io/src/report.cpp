// The sharding report as a table or JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include <shardpoint/io/report.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

namespace {

std::string opt(int v) {
  return v < 0 ? "-" : std::to_string(v);
}

std::string human(std::int64_t bytes) {
  return human_bytes(static_cast<double>(bytes));
}

} // namespace

std::string to_table(const sharding_report& r) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %-8s %8s  %s\n", "device", "stage", "nodes", "parameters");
  os << line;
  for (const auto& g : r.groups) {
    std::snprintf(line, sizeof line, "%-8s %-8s %8zu  %s (%lld bytes)\n", opt(g.device).c_str(),
                  opt(g.stage).c_str(), g.nodes, human(g.parameter_bytes).c_str(),
                  static_cast<long long>(g.parameter_bytes));
    os << line;
  }
  os << "\ntensors crossing " << r.boundary << " boundaries: " << r.crossings.size() << '\n';
  for (const auto& c : r.crossings) {
    os << "  " << r.boundary << ' ' << opt(c.from) << " -> " << opt(c.to) << "  "
       << printable(c.name) << "  "
       << (c.bytes ? human(*c.bytes) + (c.per.empty() ? "" : " per " + c.per) + " (" +
                         std::to_string(*c.bytes) + " bytes)" // "per N" of both figures
                   : std::string("size unknown"))
       << '\n';
  }
  os << '\n' << detail::findings_table(r.diagnostics);
  return os.str();
}

std::string to_json(const sharding_report& r) {
  nlohmann::json j;
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups) {
    j["groups"].push_back({{"device", g.device < 0 ? nlohmann::json() : nlohmann::json(g.device)},
                           {"stage", g.stage < 0 ? nlohmann::json() : nlohmann::json(g.stage)},
                           {"nodes", g.nodes},
                           {"parameter_bytes", g.parameter_bytes}});
  }
  j["boundary"] = r.boundary;
  j["crossings"] = nlohmann::json::array();
  for (const auto& c : r.crossings) {
    j["crossings"].push_back({{"tensor", c.name},
                              {"from", c.from},
                              {"to", c.to},
                              {"bytes", c.bytes ? nlohmann::json(*c.bytes) : nlohmann::json()},
                              {"per", c.per}});
  }
  j["diagnostics"] = detail::findings_json(r.diagnostics);
  return detail::document(std::move(j));
}

std::string to_lines(const std::vector<diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    out.append("shardpoint: ").append(to_string(d.severity)).append(" [");
    out.append(to_string(d.rule)).append("] ").append(printable(d.message)).append("\n");
  }
  return out;
}

} // namespace shardpoint::io
