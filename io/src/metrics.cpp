// Tables and JSON for the pipeline emulator's measures.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include <shardpoint/io/metrics.hpp>
#include <shardpoint/runtime/trace.hpp>

namespace shardpoint::io {

std::string to_table(const runtime::run_metrics& m, const std::vector<std::string>& estimates) {
  std::ostringstream os;
  char line[256];
  os << "mode " << m.mode << ", " << m.micro_batches << " micro-batches, " << m.stages.size()
     << " stages on " << m.devices.size() << " devices\n";
  std::snprintf(line, sizeof line, "%-6s %-7s %7s %9s %12s %7s\n", "stage", "device", "nodes",
                "cost", "busy", "util");
  os << line;
  for (const auto& s : m.stages) {
    std::snprintf(line, sizeof line, "%-6d %-7d %7zu %9lld %12.0f %6.1f%%\n", s.stage, s.device,
                  s.nodes, static_cast<long long>(s.cost), s.busy, 100 * s.utilisation);
    os << line;
  }
  std::snprintf(line, sizeof line,
                "makespan %.1f units (analytic %lld), throughput %.6f micro-batches/unit, bubble "
                "%.1f%%\n",
                m.makespan, static_cast<long long>(m.analytic_makespan), m.throughput,
                100 * m.bubble_fraction);
  os << line;
  if (m.mode == "threads") {
    std::snprintf(line, sizeof line, "wall time %.3f s\n", m.wall_seconds);
    os << line;
  }
  os << "bottleneck: stage " << m.bottleneck_stage << " (cost "
     << m.stages[static_cast<std::size_t>(m.bottleneck_stage)].cost << " per micro-batch)\n";
  os << "\ntimeline (a row per device, digits are stages, '.' is idle):\n" << runtime::timeline(m);
  os << detail::estimates_table(estimates);
  return os.str();
}

std::string to_json(const runtime::run_metrics& m, const std::vector<std::string>& estimates) {
  nlohmann::json j;
  j["mode"] = m.mode;
  j["micro_batches"] = m.micro_batches;
  j["makespan"] = m.makespan;
  j["analytic_makespan"] = m.analytic_makespan;
  j["throughput"] = m.throughput;
  j["bubble_fraction"] = m.bubble_fraction;
  j["bottleneck_stage"] = m.bottleneck_stage;
  if (m.mode == "threads") {
    j["wall_seconds"] = m.wall_seconds;
  }
  j["stages"] = nlohmann::json::array();
  for (const auto& s : m.stages) {
    j["stages"].push_back({{"stage", s.stage},
                           {"device", s.device},
                           {"nodes", s.nodes},
                           {"cost", s.cost},
                           {"busy", s.busy},
                           {"utilisation", s.utilisation}});
  }
  j["devices"] = nlohmann::json::array();
  for (const auto& d : m.devices) {
    j["devices"].push_back(
        {{"device", d.device}, {"busy", d.busy}, {"utilisation", d.utilisation}});
  }
  detail::add_estimates(j, estimates);
  return detail::document(std::move(j));
}

} // namespace shardpoint::io
