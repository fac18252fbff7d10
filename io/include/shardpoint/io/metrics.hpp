// shardpoint/io/metrics.hpp -- tables and JSON for what the pipeline
// emulator measures (`simulate`) and for partition metrics (`evaluate`).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_METRICS_HPP
#define SHARDPOINT_IO_METRICS_HPP

#include <string>
#include <vector>

#include <shardpoint/evaluate.hpp>
#include <shardpoint/runtime/metrics.hpp>
#include <shardpoint/runtime/schedules.hpp>

namespace shardpoint::io {

/// The run as `shardpoint simulate` prints it: per stage, the makespan
/// against the analytic one, the bottleneck, and the timeline; then what
/// the costs rest on that is a guess (`estimates`), a line each.
std::string to_table(const runtime::run_metrics& m, const std::vector<std::string>& estimates = {});
/// {"mode", "micro_batches", "makespan", "analytic_makespan", "throughput",
///  "bubble_fraction", "bottleneck_stage", ["wall_seconds",] "stages": [...],
///  "devices": [...], "estimated" (a cost rests on a guess), "estimates"}
std::string to_json(const runtime::run_metrics& m, const std::vector<std::string>& estimates = {});

/// A training schedule's run (`simulate --schedule`): what ran and how.
struct training_run {
  std::string schedule; ///< its name (runtime::schedule_named)
  std::string mode;     ///< virtual or threads
  runtime::schedule_options options;
  std::vector<runtime::stage_times> stages;
  runtime::schedule_result result;
  double wall_seconds = 0; ///< threads
};

/// The run as `shardpoint simulate --schedule` prints it: per stage its
/// times, peak micro-batches in flight and activation bytes; per device its
/// bubble; the makespan; a timeline of F, B and W; the estimates.
std::string to_table(const training_run& r, const std::vector<std::string>& estimates = {});
/// {"schedule", "mode", "micro_batches", "virtual_stages", "recompute",
///  "makespan", "bubble_fraction" (the devices' mean), ["wall_seconds",]
///  "stages": [{"stage", "device", "forward", "backward", "weight_gradient",
///  "in_flight", "activation_bytes", "activation_peak"}], "devices":
///  [{"device", "busy", "bubble"}], "estimated", "estimates"}
std::string to_json(const training_run& r, const std::vector<std::string>& estimates = {});

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_METRICS_HPP
