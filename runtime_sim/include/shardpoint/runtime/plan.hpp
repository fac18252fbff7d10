// shardpoint/runtime/plan.hpp -- a sharding checked against PopRT's rules
// for pipelined execution, as stages with their devices and costs.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_RUNTIME_PLAN_HPP
#define SHARDPOINT_RUNTIME_PLAN_HPP

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/error.hpp>
#include <shardpoint/pipeline_rules.hpp>
#include <shardpoint/sharding_result.hpp>

namespace shardpoint::runtime {

/// A sharding that cannot run as a pipeline (PopRT's rules, in the words
/// `validate` uses), or run options out of range.
class config_error : public shardpoint::bad_parameter_error {
  using shardpoint::bad_parameter_error::bad_parameter_error;
};

struct stage_plan {
  int stage = 0;
  int device = 0;
  std::size_t nodes = 0;
  std::int64_t cost = 0; ///< cost units per micro-batch
};

/// Stages with their devices and costs, checked against PopRT's rules.
struct pipeline_plan {
  std::vector<stage_plan> stages; ///< by stage number
  int num_devices = 0;
};

namespace detail {

// The cost of vertex i: `cost(i)` for a callable, `get(cost, i)` for a
// readable property map keyed by vertex index (a pointer, an
// iterator_property_map, ...). Floating-point costs are rounded up.
template <class Cost>
std::int64_t cost_of(const Cost& cost, std::size_t i) {
  const auto c = [&] {
    if constexpr (std::invocable<const Cost&, std::size_t>) {
      return cost(i);
    } else if constexpr (std::is_pointer_v<Cost>) {
      return cost[i];
    } else {
      return get(cost, i);
    }
  }();
  using T = std::remove_cvref_t<decltype(c)>;
  static_assert(std::is_arithmetic_v<T>, "shardpoint: a vertex cost must be a number");
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(c)) {
      throw config_error(shardpoint::detail::cat("vertex ", i, " has a cost that is not finite"));
    }
    return static_cast<std::int64_t>(std::ceil(c));
  } else {
    return static_cast<std::int64_t>(c);
  }
}

} // namespace detail

/// Builds the plan of `result` with `cost` cost units for each vertex (a
/// callable `cost(i)` or a readable property map from vertex index to a
/// number). Throws config_error with the first of PopRT's rules the sharding
/// breaks (pipeline_rules.hpp, the order a run meets them: a vertex without
/// device or stage, a stage on two devices, stages not numbered 0..S-1,
/// batches_per_step not a positive multiple of S, more devices than
/// `options.num_devices`), or for a negative cost.
template <class Cost>
pipeline_plan make_plan(const sharding_result& result, const Cost& cost,
                        const pipeline_options& options) {
  const auto problems = rules::for_pipelined_run(
      result, options, [](std::size_t i) { return shardpoint::detail::cat("vertex ", i); });
  for (const auto& d : problems) {
    if (d.severity == severity::error) {
      throw config_error(d.message);
    }
  }
  std::vector<stage_plan> stages(static_cast<std::size_t>(result.num_stages()));
  for (std::size_t i = 0; i < result.size(); ++i) {
    auto& st = stages[static_cast<std::size_t>(*result.stage(i))];
    const std::int64_t c = detail::cost_of(cost, i);
    if (c < 0) {
      throw config_error(shardpoint::detail::cat("vertex ", i, " has a negative cost"));
    }
    st.stage = *result.stage(i);
    st.device = *result.device(i);
    ++st.nodes;
    st.cost += c;
  }
  return {std::move(stages), result.num_devices()};
}

/// make_plan with pipelining on `num_devices` devices (unchecked when empty)
/// and `batches_per_step` micro-batches.
template <class Cost>
pipeline_plan make_plan(const sharding_result& result, const Cost& cost, int batches_per_step,
                        std::optional<int> num_devices = {}) {
  pipeline_options options;
  options.enable_pipelining = true;
  options.batches_per_step = batches_per_step;
  options.num_devices = num_devices;
  return make_plan(result, cost, options);
}

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_PLAN_HPP
