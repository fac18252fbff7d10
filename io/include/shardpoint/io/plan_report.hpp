// shardpoint/io/plan_report.hpp -- `shardpoint plan`'s ranked layouts as a
// table and as JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_PLAN_REPORT_HPP
#define SHARDPOINT_IO_PLAN_REPORT_HPP

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <shardpoint/runtime/layout_search.hpp>

namespace shardpoint::io {

/// A search and what it was asked.
struct plan_report {
  std::string model; ///< what was laid out, in words
  runtime::cluster_spec cluster;
  runtime::search_space space;
  std::string dtype;     ///< fp16, bf16 or fp32
  std::string optimizer; ///< adam, sgd or none
  runtime::layout_search_result result;
  std::optional<std::size_t> top_k; ///< feasible candidates listed; none: all
  /// What the figures rest on that is a guess, a sentence each.
  std::vector<std::string> estimates;
};

/// The layouts best first (rank, degrees, ZeRO, micro-batch, schedule, step
/// time, throughput, bubble, peak memory, headroom), how many were costed
/// and refused and why, the best one's stages; then the estimates.
std::string to_table(const plan_report& r);
/// {"model", "cluster": {...}, "global_batch", "dtype", "optimizer",
///  "costed", "feasible", "candidates": [{"pipeline", "tensor", "data",
///  "zero", "micro_batch_size", "micro_batches", "schedule",
///  "virtual_stages", "step_time", "makespan", "sync_time", "throughput",
///  "bubble", "peak_memory", "headroom", "memory_capped", "stages": [{"forward", "backward",
///  "in_flight", "model_state_bytes", "activation_bytes", "total_bytes"}]}]
///  best first, "infeasible": [{..the layout.., "reason"}], "estimated",
///  "estimates"}
std::string to_json(const plan_report& r);
/// The best layout's memory, device by device (`plan --emit`'s
/// memory.json): {"layout": {...}, "device_memory", "devices":
/// [{"pipeline_rank", "stages", "parameter_bytes", "gradient_bytes",
/// "optimizer_bytes", "gathered_bytes", "activation_bytes", "total_bytes",
/// "headroom"}]}; every tensor- and data-parallel rank of a pipeline rank
/// holds the same. Empty when nothing fits.
std::string memory_json(const plan_report& r);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_PLAN_REPORT_HPP
