// Tables and JSON for the pipeline emulator's measures.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"
#include <shardpoint/io/detail/table.hpp>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/metrics.hpp>
#include <shardpoint/io/units.hpp>
#include <shardpoint/runtime/session.hpp>
#include <shardpoint/runtime/trace.hpp>

// A run's rows in JSON: each field under its own name (nlohmann's
// declaration, found by argument-dependent lookup, so in runtime's
// namespace).
namespace shardpoint::runtime {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(stage_metrics, stage, device, nodes, cost, busy, utilisation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(device_metrics, device, busy, utilisation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(run_metrics, mode, micro_batches, makespan, wall_seconds,
                                   analytic_makespan, throughput, bubble_fraction, bottleneck_stage,
                                   bottleneck_device, bottleneck_device_cost, stages, devices)
} // namespace shardpoint::runtime

namespace shardpoint::io {

std::string to_table(const runtime::run_metrics& m, const std::vector<std::string>& estimates) {
  std::ostringstream os;
  char line[256];
  using shardpoint::detail::counted;
  os << "mode " << m.mode << ", "
     << counted(static_cast<std::size_t>(m.micro_batches), "micro-batch", "micro-batches") << ", "
     << counted(m.stages.size(), "stage") << " on " << counted(m.devices.size(), "device") << "\n";
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
  // The busiest device's stages, when it holds more than one (a trial's
  // "bottleneck: stage 0" sat beside a device running two stages).
  std::string shared;
  for (const auto& s : m.stages) {
    if (s.device == m.bottleneck_device) {
      shared += (shared.empty() ? "" : ", ") + std::to_string(s.stage);
    }
  }
  if (shared.find(',') != std::string::npos &&
      m.bottleneck_device_cost > m.stages[static_cast<std::size_t>(m.bottleneck_stage)].cost) {
    os << "bottleneck: device " << m.bottleneck_device << " (stages " << shared << ": cost "
       << m.bottleneck_device_cost << " per micro-batch)\n";
  } else {
    os << "bottleneck: stage " << m.bottleneck_stage << " (cost "
       << m.stages[static_cast<std::size_t>(m.bottleneck_stage)].cost << " per micro-batch)\n";
  }
  if (m.items.empty()) { // not kept: a longer run than a timeline holds
    os << "\ntimeline: not drawn (more than " << runtime::most_kept_items
       << " stage micro-batches; give fewer --batches-per-step to see one)\n";
  } else {
    os << "\ntimeline (a row per device, digits are stages, '.' is idle):\n"
       << runtime::timeline(m);
  }
  os << detail::estimates_table(estimates);
  return os.str();
}

std::string to_json(const runtime::run_metrics& m, const std::vector<std::string>& estimates) {
  nlohmann::json j = m;
  if (m.mode != "threads") {
    j.erase("wall_seconds"); // a measure of threads mode only
  }
  detail::add_estimates(j, estimates);
  return detail::document(std::move(j));
}

namespace {

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (const double x : v) {
    sum += x;
  }
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// A stage's backward split as the schedule runs it: W only in zb-h1.
double weight_gradient_of(const training_run& r, const runtime::stage_times& t) {
  return r.options.kind == runtime::schedule_kind::zb_h1 ? t.backward * t.weight_share : 0;
}

// A time in units as a table shows it (a trial's costs read 1.23e+04).
std::string time_text(double x) {
  return shardpoint::detail::plain_number(x);
}

} // namespace

std::string to_table(const training_run& r, const std::vector<std::string>& estimates) {
  std::ostringstream os;
  char line[1024];
  const auto& o = r.options;
  using shardpoint::detail::counted;
  os << "schedule " << r.schedule << " (" << r.mode << "), "
     << counted(static_cast<std::size_t>(o.micro_batches), "micro-batch", "micro-batches") << ", "
     << counted(r.stages.size(), "stage") << " on "
     << counted(static_cast<std::size_t>(o.devices), "device")
     << (o.recompute ? ", recomputing forwards" : "") << '\n';
  // Times in the run's units, bytes in units (the JSON has them exact); a
  // column as wide as its widest time (a trial's 13-digit time overflowed;
  // detail::text_table).
  constexpr auto left = detail::text_table::side::left;
  detail::text_table table({{6, left}, {7, left}, {11}, {11}, {11}, {9}, {14}, {14}});
  table.row(
      {"stage", "device", "forward", "backward", "weight", "in_flight", "activations/mb", "peak"});
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    const auto& t = r.stages[s];
    const auto held = o.recompute ? t.input_bytes : t.activation_bytes;
    table.row({std::to_string(s), std::to_string(static_cast<int>(s) % o.devices),
               time_text(t.forward), time_text(t.backward), time_text(weight_gradient_of(r, t)),
               std::to_string(r.result.in_flight[s]), human_bytes(static_cast<double>(held)),
               human_bytes(static_cast<double>(r.result.activation_peak[s]))});
  }
  os << table.text();
  const auto& busy = r.result.busy;
  int busy_width = 12;
  for (const double b : busy) {
    busy_width = std::max(busy_width, static_cast<int>(time_text(b).size()));
  }
  for (std::size_t d = 0; d < busy.size(); ++d) {
    std::snprintf(line, sizeof line, "device %-4zu busy %*s  bubble %5.1f%%\n", d, busy_width,
                  time_text(busy[d]).c_str(), 100 * r.result.bubble[d]);
    os << line;
  }
  std::snprintf(line, sizeof line, "makespan %s units, bubble %.1f%% (mean of the devices)\n",
                time_text(r.result.makespan).c_str(), 100 * mean(r.result.bubble));
  os << line;
  if (r.mode == "threads") {
    std::snprintf(line, sizeof line, "wall time %.3f s\n", r.wall_seconds);
    os << line;
  }
  os << "\ntimeline (a row per device; F forward, B backward, W weight gradient, '.' idle):\n"
     << runtime::timeline(r.result, o.devices);
  os << detail::estimates_table(estimates);
  return os.str();
}

std::string to_json(const training_run& r, const std::vector<std::string>& estimates) {
  nlohmann::json j;
  const auto& o = r.options;
  j["schedule"] = r.schedule;
  j["mode"] = r.mode;
  j["micro_batches"] = o.micro_batches;
  j["virtual_stages"] = o.virtual_stages;
  j["recompute"] = o.recompute;
  j["makespan"] = r.result.makespan;
  j["bubble_fraction"] = mean(r.result.bubble);
  if (r.mode == "threads") {
    j["wall_seconds"] = r.wall_seconds;
  }
  j["stages"] = nlohmann::json::array();
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    const auto& t = r.stages[s];
    j["stages"].push_back({{"stage", s},
                           {"device", static_cast<int>(s) % o.devices},
                           {"forward", t.forward},
                           {"backward", t.backward},
                           {"weight_gradient", weight_gradient_of(r, t)},
                           {"in_flight", r.result.in_flight[s]},
                           {"activation_bytes", o.recompute ? t.input_bytes : t.activation_bytes},
                           {"activation_peak", r.result.activation_peak[s]}});
  }
  j["devices"] = nlohmann::json::array();
  const auto& busy = r.result.busy;
  for (std::size_t d = 0; d < busy.size(); ++d) {
    j["devices"].push_back({{"device", d}, {"busy", busy[d]}, {"bubble", r.result.bubble[d]}});
  }
  detail::add_estimates(j, estimates);
  return detail::document(std::move(j));
}

} // namespace shardpoint::io
