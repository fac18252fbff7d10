// shardpoint/producers_late.hpp -- the order the balanced partitioner lays
// a graph out in: the given order, with every source moved to just before
// its first consumer.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// PROCEDURE
//   A source is a vertex without predecessors (in ONNX a Constant, a node
//   reading only graph inputs and weights). The partitioner cuts an order
//   into consecutive runs; a source left where a format lists it (often all
//   at the top) lands in the first stage and sends its output across every
//   cut to its consumer. So: walk the vertices by index; skip a source whose
//   first consumer (smallest successor index) comes later; before placing
//   any vertex, place the skipped sources whose first consumer it is, in
//   index order.
//
// WHY IT IS RIGHT
//   Every vertex gets exactly one position: a skipped source is placed when
//   its first consumer is reached, which happens since that index is < n.
//   When the index order is topological it stays topological: a moved
//   source has no predecessors, and it still precedes every consumer (all
//   have index >= the first one, and keep their relative order).
//
// COMPLEXITY O(V + E) time, O(V) extra memory.
#ifndef SHARDPOINT_PRODUCERS_LATE_HPP
#define SHARDPOINT_PRODUCERS_LATE_HPP

#include <algorithm>
#include <cstddef>
#include <vector>

#include "concepts.hpp"
#include "graph_access.hpp"

namespace shardpoint {

namespace detail {

template <class Ref>
std::vector<std::size_t> producers_late(const Ref& g) {
  const std::size_t n = g.size();
  std::vector<bool> has_predecessor(n, false);
  std::vector<std::size_t> first_consumer(n, n);
  for (std::size_t u = 0; u < n; ++u) {
    g.for_each_successor(u, [&](std::size_t v) {
      has_predecessor[v] = true;
      first_consumer[u] = std::min(first_consumer[u], v);
    });
  }
  const auto moved = [&](std::size_t u) {
    return !has_predecessor[u] && first_consumer[u] < n && first_consumer[u] > u;
  };
  std::vector<std::vector<std::size_t>> before(n); // the sources each vertex brings
  for (std::size_t u = 0; u < n; ++u) {
    if (moved(u)) {
      before[first_consumer[u]].push_back(u);
    }
  }
  std::vector<std::size_t> position(n);
  std::size_t next = 0;
  for (std::size_t v = 0; v < n; ++v) {
    if (moved(v)) {
      continue; // placed before its first consumer
    }
    for (std::size_t u : before[v]) {
      position[u] = next++;
    }
    position[v] = next++;
  }
  return position;
}

} // namespace detail

/// Each vertex's position (by vertex index) in the order above.
template <vertex_list_graph G>
std::vector<std::size_t> producers_late_positions(const G& g) {
  const auto positions = [](const auto& a) { return detail::producers_late(a); };
  return detail::with_access<std::vector<std::size_t>>(g, positions);
}

} // namespace shardpoint

#endif // SHARDPOINT_PRODUCERS_LATE_HPP
