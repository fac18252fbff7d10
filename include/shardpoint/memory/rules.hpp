// shardpoint/memory/rules.hpp -- the rules a configuration must keep, one table
// (SageMaker's words).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Part of the memory planner; the model, the rules and the complexity are
// stated at the top of shardpoint/memory_plan.hpp.
#ifndef SHARDPOINT_MEMORY_RULES_HPP
#define SHARDPOINT_MEMORY_RULES_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "../detail/checked.hpp"
#include "../detail/text.hpp"
#include "../error.hpp"
#include "config.hpp"

namespace shardpoint {

/// A rule on the configuration: `broken` says whether `c` (with `stages`
/// pipeline stages) breaks it, `message` what to tell the user.
struct memory_rule {
  std::string_view name;
  bool (*broken)(const parallel_config& c, std::int64_t stages);
  std::string (*message)(const parallel_config& c, std::int64_t stages);
};

namespace detail::memory {

using config = const parallel_config&;
using count = std::int64_t;

inline std::string not_positive(config x, count) {
  const std::pair<const char*, std::int64_t> all[] = {
      {"tensor parallel degree", x.tensor_parallel},
      {"data parallel degree", x.data_parallel},
      {"sharded data parallel degree", x.sharded_data_parallel},
      {"micro-batch size", x.micro_batch_size},
      {"batches per step", x.micro_batches},
      {"queue depth", x.queue_depth}};
  for (const auto& [what, value] : all) {
    if (value < 1) {
      return cat("the ", what, " must be a positive integer, not ", value);
    }
  }
  return {};
}
inline bool any_not_positive(config x, count) {
  return !not_positive(x, 0).empty();
}
inline constexpr memory_rule positive_degrees{"positive-degrees", any_not_positive, not_positive};

/// The most devices a plan describes (pipeline stages x tensor parallel x
/// data parallel), and the largest degree or batch count: the plan lists
/// every device, so its memory grows with their number.
inline constexpr std::int64_t max_planned_devices = std::int64_t{1} << 20;
inline constexpr std::int64_t max_degree = std::int64_t{1} << 31;

inline std::string too_large(config x, count stages) {
  const std::pair<const char*, std::int64_t> all[] = {{"tensor parallel degree", x.tensor_parallel},
                                                      {"data parallel degree", x.data_parallel},
                                                      {"micro-batch size", x.micro_batch_size},
                                                      {"batches per step", x.micro_batches},
                                                      {"queue depth", x.queue_depth}};
  for (const auto& [what, value] : all) {
    if (value >= max_degree) {
      return cat("the ", what, " must be below 2^31, not ", value);
    }
  }
  const auto devices = checked_mul(std::max<count>(stages, 1), x.tensor_parallel);
  const auto all_devices = devices ? checked_mul(*devices, x.data_parallel) : std::nullopt;
  if (!all_devices || *all_devices > max_planned_devices) {
    return cat("the layout has ", std::max<count>(stages, 1), " stage(s) x ", x.tensor_parallel,
               " tensor-parallel x ", x.data_parallel,
               " data-parallel devices; shardpoint plans at most 2^20 (1048576) devices");
  }
  return {};
}
inline bool any_too_large(config x, count stages) {
  return !any_not_positive(x, stages) && !too_large(x, stages).empty();
}
inline constexpr memory_rule degrees_in_range{"degrees-in-range", any_too_large, too_large};

inline bool negative_threshold(config x, count) {
  return x.param_persistence_threshold < 0 || x.max_live_parameters < 0;
}
inline std::string negative_threshold_message(config x, count) {
  return x.param_persistence_threshold < 0
             ? cat("the parameter persistence threshold must be non-negative, not ",
                   x.param_persistence_threshold)
             : cat("the maximum of live parameters must be non-negative, not ",
                   x.max_live_parameters);
}
inline constexpr memory_rule non_negative_thresholds{"non-negative-thresholds", negative_threshold,
                                                     negative_threshold_message};

inline bool degree_off(config x, count) {
  return x.sharded_data_parallel > x.data_parallel ||
         x.data_parallel % x.sharded_data_parallel != 0;
}
inline std::string degree_off_message(config x, count) {
  return cat("the sharded data parallel degree must be an integer between one and the data "
             "parallelism degree and must evenly divide it: ",
             x.sharded_data_parallel, " does not divide ", x.data_parallel);
}
inline constexpr memory_rule sharded_degree_divides_data_parallel{
    "sharded-degree-divides-data-parallel", degree_off, degree_off_message};

inline bool sharding_inference(config x, count) {
  return !x.training && (x.sharded_data_parallel > 1 || x.shard_optimizer_states);
}
inline std::string sharding_inference_message(config, count) {
  return "sharded data parallelism and optimizer state sharding split the training state; "
         "inference has none";
}
inline constexpr memory_rule sharding_needs_training{"sharding-needs-training", sharding_inference,
                                                     sharding_inference_message};

inline bool with_tensor_parallel(config x, count) {
  return x.sharded_data_parallel > 1 && x.tensor_parallel > 1;
}
inline std::string with_tensor_parallel_message(config x, count) {
  return cat("sharded data parallelism currently is not compatible with tensor parallelism "
             "(tensor parallel degree ",
             x.tensor_parallel, "); set the tensor parallel degree to 1");
}
inline constexpr memory_rule sharding_not_with_tensor_parallelism{
    "sharding-not-with-tensor-parallelism", with_tensor_parallel, with_tensor_parallel_message};

inline bool with_pipeline(config x, count stages) {
  return x.sharded_data_parallel > 1 && stages > 1;
}
inline std::string with_pipeline_message(config, count stages) {
  return cat("sharded data parallelism currently is not compatible with pipeline parallelism (",
             stages, " pipeline stages); use one stage");
}
inline constexpr memory_rule sharding_not_with_pipeline_parallelism{
    "sharding-not-with-pipeline-parallelism", with_pipeline, with_pipeline_message};

inline bool with_optimizer_sharding(config x, count) {
  return x.sharded_data_parallel > 1 && x.shard_optimizer_states;
}
inline std::string with_optimizer_sharding_message(config, count) {
  return "sharded data parallelism currently is not compatible with optimizer state sharding; "
         "turn off optimizer state sharding";
}
inline constexpr memory_rule sharding_not_with_optimizer_state_sharding{
    "sharding-not-with-optimizer-state-sharding", with_optimizer_sharding,
    with_optimizer_sharding_message};

inline bool both_16_bit(config x, count) {
  return x.training && x.fp16 && x.bf16;
}
inline std::string both_16_bit_message(config, count) {
  return "you can't activate both data types in one training job: the fp16 and bf16 parameters "
         "are mutually exclusive";
}
inline constexpr memory_rule fp16_or_bf16{"fp16-or-bf16", both_16_bit, both_16_bit_message};

inline bool bf16_alone(config x, count) {
  return x.training && x.bf16 && x.sharded_data_parallel == 1;
}
inline std::string bf16_alone_message(config, count) {
  return "BF16 training works only when sharded data parallelism is activated (a sharded data "
         "parallel degree above 1)";
}
inline constexpr memory_rule bf16_needs_sharding{"bf16-needs-sharding", bf16_alone,
                                                 bf16_alone_message};

/// The rules, in the order they are checked; each is stated beside its
/// check above. A later version relaxes one by removing it here.
inline constexpr std::array<memory_rule, 10> rules{
    {positive_degrees, degrees_in_range, non_negative_thresholds,
     sharded_degree_divides_data_parallel, sharding_needs_training,
     sharding_not_with_tensor_parallelism, sharding_not_with_pipeline_parallelism,
     sharding_not_with_optimizer_state_sharding, fp16_or_bf16, bf16_needs_sharding}};

} // namespace detail::memory

/// The rules a configuration must keep, in the order they are checked.
inline constexpr std::array<memory_rule, 10> memory_rules = detail::memory::rules;

/// The first rule `config` breaks with `stages` pipeline stages, or null.
inline const memory_rule* broken_memory_rule(const parallel_config& config, std::int64_t stages) {
  for (const auto& r : memory_rules) {
    if (r.broken(config, stages)) {
      return &r;
    }
  }
  return nullptr;
}

/// Throws bad_parameter_error with the message of the first rule broken.
inline void check_memory_rules(const parallel_config& config, std::int64_t stages) {
  if (const memory_rule* r = broken_memory_rule(config, stages)) {
    throw bad_parameter_error("shardpoint: " + r->message(config, stages));
  }
}

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_RULES_HPP
