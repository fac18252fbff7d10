// shardpoint/evaluate.hpp -- how good is a partition: per-stage and
// per-device loads, cuts and bytes, imbalance, bottleneck, lower bound.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// DEFINITIONS (the balanced partitioner optimises exactly these)
//
//   A group is a stage (or a device). For a group X:
//     cost(X)      sum of the vertices' costs (1 each without a cost map)
//     memory(X)    sum of the vertices' memory weights (with memory_items,
//                  each item any vertex of X uses, once)
//     received(X)  the output bytes of every vertex outside X with at least
//                  one consumer in X, each such producer counted once
//     load(X)      cost(X) + communication_weight * received(X)
//   Edges are cut when their ends are in different groups; an edge is
//   backward when it enters an earlier group than it leaves.
//   The partition is the stages when any vertex has one, else the devices.
//   Over its groups 0..k-1 (empty ones included, as stage gaps are):
//     bottleneck   the largest load
//     imbalance    bottleneck / mean load (1 is perfect; 0 when all are 0)
//     lower_bound  max(total cost / k, largest single vertex cost): no
//                  partition into k groups has a smaller bottleneck.
//
// COMPLEXITY O(V + E) time, O(V + k) extra memory.
#ifndef SHARDPOINT_EVALUATE_HPP
#define SHARDPOINT_EVALUATE_HPP

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/text.hpp"
#include "error.hpp"
#include "graph_access.hpp"
#include "memory_items.hpp"
#include "sharding_result.hpp"

namespace shardpoint {

/// A weight map giving every vertex the same value (boost::static_property_map
/// in spirit, usable as cost, memory or bytes map).
struct constant_weight {
  double value = 1;
  template <class Key>
  friend double get(const constant_weight& m, const Key&) {
    return m.value;
  }
};

struct evaluate_options {
  /// Load per byte received, as balance_options::communication_weight.
  double communication_weight = 0;
};

/// The measures of one stage or one device.
struct group_metrics {
  int id = 0; ///< the stage or device number
  std::size_t vertices = 0;
  double cost = 0;
  double memory = 0;
  double received_bytes = 0;          ///< each outside producer once
  std::size_t received_producers = 0; ///< how many outside producers feed it
  std::size_t edges_in = 0;           ///< cut edges entering it
  std::size_t edges_out = 0;          ///< cut edges leaving it
  std::size_t backward_edges_in = 0;  ///< edges entering it from a later group
  double load = 0;                    ///< cost + communication_weight * received_bytes
};

struct partition_metrics {
  std::vector<group_metrics> stages;  ///< by stage number; empty without stages
  std::vector<group_metrics> devices; ///< by device number; empty without devices
  /// "stage" or "device": which groups the figures below are over.
  const char* partition = "stage";
  std::size_t edges_cut = 0;      ///< edges between groups of the partition
  std::size_t backward_edges = 0; ///< of those, edges into an earlier group
  std::size_t unassigned = 0;     ///< vertices in no group of the partition
  double total_cost = 0;
  double bottleneck = 0; ///< the largest load
  double mean_load = 0;
  double imbalance = 0;   ///< bottleneck / mean load
  double lower_bound = 0; ///< max(total cost / groups, largest vertex cost)
};

namespace detail {

/// Groups 0..count-1, empty.
inline std::vector<group_metrics> empty_groups(int count) {
  std::vector<group_metrics> out(static_cast<std::size_t>(std::max(count, 0)));
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].id = static_cast<int>(k);
  }
  return out;
}

template <class Ref, class Cost, class Memory, class Bytes>
void fill(const Ref& g, std::span<const int> group, std::vector<group_metrics>& out,
          const Cost& cost, const Memory& memory, const Bytes& bytes, double weight,
          std::size_t* cut, std::size_t* backward) {
  const std::size_t n = g.size();
  std::vector<std::size_t> stamp(out.size(), std::numeric_limits<std::size_t>::max());
  for (std::size_t u = 0; u < n; ++u) {
    const int gu = group[u];
    if (gu >= 0) {
      auto& m = out[static_cast<std::size_t>(gu)];
      ++m.vertices;
      m.cost += static_cast<double>(g.read(cost, u));
      if constexpr (!std::is_same_v<Memory, memory_items>) {
        m.memory += static_cast<double>(g.read(memory, u));
      }
    }
    double out_bytes = -1; // read once, when first needed
    g.for_each_successor(u, [&](std::size_t v) {
      const int gv = group[v];
      if (gv == gu || gv < 0 || gu < 0) {
        return;
      }
      auto& to = out[static_cast<std::size_t>(gv)];
      ++out[static_cast<std::size_t>(gu)].edges_out;
      ++to.edges_in;
      ++*cut;
      if (gv < gu) {
        ++to.backward_edges_in;
        ++*backward;
      }
      if (stamp[static_cast<std::size_t>(gv)] != u) {
        stamp[static_cast<std::size_t>(gv)] = u;
        if (out_bytes < 0) {
          out_bytes = static_cast<double>(g.read(bytes, u));
        }
        to.received_bytes += out_bytes;
        ++to.received_producers;
      }
    });
  }
  if constexpr (std::is_same_v<Memory, memory_items>) {
    // Each item once per group, added to each group's memory in item order.
    // Up to 64 groups, the groups using an item are bits of one word: O(V +
    // uses + items). Sorting the (group, item) pairs, as beyond 64 groups,
    // was a tenth of `suggest` at 10^6 vertices, which evaluates its split
    // and three baselines.
    if (out.size() <= 64) {
      std::vector<std::uint64_t> groups_of(memory.bytes.size(), 0);
      for (std::size_t u = 0; u < n; ++u) {
        if (group[u] >= 0) {
          const std::uint64_t bit = std::uint64_t{1} << group[u];
          for (auto it : memory.used[u]) {
            groups_of[it] |= bit;
          }
        }
      }
      for (std::size_t it = 0; it < groups_of.size(); ++it) {
        for (std::uint64_t left = groups_of[it]; left != 0; left &= left - 1) {
          out[static_cast<std::size_t>(std::countr_zero(left))].memory += memory.bytes[it];
        }
      }
    } else {
      std::vector<std::pair<int, std::uint32_t>> held;
      for (std::size_t u = 0; u < n; ++u) {
        if (group[u] >= 0) {
          for (auto it : memory.used[u]) {
            held.emplace_back(group[u], it);
          }
        }
      }
      std::sort(held.begin(), held.end());
      held.erase(std::unique(held.begin(), held.end()), held.end());
      for (const auto& [gv, it] : held) {
        out[static_cast<std::size_t>(gv)].memory += memory.bytes[it];
      }
    }
  }
  for (auto& m : out) {
    m.load = m.cost + weight * m.received_bytes;
  }
}

template <class Ref, class Cost, class Memory, class Bytes>
partition_metrics measure(const Ref& g, const sharding_result& r, const Cost& cost,
                          const Memory& memory, const Bytes& bytes,
                          const evaluate_options& options) {
  if (r.size() != g.size()) {
    throw size_mismatch_error(cat("shardpoint: evaluate() given a sharding of ", r.size(),
                                  " vertices for a graph of ", g.size()));
  }
  if (!(options.communication_weight >= 0)) {
    throw bad_parameter_error("shardpoint: communication_weight must be non-negative");
  }
  partition_metrics m;
  std::size_t ignored_cut = 0;
  std::size_t ignored_backward = 0;
  const bool by_stage = r.has_stages() || !r.has_devices();
  m.partition = by_stage ? "stage" : "device";
  if (r.has_stages()) {
    m.stages = empty_groups(r.num_stages());
    fill(g, r.stages(), m.stages, cost, memory, bytes, options.communication_weight,
         by_stage ? &m.edges_cut : &ignored_cut, by_stage ? &m.backward_edges : &ignored_backward);
  }
  if (r.has_devices()) {
    m.devices = empty_groups(r.num_devices());
    fill(g, r.devices(), m.devices, cost, memory, bytes, options.communication_weight,
         by_stage ? &ignored_cut : &m.edges_cut, by_stage ? &ignored_backward : &m.backward_edges);
  }
  const std::vector<group_metrics>& groups = by_stage ? m.stages : m.devices;
  double largest_vertex = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto c = static_cast<double>(g.read(cost, i));
    m.total_cost += c;
    largest_vertex = std::max(largest_vertex, c);
    const auto value = by_stage ? r.stage(i) : r.device(i);
    m.unassigned += value ? 0 : 1;
  }
  double sum = 0;
  for (const auto& x : groups) {
    m.bottleneck = std::max(m.bottleneck, x.load);
    sum += x.load;
  }
  const double k = groups.empty() ? 1.0 : static_cast<double>(groups.size());
  m.mean_load = sum / k;
  m.imbalance = m.mean_load > 0 ? m.bottleneck / m.mean_load : 0;
  m.lower_bound = std::max(m.total_cost / k, largest_vertex);
  return m;
}

template <class G, class Cost, class Memory, class Bytes>
partition_metrics evaluate_impl(const G& graph, const sharding_result& r, const Cost& cost,
                                const Memory& memory, const Bytes& bytes,
                                const evaluate_options& options) {
  if constexpr (!accessible<G>) {
    require_graph<G>();
    return {};
  } else {
    return measure(access(graph), r, cost, memory, bytes, options);
  }
}

} // namespace detail

/// The measures of `result` on `g` (a graph with an internal vertex index,
/// or `indexed(g, index_map[, name_map])`); see the top of this header.
/// Maps are readable property maps from vertex to a number: without a cost
/// map every vertex costs 1, without a memory map weighs 0, without a bytes
/// map outputs 0 bytes. Throws size_mismatch_error when `result` does not
/// have num_vertices(g) vertices.
template <vertex_list_graph G>
partition_metrics evaluate(const G& g, const sharding_result& result) {
  return detail::evaluate_impl(g, result, constant_weight{1}, constant_weight{0},
                               constant_weight{0}, {});
}

template <vertex_list_graph G, class Cost>
partition_metrics evaluate(const G& g, const sharding_result& result, const Cost& cost,
                           const evaluate_options& options = {}) {
  static_assert(vertex_weight_map<Cost, G>,
                "shardpoint: the cost map must be a readable property map from vertex to a number");
  return detail::evaluate_impl(g, result, cost, constant_weight{0}, constant_weight{0}, options);
}

template <vertex_list_graph G, class Cost, class Memory>
partition_metrics evaluate(const G& g, const sharding_result& result, const Cost& cost,
                           const Memory& memory, const evaluate_options& options = {}) {
  static_assert(vertex_weight_map<Cost, G> &&
                    (vertex_weight_map<Memory, G> || std::is_same_v<Memory, memory_items>),
                "shardpoint: cost and memory maps must be readable property maps from vertex to "
                "a number (or memory_items)");
  return detail::evaluate_impl(g, result, cost, memory, constant_weight{0}, options);
}

template <vertex_list_graph G, class Cost, class Memory, class Bytes>
partition_metrics evaluate(const G& g, const sharding_result& result, const Cost& cost,
                           const Memory& memory, const Bytes& output_bytes,
                           const evaluate_options& options = {}) {
  static_assert(vertex_weight_map<Cost, G> &&
                    (vertex_weight_map<Memory, G> ||
                     std::is_same_v<Memory, memory_items>)&&vertex_weight_map<Bytes, G>,
                "shardpoint: cost, memory and output-bytes maps must be readable property maps "
                "from vertex to a number");
  return detail::evaluate_impl(g, result, cost, memory, output_bytes, options);
}

} // namespace shardpoint

#endif // SHARDPOINT_EVALUATE_HPP
