// shardpoint/memory/config.hpp -- what is planned: the configuration, a stage's
// weights and activations, and the plan of every device.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Part of the memory planner; the model, the rules and the complexity are
// stated at the top of shardpoint/memory_plan.hpp.
#ifndef SHARDPOINT_MEMORY_CONFIG_HPP
#define SHARDPOINT_MEMORY_CONFIG_HPP

#include <cstdint>
#include <optional>
#include <vector>

namespace shardpoint {

enum class optimizer_kind { adam, sgd, none };
/// A training step's order of passes, as far as memory tells them apart:
/// GPipe holds every micro-batch's activations at once; 1F1B holds
/// min(M, S - s) at stage s; ZB-H1 (Qi et al., 2023, §3.1) splits the
/// backward but starts each W so that it holds what 1F1B holds -- the
/// emulator's run of it (runtime/schedules.hpp) has 1F1B's counts.
enum class pipeline_schedule { gpipe, one_f_one_b, zb_h1 };

/// How the model is trained or run, in SageMaker's terms where it has them.
struct parallel_config {
  bool training = true;
  optimizer_kind optimizer = optimizer_kind::adam;
  /// 16-bit mixed precision, SageMaker's fp16 / bf16 parameters; neither is
  /// fp32. Default: the ZeRO paper's mixed precision.
  bool fp16 = true;
  bool bf16 = false;
  std::int64_t tensor_parallel = 1;
  std::int64_t data_parallel = 1;
  std::int64_t sharded_data_parallel = 1;               ///< the sharding degree N
  bool shard_optimizer_states = false;                  ///< optimizer states over data_parallel
  std::int64_t param_persistence_threshold = 1'000'000; ///< elements
  std::int64_t max_live_parameters = 1'000'000'000;     ///< elements
  /// Samples per micro-batch: what the caller's activation bytes are for
  /// (checked here, used by whoever measures the activations).
  std::int64_t micro_batch_size = 1;
  std::int64_t micro_batches = 1; ///< M, batches per step
  pipeline_schedule schedule = pipeline_schedule::gpipe;
  std::int64_t queue_depth = 4; ///< inference: entries between stages
};

/// A weight: its elements, into how many slices tensor parallelism cuts it
/// (the product of its shard tuple; 1 replicated), and the bytes of one
/// element as stored (what inference holds). A weight that is not trainable
/// (an integer constant) holds its stored bytes in training too, with no
/// gradient, no optimizer state, never sharded nor gathered.
struct parameter_tensor {
  std::int64_t elements = 0;
  std::int64_t tensor_parallel_parts = 1;
  std::int64_t stored_element_bytes = 4;
  bool trainable = true;
  /// Split as Megatron-LM's row-parallel layer: a vertex reading it sums
  /// partial outputs, all-reduced over the tensor-parallel ranks (the plan
  /// of training layouts counts that traffic; the memory planner ignores it).
  bool row_parallel = false;
};

/// What a stage holds: its weights, which of them each of its layers reads
/// (indices into `parameters`), and its activations for one micro-batch.
struct stage_memory_input {
  std::vector<parameter_tensor> parameters;
  std::vector<std::vector<std::uint32_t>> layers;
  std::int64_t produced_bytes = 0; ///< outputs of its vertices
  std::int64_t received_bytes = 0; ///< outputs of outside vertices it reads
  /// The device holding the stage: stages of one device are summed for the
  /// largest device and the fit; -1, a device of its own.
  int device = -1;
};

struct device_memory {
  int stage = 0;
  /// The device holding the stage (stage_memory_input::device), -1: a
  /// device of its own. Rows of one device add up to its memory.
  int device = -1;
  std::int64_t tensor_parallel_rank = 0;
  std::int64_t data_parallel_rank = 0; ///< the shard within a sharding group
  std::int64_t parameter_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_state_bytes = 0;
  std::int64_t gathered_bytes = 0;
  std::int64_t activation_bytes = 0;
  std::int64_t total_bytes = 0;
};

struct memory_plan {
  std::vector<device_memory> devices; ///< stage, then tensor-parallel rank, then shard
  /// The largest device's total: the sum of the stages a device holds
  /// (stage_memory_input::device), of one rank.
  std::int64_t largest_total_bytes = 0;
  std::optional<std::int64_t> capacity; ///< bytes per device, when given
  bool fits = true;                     ///< every device within `capacity`
  std::int64_t sharded_data_parallel = 1;
};

/// The model-state bytes of the largest device, sharding more and more.
struct zero_stage_bytes {
  std::int64_t plain = 0;
  std::int64_t optimizer_states = 0;
  std::int64_t gradients = 0;
  std::int64_t parameters = 0;
};

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_CONFIG_HPP
