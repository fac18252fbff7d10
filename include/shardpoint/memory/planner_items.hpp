// shardpoint/memory/planner_items.hpp -- the planner as memory items, so that
// balanced_shard's cap holds on the planner's totals (suggest).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Part of the memory planner; the model, the rules and the complexity are
// stated at the top of shardpoint/memory_plan.hpp.
#ifndef SHARDPOINT_MEMORY_PLANNER_ITEMS_HPP
#define SHARDPOINT_MEMORY_PLANNER_ITEMS_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../concepts.hpp"
#include "../graph_access.hpp"
#include "../memory_items.hpp"
#include "formulas.hpp"
#include "stage_inputs.hpp"

namespace shardpoint {

namespace detail::memory {

template <class Ref, class Produced>
memory_items items(const Ref& a, const parameter_uses& params, const Produced& produced,
                   const parallel_config& config, std::int64_t stages) {
  const std::size_t n = a.size();
  if (params.used.size() != n) {
    throw size_mismatch_error(cat("shardpoint: plan_memory_items() given ", params.used.size(),
                                  " parameter uses for a graph of ", n, " vertices"));
  }
  if (stages < 1) {
    throw bad_parameter_error(
        cat("shardpoint: plan_memory_items() needs at least one stage, not ", stages));
  }
  check_memory_rules(config, stages);
  const std::int64_t sd = config.sharded_data_parallel;
  const degrees d{sd, sd, config.shard_optimizer_states ? config.data_parallel : sd};
  memory_items out;
  out.bytes.reserve(params.tensors.size() + n);
  for (const auto& t : params.tensors) {
    stage_memory_input one;
    one.parameters.push_back(t);
    const model_states st = states_of(one, config, d);
    out.bytes.push_back(static_cast<double>(add(add(st.parameters, st.gradients), st.optimizer)));
  }
  // Every micro-batch a stage may hold: the most of any stage.
  const std::int64_t copies = !config.training ? queue_entries(config)
                              : config.schedule == pipeline_schedule::gpipe
                                  ? config.micro_batches
                                  : std::min(config.micro_batches, stages);
  out.used.resize(n);
  const auto first_output = static_cast<std::uint32_t>(out.bytes.size());
  check_uses<bad_parameter_error>(a, params.used, params.tensors.size(), "parameter");
  for (std::size_t v = 0; v < n; ++v) {
    out.used[v].assign(params.used[v].begin(), params.used[v].end());
    const auto b = static_cast<std::int64_t>(a.read(produced, v));
    out.bytes.push_back(static_cast<double>(mul(b, copies)));
    out.used[v].push_back(first_output + static_cast<std::uint32_t>(v));
  }
  for (std::size_t u = 0; u < n; ++u) {
    a.for_each_successor(u, [&](std::size_t v) {
      out.used[v].push_back(first_output + static_cast<std::uint32_t>(u));
    });
  }
  return out;
}

} // namespace detail::memory

/// The planner as memory items for balanced_shard and evaluate: each weight
/// an item of its model-state bytes on one device, each vertex's output an
/// item used by the vertex and its consumers, of its bytes times the most
/// micro-batches any of `stages` stages holds (M for GPipe, min(M, S) for
/// 1F1B, the queue depth for inference). A stage's sum is then at least
/// plan_memory's total for any device of it, exactly that total for GPipe
/// training -- except the gathered working set of sharded data
/// parallelism, which exists only with one stage. Throws as plan_memory for
/// a broken rule.
template <vertex_list_graph G, class Produced>
memory_items plan_memory_items(const G& g, const parameter_uses& params, const Produced& produced,
                               const parallel_config& config, std::int64_t stages) {
  detail::require_produced_bytes<Produced, G>();
  return detail::with_access<memory_items>(
      g, [&](const auto& a) { return detail::memory::items(a, params, produced, config, stages); });
}

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_PLANNER_ITEMS_HPP
