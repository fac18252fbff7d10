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

namespace shardpoint::io {

/// The run as `shardpoint simulate` prints it: per stage, the makespan
/// against the analytic one, the bottleneck, and the timeline; then what
/// the costs rest on that is a guess (`estimates`), a line each.
std::string to_table(const runtime::run_metrics& m, const std::vector<std::string>& estimates = {});
/// {"mode", "micro_batches", "makespan", "analytic_makespan", "throughput",
///  "bubble_fraction", "bottleneck_stage", ["wall_seconds",] "stages": [...],
///  "devices": [...], "estimated" (a cost rests on a guess), "estimates"}
std::string to_json(const runtime::run_metrics& m, const std::vector<std::string>& estimates = {});

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_METRICS_HPP
