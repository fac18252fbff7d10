// shardpoint/io/memory_report.hpp -- what `shardpoint memory` prints: the
// bytes of every device, as a table or JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_MEMORY_REPORT_HPP
#define SHARDPOINT_IO_MEMORY_REPORT_HPP

#include <optional>
#include <string>
#include <vector>

#include <shardpoint/memory_plan.hpp>

namespace shardpoint::io {

struct memory_report {
  memory_plan plan;
  parallel_config config;
  std::int64_t stages = 1;
  /// The devices holding the stages, when some stages share one (0: each
  /// stage a device of its own).
  std::int64_t stage_devices = 0;
  std::int64_t data_parallel_ranks = 1; ///< shards listed per (stage, tensor-parallel rank)
  std::optional<zero_stage_bytes> zero_stages;
  std::optional<deepspeed_comparison> deepspeed;
  bool automatic = false; ///< the sharding degree chosen by --sharded-data-parallel auto
  std::vector<std::string> notes;
  /// What the figures rest on that is a guess (weights the model holds
  /// where they are not counted, ...), a sentence each; the totals and
  /// whether they fit are then estimates.
  std::vector<std::string> estimates;
};

/// One row per stage (its tensor-parallel ranks and shards hold the same
/// bytes), the largest device, whether it fits, the notes.
std::string to_table(const memory_report& r);

/// {"devices": [{"stage", "device" (the sharding's device holding the
///  stage, rows of one device adding up; null: a device of its own),
///  "tensor_parallel_rank", "data_parallel_rank",
///  "parameter_bytes", "gradient_bytes", "optimizer_state_bytes",
///  "gathered_bytes", "activation_bytes", "total_bytes"}],
///  "largest_total_bytes", "fits" (null without a capacity),
///  "sharded_data_parallel", "capacity_bytes" (null without one),
///  "missing_bytes" (how far the largest device is over, 0 when it fits),
///  "mode" ("training" / "inference"), "notes", "estimated" (a figure rests
///  on a guess), "estimates" (what, in words), and with the comparison
///  "zero_stages": {"plain", "optimizer_states", "gradients", "parameters"};
///  with DeepSpeed's estimator "deepspeed": {"inputs": {"total_params",
///  "largest_layer_params", "largest_layer_assumed", "num_gpus_per_node", "num_nodes",
///  "additional_buffer_factor"}, "rows": [{"zero_stage", "offload_optimizer",
///  "offload_parameters", "zero_init" (null for ZeRO-2), "gpu_bytes",
///  "cpu_bytes"}], "zero2" and "zero3": {"shardpoint_bytes",
///  "deepspeed_bytes", "terms": [{"term", "shardpoint_bytes",
///  "deepspeed_bytes", "why"}]} (per GPU, no offload)}}
std::string to_json(const memory_report& r);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_MEMORY_REPORT_HPP
