// shardpoint/memory/stage_inputs.hpp -- what each stage of a partitioned graph
// holds, as the formulas take it.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Part of the memory planner; the model, the rules and the complexity are
// stated at the top of shardpoint/memory_plan.hpp.
#ifndef SHARDPOINT_MEMORY_STAGE_INPUTS_HPP
#define SHARDPOINT_MEMORY_STAGE_INPUTS_HPP

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "../concepts.hpp"
#include "../detail/text.hpp"
#include "../error.hpp"
#include "../evaluate.hpp"
#include "../graph_access.hpp"
#include "../sharding_result.hpp"
#include "config.hpp"

namespace shardpoint {

/// A stage's weights as per-vertex uses of shared tensors, as memory_items
/// is for bytes: each tensor a stage's vertices read is held once.
struct parameter_uses {
  std::vector<parameter_tensor> tensors;
  std::vector<std::vector<std::uint32_t>> used; ///< per vertex index
};

/// What each stage of `result` holds, per stage 0..num_stages()-1 (every
/// vertex in stage 0 when the result has no stages): the tensors its
/// vertices use (each vertex a layer), the output bytes of its vertices
/// (`produced`, a readable vertex property map) and of the outside vertices
/// it reads, each once (as evaluate's received bytes), and the device
/// holding it (its first vertex with a device; none without devices).
namespace detail::memory {

template <class Ref, class G, class Produced>
std::vector<stage_memory_input> inputs(const Ref& a, const G& g, const sharding_result& result,
                                       const parameter_uses& params, const Produced& produced) {
  const std::size_t n = a.size();
  if (result.size() != n || params.used.size() != n) {
    throw size_mismatch_error(cat("shardpoint: stage_memory_inputs() given ", result.size(),
                                  " results and ", params.used.size(),
                                  " parameter uses for a graph of ", n, " vertices"));
  }
  std::vector<int> stage(n, 0);
  if (result.has_stages()) {
    for (std::size_t v = 0; v < n; ++v) {
      const auto s = result.stage(v);
      if (!s) {
        throw invalid_sharding_error(cat("shardpoint: ", a.describe(v), " has no stage"), v);
      }
      stage[v] = *s;
    }
  }
  const int count = result.has_stages() ? result.num_stages() : 1;
  // Produced bytes as the cost, so that a stage's cost is what it produces
  // and its received bytes are evaluate's, each outside producer once.
  const partition_metrics pm =
      evaluate(g, sharding_result(n, {}, stage), produced, constant_weight{0}, produced);
  std::vector<stage_memory_input> out(static_cast<std::size_t>(count));
  for (std::size_t v = 0; v < n; ++v) { // (the first bad use in vertex order)
    for (auto t : params.used[v]) {
      if (t >= params.tensors.size()) {
        throw bad_parameter_error(cat("shardpoint: ", a.describe(v), " uses parameter ", t, " of ",
                                      params.tensors.size()),
                                  v);
      }
    }
  }
  // Stage by stage, each stage's vertices in order, with one tensor -> index
  // table emptied after each (a table a stage was S x tensors: a trial's
  // 65536 stages ran the machine out of memory).
  std::vector<std::size_t> first(out.size() + 1, 0); // the vertices by stage, stably
  for (const int s : stage) {
    ++first[static_cast<std::size_t>(s) + 1];
  }
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<std::size_t> by_stage(n);
  std::vector<std::size_t> next(first.begin(), first.end() - 1);
  for (std::size_t v = 0; v < n; ++v) {
    by_stage[next[static_cast<std::size_t>(stage[v])]++] = v;
  }
  std::vector<std::int64_t> map(params.tensors.size(), -1); // tensor -> index in the stage
  for (std::size_t s = 0; s < out.size(); ++s) {
    auto& in = out[s];
    for (std::size_t k = first[s]; k < first[s + 1]; ++k) {
      std::vector<std::uint32_t> layer;
      for (auto t : params.used[by_stage[k]]) {
        if (map[t] < 0) {
          map[t] = static_cast<std::int64_t>(in.parameters.size());
          in.parameters.push_back(params.tensors[t]);
        }
        layer.push_back(static_cast<std::uint32_t>(map[t]));
      }
      if (!layer.empty()) {
        in.layers.push_back(std::move(layer));
      }
    }
    for (std::size_t k = first[s]; k < first[s + 1]; ++k) {
      for (auto t : params.used[by_stage[k]]) {
        map[t] = -1;
      }
    }
  }
  // A stage's device is its first vertex's (PopRT's rules keep a stage on
  // one device; validate names a stage on two).
  for (std::size_t v = n; result.has_devices() && v-- > 0;) {
    if (const auto d = result.device(v)) {
      out[static_cast<std::size_t>(stage[v])].device = *d;
    }
  }
  for (std::size_t s = 0; s < out.size() && s < pm.stages.size(); ++s) {
    out[s].produced_bytes = static_cast<std::int64_t>(pm.stages[s].cost);
    out[s].received_bytes = static_cast<std::int64_t>(pm.stages[s].received_bytes);
  }
  return out;
}

} // namespace detail::memory

/// What each stage of `result` holds, stage 0..num_stages()-1 (all in stage
/// 0 when the result has no stages): the tensors its vertices use, each
/// once (each vertex a layer); the output bytes of its vertices (`produced`,
/// a readable property map from vertex to bytes) and of the outside
/// vertices it reads, each once, as evaluate's received bytes. `g` as every
/// algorithm takes it (graph_access.hpp); `params.used` by vertex index.
template <vertex_list_graph G, class Produced>
std::vector<stage_memory_input> stage_memory_inputs(const G& g, const sharding_result& result,
                                                    const parameter_uses& params,
                                                    const Produced& produced) {
  detail::require_produced_bytes<Produced, G>();
  return detail::with_access<std::vector<stage_memory_input>>(
      g, [&](const auto& a) { return detail::memory::inputs(a, g, result, params, produced); });
}

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_STAGE_INPUTS_HPP
