// shardpoint/runtime/metrics.hpp -- what a run of the pipeline measures.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_RUNTIME_METRICS_HPP
#define SHARDPOINT_RUNTIME_METRICS_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "plan.hpp"

namespace shardpoint::runtime {

/// One unit of work: stage `stage` computing micro-batch `micro_batch`.
struct work_item {
  int stage = 0;
  int device = 0;
  int micro_batch = 0;
  double start = 0; ///< cost units from the start of the run
  double end = 0;   ///< end of the computation (before any wait to push)
};

struct stage_metrics {
  int stage = 0;
  int device = 0;
  std::size_t nodes = 0;
  std::int64_t cost = 0;
  double busy = 0; ///< cost units spent computing
  double utilisation = 0;
};

struct device_metrics {
  int device = 0;
  double busy = 0;
  double utilisation = 0;
};

struct run_metrics {
  std::string mode;
  int micro_batches = 0;
  double makespan = 0;     ///< cost units
  double wall_seconds = 0; ///< threads mode
  std::int64_t analytic_makespan = 0;
  double throughput = 0;      ///< micro-batches per cost unit
  double bubble_fraction = 0; ///< idle share of the devices' time
  int bottleneck_stage = 0;   ///< the stage of largest cost
  /// The device of most work a micro-batch (its stages' summed cost): the
  /// bottleneck stage's own device unless stages share one.
  int bottleneck_device = 0;
  std::int64_t bottleneck_device_cost = 0;
  std::vector<stage_metrics> stages;
  std::vector<device_metrics> devices;
  std::vector<work_item> items; ///< every work item, when kept
};

namespace detail {

// Each device's work a micro-batch: the summed cost of the stages it holds.
inline std::vector<std::int64_t> device_costs(const pipeline_plan& plan, int devices) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(devices), 0);
  for (const auto& s : plan.stages) {
    out[static_cast<std::size_t>(s.device)] += s.cost;
  }
  return out;
}

// sum(cost) + (M - 1) x the busiest device's work a micro-batch (with one
// device a stage, max(cost); a trial's stages 1 and 2 on one device gave
// 319 for a run of 522).
inline std::int64_t analytic(const pipeline_plan& plan, int M, int devices) {
  std::int64_t sum = 0;
  for (const auto& s : plan.stages) {
    sum += s.cost;
  }
  const auto work = device_costs(plan, devices);
  const std::int64_t most = work.empty() ? 0 : *std::max_element(work.begin(), work.end());
  return sum + static_cast<std::int64_t>(M - 1) * most;
}

inline void summarise(const pipeline_plan& plan, run_metrics& m, int devices) {
  m.analytic_makespan = analytic(plan, m.micro_batches, devices);
  const auto work = device_costs(plan, devices);
  m.bottleneck_device = static_cast<int>(std::max_element(work.begin(), work.end()) - work.begin());
  m.bottleneck_device_cost = work[static_cast<std::size_t>(m.bottleneck_device)];
  m.throughput = m.makespan > 0 ? m.micro_batches / m.makespan : 0;
  std::vector<double> device_busy(static_cast<std::size_t>(devices), 0);
  double total_busy = 0;
  std::int64_t most = -1;
  for (const auto& s : plan.stages) {
    const double busy = static_cast<double>(s.cost) * m.micro_batches;
    m.stages.push_back(
        {s.stage, s.device, s.nodes, s.cost, busy, m.makespan > 0 ? busy / m.makespan : 0});
    device_busy[static_cast<std::size_t>(s.device)] += busy;
    total_busy += busy;
    if (s.cost > most) {
      most = s.cost;
      m.bottleneck_stage = s.stage;
    }
  }
  std::set<int> used;
  for (const auto& s : plan.stages) {
    used.insert(s.device);
  }
  for (int d : used) {
    const double busy = device_busy[static_cast<std::size_t>(d)];
    m.devices.push_back({d, busy, m.makespan > 0 ? busy / m.makespan : 0});
  }
  const double capacity = m.makespan * static_cast<double>(used.size());
  m.bubble_fraction = capacity > 0 ? 1.0 - total_busy / capacity : 0;
}

} // namespace detail

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_METRICS_HPP
