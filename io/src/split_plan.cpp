// A model cut into one model per stage, as pipeline.json and as a table.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include <shardpoint/io/split_plan.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

namespace {

nlohmann::json stage_or_null(const std::optional<int>& s) {
  return s ? nlohmann::json(*s) : nlohmann::json();
}

} // namespace

std::string to_json(const split_plan& plan) {
  nlohmann::json j;
  j["stages"] = nlohmann::json::array();
  for (const auto& s : plan.stages) {
    auto inputs = nlohmann::json::array();
    for (const auto& i : s.inputs) {
      inputs.push_back({{"name", i.name}, {"from_stage", stage_or_null(i.from_stage)}});
    }
    auto outputs = nlohmann::json::array();
    for (const auto& o : s.outputs) {
      outputs.push_back(
          {{"name", o.name}, {"to_stages", o.to_stages}, {"graph_output", o.graph_output}});
    }
    j["stages"].push_back({{"stage", s.stage},
                           {"device", s.device},
                           {"file", s.file},
                           {"nodes", s.nodes.size()},
                           {"initializer_bytes", s.initializer_bytes},
                           {"weight_bytes", s.weight_bytes},
                           {"inputs", std::move(inputs)},
                           {"outputs", std::move(outputs)}});
  }
  j["inputs"] = nlohmann::json::array();
  for (const auto& i : plan.inputs) {
    j["inputs"].push_back({{"name", i.name}, {"to_stages", i.to_stages}});
  }
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : plan.outputs) {
    j["outputs"].push_back({{"name", o.name}, {"from_stage", stage_or_null(o.from_stage)}});
  }
  return detail::document(std::move(j));
}

std::string to_table(const split_plan& plan) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-6s %-16s %7s %12s %7s %8s\n", "stage", "device", "file",
                "nodes", "weights", "inputs", "outputs");
  os << line;
  for (const auto& s : plan.stages) {
    std::snprintf(line, sizeof line, "%-6d %-6d %-16s %7zu %12s %7zu %8zu\n", s.stage, s.device,
                  s.file.c_str(), s.nodes.size(),
                  human_bytes(static_cast<double>(s.weight_bytes)).c_str(), s.inputs.size(),
                  s.outputs.size());
    os << line;
  }
  os << "\ntensors passed between stages:\n";
  std::size_t count = 0;
  for (const auto& s : plan.stages) {
    for (const auto& o : s.outputs) {
      if (o.to_stages.empty()) {
        continue;
      }
      os << "  " << printable(o.name) << ": stage " << s.stage << " ->";
      for (int t : o.to_stages) {
        os << ' ' << t;
      }
      os << '\n';
      ++count;
    }
  }
  if (count == 0) {
    os << "  none\n";
  }
  return os.str();
}

} // namespace shardpoint::io
