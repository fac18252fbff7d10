// What `shardpoint suggest` prints.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/report.hpp>
#include <shardpoint/io/suggestion.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

namespace {

double largest_memory(const partition_metrics& m) {
  double most = 0;
  for (const auto& s : m.stages) {
    most = std::max(most, s.memory);
  }
  return most;
}

std::size_t empty_stages(const partition_metrics& m, std::size_t stages) {
  std::size_t empty = stages > m.stages.size() ? stages - m.stages.size() : 0;
  for (const auto& s : m.stages) {
    empty += s.vertices == 0 ? 1 : 0;
  }
  return empty;
}

// The cap holds on the planner's largest device when there is a plan.
bool fits(const suggestion& s, const named_split& x) {
  return !s.memory_capacity ||
         x.planned_largest.value_or(largest_memory(x.metrics)) <= *s.memory_capacity;
}

bool planned(const suggestion& s) {
  return s.plan.planned_largest.has_value();
}

// The optimality the search proved -- for the costs as measured, or, when
// a figure is a guess, only for those estimates.
std::string what_is_proven(const suggestion& s) {
  const bool guess = !s.estimates.empty();
  if (s.exact) {
    return guess ? "optimal for the estimated costs" : "proven optimal among all splits";
  }
  if (s.exact_intervals) {
    return std::string(guess ? "optimal for the estimated costs" : "proven optimal") +
           " among splits into intervals of a topological order";
  }
  return "not proven optimal";
}

} // namespace

std::string to_table(const suggestion& s) {
  const auto& m = s.plan.metrics;
  const std::size_t stages = m.stages.size();
  std::ostringstream os;
  char line[320];
  os << "balanced split into " << shardpoint::detail::counted(stages, "stage")
     << " (cost: " << s.cost_model;
  if (s.communication_weight > 0) {
    os << " + " << shardpoint::detail::plain_number(s.communication_weight) << " per byte received";
  }
  if (s.memory_capacity) {
    os << ", at most " << human_bytes(*s.memory_capacity)
       << (planned(s) ? " a device on the memory planner's totals" : " of parameters a stage");
  }
  os << "; " << what_is_proven(s) << ")\n";
  os << detail::estimates_table(s.estimates);
  const bool loads = s.communication_weight > 0;
  // Columns as wide as their widest figure (a trial's loads of 10^13, at a
  // weight of 10^9, pushed the rows out of line).
  const auto whole = [](double v) {
    char text[400]; // 309 digits at most
    std::snprintf(text, sizeof text, "%.0f", v);
    return std::string(text);
  };
  int cost_w = 12;
  int load_w = 12;
  for (const auto& g : m.stages) {
    cost_w = std::max(cost_w, static_cast<int>(whole(g.cost).size()));
    load_w = std::max(load_w, static_cast<int>(whole(g.load).size()));
  }
  std::snprintf(line, sizeof line, "%-6s %-6s %7s %*s", "stage", "device", "nodes", cost_w, "cost");
  os << line;
  if (loads) {
    os << ' ' << std::string(static_cast<std::size_t>(load_w) - 4, ' ') << "load";
  }
  std::snprintf(line, sizeof line, " %14s %12s %7s\n", planned(s) ? "memory bound" : "parameters",
                "received", "share");
  os << line;
  for (const auto& g : m.stages) {
    std::snprintf(line, sizeof line, "%-6d %-6d %7zu %*s", g.id, g.id, g.vertices, cost_w,
                  whole(g.cost).c_str());
    os << line;
    if (loads) {
      std::snprintf(line, sizeof line, " %*s", load_w, whole(g.load).c_str());
      os << line;
    }
    std::snprintf(line, sizeof line, " %14s %12s %6.1f%%\n", human_bytes(g.memory).c_str(),
                  human_bytes(g.received_bytes).c_str(),
                  m.bottleneck > 0 ? 100 * g.load / m.bottleneck : 0.0);
    os << line;
  }
  std::snprintf(line, sizeof line, "bottleneck %.0f, lower bound %.0f (%.3fx), imbalance %.3f\n",
                m.bottleneck, m.lower_bound, m.lower_bound > 0 ? m.bottleneck / m.lower_bound : 1.0,
                m.imbalance);
  os << line;
  if (planned(s)) {
    os << "memory plan: the largest device holds " << human_bytes(*s.plan.planned_largest)
       << " (shardpoint memory with the same options)\n";
    for (const auto& n : s.memory_notes) {
      os << "note: " << n << '\n';
    }
  }
  os << '\n';
  struct baseline_row {
    std::string bottleneck, bound, suggested, largest, note;
  };
  std::vector<baseline_row> rows;
  std::size_t widths[3] = {12, 9, 12};
  for (const auto& b : s.baselines) {
    const auto& x = b.metrics;
    baseline_row& r = rows.emplace_back();
    if (!fits(s, b)) {
      r.note = "over the memory cap";
      // In bytes where the rounded figures are alike (a trial read "3.0
      // KiB", over a cap of 3.0 KiB).
      const double held = b.planned_largest.value_or(largest_memory(x));
      if (human_bytes(held) == human_bytes(*s.memory_capacity)) {
        char exact[96];
        std::snprintf(exact, sizeof exact, " (%.0f bytes, the cap %.0f)", held, *s.memory_capacity);
        r.note += exact;
      }
    }
    if (const auto empty = empty_stages(x, stages)) {
      r.note += (r.note.empty() ? "" : "; ") + std::to_string(empty) + " stage(s) empty";
    }
    char ratio[400];
    r.bottleneck = whole(x.bottleneck);
    std::snprintf(ratio, sizeof ratio, "%.3f",
                  x.lower_bound > 0 ? x.bottleneck / m.lower_bound : 1.0);
    r.bound = ratio;
    std::snprintf(ratio, sizeof ratio, "%.3f",
                  m.bottleneck > 0 ? x.bottleneck / m.bottleneck : 1.0);
    r.suggested = ratio;
    r.largest = human_bytes(b.planned_largest.value_or(largest_memory(x)));
    widths[0] = std::max(widths[0], r.bottleneck.size());
    widths[1] = std::max(widths[1], r.bound.size());
    widths[2] = std::max(widths[2], r.suggested.size());
  }
  const auto row_text = [&](const std::string& name, const std::string& a, const std::string& b,
                            const std::string& c, const std::string& d, const std::string& note) {
    std::snprintf(line, sizeof line, "%-28s %*s %*s %*s %18s", name.c_str(),
                  static_cast<int>(widths[0]), a.c_str(), static_cast<int>(widths[1]), b.c_str(),
                  static_cast<int>(widths[2]), c.c_str(), d.c_str());
    return std::string(line) + (note.empty() ? "" : " " + note) + "\n"; // no trailing space
  };
  os << row_text("the same model split by", "bottleneck", "x bound", "x suggested",
                 planned(s) ? "largest device" : "largest params", "");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    os << row_text(s.baselines[i].name, r.bottleneck, r.bound, r.suggested, r.largest, r.note);
  }
  os << "\nsharding points (" << s.points.size() << "; the rest is stage " << (stages - 1)
     << "):\n";
  for (const auto& p : s.points) {
    os << "  " << printable(p.node) << "  device " << *p.device << "  stage " << *p.stage << '\n';
  }
  os << '\n' << detail::findings_table(s.diagnostics);
  return os.str();
}

std::string to_json(const suggestion& s) {
  const auto& m = s.plan.metrics;
  nlohmann::json j;
  j["stages"] = nlohmann::json::array();
  for (const auto& g : m.stages) {
    const auto k = static_cast<std::size_t>(g.id);
    j["stages"].push_back({{"stage", g.id},
                           {"device", g.id},
                           {"nodes", g.vertices},
                           {"cost", detail::count_json(g.cost)},
                           {"parameter_bytes", detail::count_json(k < s.stage_parameter_bytes.size()
                                                                      ? s.stage_parameter_bytes[k]
                                                                      : g.memory)},
                           {"memory_bytes", detail::count_json(g.memory)},
                           {"received_bytes", detail::count_json(g.received_bytes)},
                           {"load", g.load},
                           {"share", m.bottleneck > 0 ? g.load / m.bottleneck : 0.0}});
  }
  j["bottleneck"] = m.bottleneck;
  j["lower_bound"] = m.lower_bound;
  j["imbalance"] = m.imbalance;
  j["exact"] = s.exact;
  j["exact_intervals"] = s.exact_intervals;
  detail::add_estimates(j, s.estimates);
  j["method"] = s.method;
  j["cost_model"] = s.cost_model;
  j["memory_capacity"] =
      s.memory_capacity ? detail::count_json(*s.memory_capacity) : nlohmann::json();
  j["communication_weight"] = s.communication_weight;
  j["memory_plan"] =
      planned(s)
          ? nlohmann::json{{"largest_total_bytes", detail::count_json(*s.plan.planned_largest)},
                           {"notes", s.memory_notes}}
          : nlohmann::json();
  j["points"] = nlohmann::json::array();
  for (const auto& p : s.points) {
    j["points"].push_back({{"node", p.node}, {"device", *p.device}, {"stage", *p.stage}});
  }
  j["baselines"] = nlohmann::json::array();
  for (const auto& b : s.baselines) {
    const auto& x = b.metrics;
    j["baselines"].push_back(
        {{"name", b.name},
         {"bottleneck", x.bottleneck},
         {"ratio_to_lower_bound", m.lower_bound > 0 ? x.bottleneck / m.lower_bound : 1.0},
         {"ratio_to_suggestion", m.bottleneck > 0 ? x.bottleneck / m.bottleneck : 1.0},
         {"largest_parameter_bytes", detail::count_json(largest_memory(x))},
         {"largest_total_bytes",
          b.planned_largest ? detail::count_json(*b.planned_largest) : nlohmann::json()},
         {"fits", fits(s, b)},
         {"empty_stages", empty_stages(x, m.stages.size())}});
  }
  j["diagnostics"] = detail::findings_json(s.diagnostics);
  return detail::document(std::move(j));
}

} // namespace shardpoint::io
