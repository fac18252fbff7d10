// Pieces of the reports that several renderings share (internal to io/).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_JSON_SUPPORT_HPP
#define SHARDPOINT_IO_JSON_SUPPORT_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardpoint/pipeline_rules.hpp>

namespace shardpoint::io::detail {

/// "validation: no problems", or the count and one indented line each.
inline std::string findings_table(const std::vector<diagnostic>& diagnostics) {
  std::string out = "validation: ";
  if (diagnostics.empty()) {
    return out + "no problems\n";
  }
  out.append(std::to_string(diagnostics.size())).append(" finding(s)\n");
  for (const auto& d : diagnostics) {
    out.append("  ").append(to_string(d.severity)).append(" [").append(to_string(d.rule));
    out.append("] ").append(d.message).append("\n");
  }
  return out;
}

/// [{"severity", "rule", "message", "nodes"}]
inline nlohmann::json findings_json(const std::vector<diagnostic>& diagnostics) {
  auto out = nlohmann::json::array();
  for (const auto& d : diagnostics) {
    out.push_back({{"severity", std::string(to_string(d.severity))},
                   {"rule", std::string(to_string(d.rule))},
                   {"message", d.message},
                   {"nodes", d.vertices}});
  }
  return out;
}

} // namespace shardpoint::io::detail

#endif // SHARDPOINT_IO_JSON_SUPPORT_HPP
