// shardpoint/baselines.hpp -- the splits users get from other pipeline
// frameworks, rewritten from their published descriptions, so that a
// balanced split can be compared with them on the same graph.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Each lays the graph out in the order balanced_shard uses (the smallest
// topological order) and cuts it into intervals; stage = device. None looks
// at compute costs and memory together, which is the point of comparing:
//
//   uniform            DeepSpeed PipelineModule(partition_method="uniform"):
//                      equal vertex counts, the remainder one each to the
//                      first stages (ds_utils.partition_uniform).
//   by_weight          DeepSpeed partition_method="parameters": the split that
//                      balances a weight -- the parameter count -- as well as
//                      intervals can (ds_utils.partition_balanced), whatever
//                      the compute costs then are.
//   greedy_threshold   PiPPy split_into_equal_size: walk the order adding
//                      weights up to total / S; a vertex that does not fit
//                      opens the next stage (one heavier than the threshold is
//                      a stage of its own); only the first S - 1 cuts are
//                      kept, so what remains piles onto the last stage, and
//                      when fewer cuts arise the last stages stay empty.
//                      PiPPy weighs parameter sizes; here any weight, e.g.
//                      the compute cost ("equal cost-sum greedy").
#ifndef SHARDPOINT_BASELINES_HPP
#define SHARDPOINT_BASELINES_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

#include "balanced_shard.hpp"
#include "concepts.hpp"
#include "error.hpp"
#include "evaluate.hpp"
#include "graph_access.hpp"
#include "sharding_result.hpp"
#include "topological_order.hpp"

namespace shardpoint::baselines {

namespace detail {

/// A split of the layout order into stages by the stage of each position.
inline sharding_result from_positions(const std::vector<std::uint32_t>& order,
                                      const std::vector<int>& stage_at) {
  std::vector<int> stage(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    stage[order[p]] = stage_at[p];
  }
  return sharding_result(order.size(), stage, stage);
}

inline void check_stages(int stages, std::size_t n) {
  if (stages < 1 || static_cast<std::size_t>(stages) > n) {
    throw bad_parameter_error(
        shardpoint::detail::cat("shardpoint: baselines need 1 to ", n, " stages, not ", stages));
  }
}

} // namespace detail

/// DeepSpeed's "uniform": equal vertex counts per stage.
template <vertex_list_graph G>
sharding_result uniform(const G& g, int stages) {
  const auto order = topological_order(g);
  const std::size_t n = order.size();
  detail::check_stages(stages, n);
  const auto S = static_cast<std::size_t>(stages);
  const std::size_t chunk = n / S;
  const std::size_t residual = n - chunk * S;
  std::vector<int> stage_at(n);
  std::size_t p = 0;
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t k = 0; k < chunk + (s < residual ? 1 : 0); ++k) {
      stage_at[p++] = static_cast<int>(s);
    }
  }
  return detail::from_positions(order, stage_at);
}

/// DeepSpeed's "parameters": the interval split that best balances
/// `weight` (e.g. parameter bytes).
template <vertex_list_graph G, class Weight>
sharding_result by_weight(const G& g, const Weight& weight, int stages) {
  return balanced_shard(g, weight, balance_options{.stages = stages, .search_budget = 0}).result;
}

/// PiPPy's split_into_equal_size, on `weight`.
template <vertex_list_graph G, class Weight>
sharding_result greedy_threshold(const G& g, const Weight& weight, int stages) {
  static_assert(vertex_weight_map<Weight, G>,
                "shardpoint: the weight must be a readable property map from vertex to a number");
  const auto order = topological_order(g);
  const std::size_t n = order.size();
  detail::check_stages(stages, n);
  const auto ref = shardpoint::detail::access(g);
  double total = 0;
  std::vector<double> w(n);
  for (std::size_t p = 0; p < n; ++p) {
    w[p] = static_cast<double>(ref.read(weight, order[p]));
    total += w[p];
  }
  const double threshold = total / stages;
  std::vector<std::size_t> cuts; // positions that open a new stage
  double accumulated = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (accumulated + w[p] <= threshold) {
      accumulated += w[p];
    } else if (accumulated == 0) { // heavier than the threshold alone
      if (p + 1 < n) {
        cuts.push_back(p + 1);
      }
    } else {
      cuts.push_back(p);
      accumulated = w[p];
    }
  }
  std::vector<int> stage_at(n, 0);
  int s = 0;
  std::size_t next = 0;
  for (std::size_t p = 0; p < n; ++p) {
    while (next < cuts.size() && cuts[next] == p && s + 1 < stages) {
      ++s;
      ++next;
    }
    stage_at[p] = s;
  }
  return detail::from_positions(order, stage_at);
}

} // namespace shardpoint::baselines

#endif // SHARDPOINT_BASELINES_HPP
