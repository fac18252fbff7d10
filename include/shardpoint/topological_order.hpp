// shardpoint/topological_order.hpp -- topological orders with shardpoint's
// tie rule, and the report of a cycle. Shared by every algorithm.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE TIE RULE
//
//   Kahn's algorithm, with the ready vertices split in two: ordinary ones,
//   taken first in any order, and *keyed* ones, taken only when no ordinary
//   vertex is ready, smallest index first. With the sharding points keyed,
//   the points leave in the lexicographically smallest order in which every
//   point follows the points that reach it (PopRT's step 1, manual_shard).
//   With every vertex keyed, the whole order is the lexicographically
//   smallest topological order -- the identity when the labelling is already
//   topological, which `is_topologically_labelled` checks in one pass.
//
// CYCLES
//
//   The vertices Kahn's algorithm never releases hold every cycle. An
//   iterative depth-first search among them finds an edge back to a vertex
//   on its current path: that vertex lies on a cycle and is named in the
//   `cycle_error` thrown.
//
// COMPLEXITY
//
//   O(V + E) with no keyed vertex, O(V + E + K log K) with K keyed vertices;
//   O(V) extra memory. No in-edges are needed.
#ifndef SHARDPOINT_TOPOLOGICAL_ORDER_HPP
#define SHARDPOINT_TOPOLOGICAL_ORDER_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/text.hpp"
#include "error.hpp"
#include "graph_access.hpp"

namespace shardpoint {
namespace detail {

using vertex_id = std::uint32_t;
inline constexpr vertex_id no_vertex = std::numeric_limits<vertex_id>::max();

/// Throws unless a graph of n vertices fits the 32-bit ids used inside.
inline void check_graph_size(std::size_t n) {
  if (n >= no_vertex) {
    throw unsupported_error(
        cat("shardpoint: graphs of more than ", no_vertex - 1, " vertices are not supported"));
  }
}

/// The number of in-edges of every vertex, by index.
template <class Ref>
std::vector<vertex_id> indegrees(const Ref& g) {
  std::vector<vertex_id> indegree(g.size(), 0);
  for (std::size_t i = 0; i < g.size(); ++i) {
    g.for_each_successor(i, [&](std::size_t t) { ++indegree[t]; });
  }
  return indegree;
}

/// Names a vertex on a cycle among the vertices Kahn's algorithm left with
/// a positive in-degree, and throws cycle_error.
template <class Ref>
[[noreturn]] void throw_cycle(const Ref& g, const std::vector<vertex_id>& indegree) {
  enum : std::uint8_t { white, grey, black };
  const std::size_t n = g.size();
  std::vector<std::uint8_t> colour(n, white);
  using edge_iterator = decltype(g.out_edges_of(0).first);
  std::vector<std::pair<std::size_t, std::pair<edge_iterator, edge_iterator>>> stack;
  for (std::size_t s = 0; s < n; ++s) {
    if (indegree[s] == 0 || colour[s] != white) {
      continue;
    }
    colour[s] = grey;
    stack.emplace_back(s, g.out_edges_of(s));
    while (!stack.empty()) {
      auto& [v, range] = stack.back();
      if (range.first == range.second) {
        colour[v] = black;
        stack.pop_back();
        continue;
      }
      const std::size_t t = g.target_index(*range.first);
      ++range.first;
      if (indegree[t] == 0) {
        continue;
      }
      if (colour[t] == grey) {
        throw cycle_error(cat("shardpoint: the graph has a cycle through ", g.describe(t)), t);
      }
      if (colour[t] == white) {
        colour[t] = grey;
        stack.emplace_back(t, g.out_edges_of(t));
      }
    }
  }
  throw cycle_error("shardpoint: the graph has a cycle");
}

/// Kahn's algorithm with the tie rule above. `keyed(i)` says whether vertex
/// i is keyed; `on_keyed(i)` is called as each keyed vertex is taken.
/// `indegree` is consumed. Returns every vertex index in the order taken;
/// throws cycle_error when the graph has a cycle.
template <class Ref, class Keyed, class OnKeyed>
std::vector<vertex_id> kahn_order(const Ref& g, std::vector<vertex_id> indegree, Keyed&& keyed,
                                  OnKeyed&& on_keyed) {
  const std::size_t n = g.size();
  std::vector<vertex_id> order;
  order.reserve(n);
  std::vector<vertex_id> ready; // ordinary vertices: taken first, in any order
  std::priority_queue<vertex_id, std::vector<vertex_id>, std::greater<>> ready_keyed;
  const auto release = [&](std::size_t i) {
    if (keyed(i)) {
      ready_keyed.push(static_cast<vertex_id>(i));
    } else {
      ready.push_back(static_cast<vertex_id>(i));
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) {
      release(i);
    }
  }
  while (!ready.empty() || !ready_keyed.empty()) {
    std::size_t i;
    if (!ready.empty()) {
      i = ready.back();
      ready.pop_back();
    } else {
      i = ready_keyed.top();
      ready_keyed.pop();
      on_keyed(i);
    }
    order.push_back(static_cast<vertex_id>(i));
    g.for_each_successor(i, [&](std::size_t t) {
      if (--indegree[t] == 0) {
        release(t);
      }
    });
  }
  if (order.size() != n) {
    throw_cycle(g, indegree);
  }
  return order;
}

/// Whether every edge goes from a smaller to a larger index (then the index
/// order is topological and the graph acyclic). One pass over the edges.
template <class Ref>
bool is_index_order_topological(const Ref& g) {
  for (std::size_t i = 0; i < g.size(); ++i) {
    auto [ei, eend] = g.out_edges_of(i);
    for (; ei != eend; ++ei) {
      if (g.target_index(*ei) <= i) {
        return false;
      }
    }
  }
  return true;
}

/// The lexicographically smallest topological order of g's vertex indices.
template <class Ref>
std::vector<vertex_id> smallest_topological_order(const Ref& g) {
  check_graph_size(g.size());
  if (is_index_order_topological(g)) {
    std::vector<vertex_id> order(g.size());
    std::iota(order.begin(), order.end(), vertex_id{0});
    return order;
  }
  return kahn_order(
      g, indegrees(g), [](std::size_t) { return true; }, [](std::size_t) {});
}

} // namespace detail

/// Whether the vertex indices of g are a topological order: every edge goes
/// from a smaller to a larger index. O(V + E). `g` is a graph with an
/// internal vertex index, or `indexed(g, index_map[, name_map])`.
template <vertex_list_graph G>
bool is_topologically_labelled(const G& g) {
  return detail::with_access<bool>(
      g, [&](const auto& a) { return detail::is_index_order_topological(a); });
}

/// The lexicographically smallest topological order of g's vertex indices:
/// the identity when g is topologically labelled (checked first, O(V + E)),
/// otherwise Kahn's algorithm with a min-heap, O(V log V + E). This is the
/// order in which balanced_shard lays a graph out. Throws cycle_error naming
/// a vertex on a cycle.
template <vertex_list_graph G>
std::vector<std::uint32_t> topological_order(const G& g) {
  return detail::with_access<std::vector<std::uint32_t>>(
      g, [&](const auto& a) { return detail::smallest_topological_order(a); });
}

} // namespace shardpoint

#endif // SHARDPOINT_TOPOLOGICAL_ORDER_HPP
