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
#include <shardpoint/io/detail/table.hpp>

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
  // weight of 10^9, pushed the rows out of line; detail::text_table).
  using detail::whole_number;
  constexpr auto left = detail::text_table::side::left;
  std::vector<detail::text_table::column> columns{{6, left}, {6, left}, {7}, {12}};
  std::vector<std::string> heading{"stage", "device", "nodes", "cost"};
  if (loads) {
    columns.push_back({12});
    heading.emplace_back("load");
  }
  columns.insert(columns.end(), {{14}, {12}, {7}});
  heading.insert(heading.end(), {planned(s) ? "memory bound" : "parameters", "received", "share"});
  detail::text_table table(std::move(columns));
  table.row(std::move(heading));
  for (const auto& g : m.stages) {
    std::vector<std::string> cells{std::to_string(g.id), std::to_string(g.id),
                                   std::to_string(g.vertices), whole_number(g.cost)};
    if (loads) {
      cells.push_back(whole_number(g.load));
    }
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%",
                  m.bottleneck > 0 ? 100 * g.load / m.bottleneck : 0.0);
    cells.insert(cells.end(), {human_bytes(g.memory), human_bytes(g.received_bytes), share});
    table.row(std::move(cells));
  }
  os << table.text();
  // Four significant digits below 10^4, as the page shows them (the table
  // read "lower bound 41" where the page had 41.33).
  std::snprintf(line, sizeof line, "bottleneck %s, lower bound %s (%.3fx), imbalance %.3f\n",
                human_number(m.bottleneck).c_str(), human_number(m.lower_bound).c_str(),
                m.lower_bound > 0 ? m.bottleneck / m.lower_bound : 1.0, m.imbalance);
  os << line;
  if (!s.sources_behind.empty()) {
    os << "note: " << s.sources_behind.size()
       << " node(s) without a node input stay in an earlier stage than every node reading them, "
          "their outputs crossing a cut: "
       << quoted_names(s.sources_behind)
       << " (moving any of them to the stage of its first reader would raise the bottleneck, "
          "break the memory cap or leave a stage empty)\n";
  }
  if (planned(s)) {
    os << "memory plan: the largest device holds " << human_bytes(*s.plan.planned_largest)
       << " (shardpoint memory with the same options)\n";
    double bound = 0;
    for (const auto& g : s.plan.metrics.stages) {
      bound = std::max(bound, g.memory);
    }
    if (bound > *s.plan.planned_largest) { // a trial took the column for the plan
      os << "note: the memory bound column is what the cap holds on, an upper bound of the "
            "plan's figures (1F1B, inference and tensor parallelism count more there; "
            "docs/memory-model.md)\n";
    }
    for (const auto& n : s.memory_notes) {
      os << "note: " << n << '\n';
    }
  }
  os << '\n';
  detail::text_table baselines({{28, left}, {12}, {9}, {12}, {18}, {0, left}});
  baselines.row({"the same model split by", "bottleneck", "x bound", "x suggested",
                 planned(s) ? "largest device" : "largest params"});
  for (const auto& b : s.baselines) {
    const auto& x = b.metrics;
    std::string note;
    if (!fits(s, b)) {
      note = "over the memory cap";
      // In bytes where the rounded figures are alike (a trial read "3.0
      // KiB", over a cap of 3.0 KiB).
      const double held = b.planned_largest.value_or(largest_memory(x));
      if (human_bytes(held) == human_bytes(*s.memory_capacity)) {
        char exact[96];
        std::snprintf(exact, sizeof exact, " (%.0f bytes, the cap %.0f)", held, *s.memory_capacity);
        note += exact;
      }
    }
    if (const auto empty = empty_stages(x, stages)) {
      note += (note.empty() ? "" : "; ") + std::to_string(empty) + " stage(s) empty";
    }
    char bound[400];
    char suggested[400];
    std::snprintf(bound, sizeof bound, "%.3f",
                  x.lower_bound > 0 ? x.bottleneck / m.lower_bound : 1.0);
    std::snprintf(suggested, sizeof suggested, "%.3f",
                  m.bottleneck > 0 ? x.bottleneck / m.bottleneck : 1.0);
    baselines.row({b.name, whole_number(x.bottleneck), bound, suggested,
                   human_bytes(b.planned_largest.value_or(largest_memory(x))), std::move(note)});
  }
  os << baselines.text();
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
  j["sources_behind"] = s.sources_behind;
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
