// shardpoint/manual_shard.hpp -- PopRT-style manual sharding of any graph.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROCEDURE (PopRT manual sharding, seed document section 5.12.3)
//
//   Input: a directed acyclic graph, where an edge u -> v means that v consumes
//   what u produces, and a list of sharding points, each a vertex with an
//   optional device and an optional pipeline stage.
//
//   1. Order the points topologically. Points neither of which reaches the
//      other are ordered by vertex index: the order used is the
//      lexicographically smallest (by vertex index) sequence of the points in
//      which a point comes after every point that reaches it. When the vertex
//      index order is itself topological, that is simply increasing index.
//   2. For each point in that order, walk against the edges from the point.
//      Every vertex reached takes the point's device (resp. stage). A branch
//      stops at a vertex without predecessors or with a value already.
//   3. Every vertex still without a value gets (largest device of any point)
//      + 1, resp. (largest stage) + 1.
//
//   Device and stage are computed independently, each from the points that
//   carry it (each with its own order from step 1). An attribute no point
//   carries stays unset on every vertex.
//
// HOW IT IS COMPUTED
//
//   The walk of step 2 gives vertex v the value of the FIRST point, in the
//   order of step 1, that v reaches (v reaches itself). Proof, by induction
//   over the points p1, p2, ...: after the walk from p_j, every ancestor of
//   p_j has a value. So a vertex v still without a value when p_i is walked
//   is an ancestor of no earlier point, and neither is any vertex on a path
//   from v to p_i (v would then be one too): the whole path is free, the walk
//   from p_i reaches v, and p_i is the first point v reaches. Conversely the
//   walk only ever reaches ancestors of p_i.
//
//   So with rank(p) the position of p in the order, each vertex needs
//       best(v) = min(rank(v) if v is a point, min over edges v -> w of best(w))
//   which one pass over the vertices in reverse topological order computes,
//   reading only out-edges. No recursion, no in-edges, no reverse adjacency.
//
//   When the index order is topological (every valid ONNX node list), that
//   pass runs over decreasing indices and checks each edge on the way; the
//   points are simply sorted. Otherwise (the check failed on some edge) the
//   order comes from Kahn's algorithm, which takes non-point vertices first
//   and, when only points are ready, the ready point of smallest index: the
//   points leave it in exactly the order of step 1, and a cycle shows as
//   vertices it never reaches.
//
// COMPLEXITY
//
//   O(V + E + P log P) time for V vertices, E edges and P points, with one pass
//   over the edges when the index order is topological and four otherwise
//   (five when device and stage points differ). O(V) extra memory.
//
// REQUIREMENTS
//
//   G models VertexListGraph and IncidenceGraph (`sharding_graph<G>`); the
//   index map is a readable property map onto [0, num_vertices(g)), checked to
//   be one-to-one. Vertex descriptors passed in points must belong to g: a
//   vertex whose index is out of range is reported, but the index map is read
//   for it, which for node-based graphs (listS) needs a valid descriptor.
#ifndef SHARDPOINT_MANUAL_SHARD_HPP
#define SHARDPOINT_MANUAL_SHARD_HPP

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/describe.hpp"
#include "detail/index_vertices.hpp"
#include "error.hpp"
#include "sharding_point.hpp"
#include "sharding_result.hpp"

namespace shardpoint {
namespace detail {

using rank_t = std::uint32_t;
inline constexpr rank_t no_rank = std::numeric_limits<rank_t>::max();

inline constexpr std::size_t device_attr = 0;
inline constexpr std::size_t stage_attr = 1;

template <class V>
struct point_record {
  std::size_t index;
  V vertex;
  std::array<std::optional<int>, 2> value; // device, stage
};

template <class G, class Index, class Names>
class sharder {
  using V = vertex_t<G>;

public:
  sharder(const G& g, Index index, const Names& names)
      : g_(g), index_(index), names_(names), n_(num_vertices(g)) {}

  template <class Points>
  sharding_result run(Points&& points) {
    if (n_ >= no_rank) {
      throw error("shardpoint: graphs of more than " + std::to_string(no_rank - 1) +
                  " vertices are not supported");
    }
    by_index_ = index_vertices(g_, index_);
    collect(std::forward<Points>(points));

    // Which attributes are carried, and whether both come from the same points
    // (then one rank array serves both: the joint walk).
    std::array<bool, 2> carried{};
    bool joint = true;
    for (const auto& p : points_) {
      carried[device_attr] = carried[device_attr] || p.value[device_attr].has_value();
      carried[stage_attr] = carried[stage_attr] || p.value[stage_attr].has_value();
      joint = joint && (p.value[device_attr].has_value() == p.value[stage_attr].has_value());
    }

    std::vector<std::size_t> walks; // attributes needing their own rank array
    if (carried[device_attr]) {
      walks.push_back(device_attr);
    }
    if (carried[stage_attr] && !(joint && carried[device_attr])) {
      walks.push_back(stage_attr);
    }

    std::array<std::vector<rank_t>, 2> ranks;
    // Fast path: the index order is topological and the points sort by index.
    for (std::size_t a : walks) {
      seed_by_index(a, ranks[a]);
    }
    if (!dispatch_propagate(walks, ranks, nullptr)) {
      const std::vector<rank_t> order = kahn_order(walks, ranks);
      dispatch_propagate(walks, ranks, &order);
    }

    std::array<std::vector<int>, 2> values;
    for (std::size_t a : {device_attr, stage_attr}) {
      if (!carried[a]) {
        continue;
      }
      const std::size_t src =
          (a == stage_attr && walks.size() == 1 && carried[device_attr]) ? device_attr : a;
      values[a] = finish(ranks[src], value_table(a, src));
    }
    return sharding_result(n_, std::move(values[device_attr]), std::move(values[stage_attr]));
  }

private:
  std::string describe_index(std::size_t i) const {
    return detail::describe(i, by_index_[i], names_);
  }

  template <class Points>
  void collect(Points&& points) {
    for (auto&& item : points) {
      const sharding_point<V> p = item;
      const std::size_t i = static_cast<std::size_t>(get(index_, p.vertex));
      if (i >= n_) {
        throw vertex_out_of_range_error("shardpoint: sharding point vertex " + std::to_string(i) +
                                            " is outside the graph (" + std::to_string(n_) +
                                            " vertices)",
                                        i);
      }
      check_value(p.device, "device", i);
      check_value(p.stage, "stage", i);
      points_.push_back({i, p.vertex, {p.device, p.stage}});
    }
    std::sort(points_.begin(), points_.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
    const auto dup =
        std::adjacent_find(points_.begin(), points_.end(),
                           [](const auto& a, const auto& b) { return a.index == b.index; });
    if (dup != points_.end()) {
      throw duplicate_point_error("shardpoint: " + describe_index(dup->index) +
                                      " is listed as a sharding point more than once",
                                  dup->index);
    }
  }

  void check_value(const std::optional<int>& value, const char* what, std::size_t i) const {
    if (!value) {
      return;
    }
    if (*value < 0 || *value == INT_MAX) {
      throw invalid_value_error("shardpoint: sharding point " + describe_index(i) + " has " +
                                    (*value < 0 ? "negative " : "too large a ") + what + " " +
                                    std::to_string(*value) +
                                    (*value < 0 ? "" : " (the default group would overflow)"),
                                i);
    }
  }

  // Ranks for the fast path: points of attribute `a` in increasing index order.
  void seed_by_index(std::size_t a, std::vector<rank_t>& rank) {
    rank.assign(n_, no_rank);
    rank_order_[a].clear();
    for (std::size_t k = 0; k < points_.size(); ++k) {
      if (points_[k].value[a]) {
        rank[points_[k].index] = static_cast<rank_t>(rank_order_[a].size());
        rank_order_[a].push_back(static_cast<rank_t>(k));
      }
    }
  }

  // The values each rank stands for, for attribute `a` whose ranks live in the
  // array of attribute `src` (the same one unless both share the joint walk).
  std::vector<int> value_table(std::size_t a, std::size_t src) const {
    std::vector<int> table(rank_order_[src].size());
    for (std::size_t r = 0; r < table.size(); ++r) {
      table[r] = *points_[rank_order_[src][r]].value[a];
    }
    return table;
  }

  std::vector<int> finish(const std::vector<rank_t>& rank, const std::vector<int>& table) const {
    const int fallback = table.empty() ? 0 : *std::max_element(table.begin(), table.end()) + 1;
    std::vector<int> out(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      out[i] = rank[i] == no_rank ? fallback : table[rank[i]];
    }
    return out;
  }

  // Propagates best ranks (see the header comment) over one or two rank arrays.
  // With `order` null, runs over decreasing index and returns false as soon as
  // an edge does not go to a larger index; otherwise runs over *order reversed.
  bool dispatch_propagate(const std::vector<std::size_t>& walks,
                          std::array<std::vector<rank_t>, 2>& ranks,
                          const std::vector<rank_t>* order) {
    if (walks.size() == 2) {
      return propagate<2>({ranks[0].data(), ranks[1].data()}, order);
    }
    if (walks.size() == 1) {
      return propagate<1>({ranks[walks[0]].data()}, order);
    }
    return propagate<0>({}, order);
  }

  template <std::size_t K>
  bool propagate(std::array<rank_t*, K> rank, const std::vector<rank_t>* order) {
    for (std::size_t k = n_; k-- > 0;) {
      const std::size_t i = order ? (*order)[k] : k;
      std::array<rank_t, K> best;
      for (std::size_t a = 0; a < K; ++a) {
        best[a] = rank[a][i];
      }
      auto [ei, eend] = out_edges(by_index_[i], g_);
      for (; ei != eend; ++ei) {
        const std::size_t t = static_cast<std::size_t>(get(index_, target(*ei, g_)));
        if (!order && t <= i) {
          return false;
        }
        for (std::size_t a = 0; a < K; ++a) {
          best[a] = std::min(best[a], rank[a][t]);
        }
      }
      for (std::size_t a = 0; a < K; ++a) {
        rank[a][i] = best[a];
      }
    }
    return true;
  }

  // Kahn's algorithm: a topological order of all vertices (returned), and for
  // each walked attribute the ranks of its points in the order of step 1.
  std::vector<rank_t> kahn_order(const std::vector<std::size_t>& walks,
                                 std::array<std::vector<rank_t>, 2>& ranks) {
    std::vector<rank_t> indegree(n_, 0);
    for (std::size_t i = 0; i < n_; ++i) {
      auto [ei, eend] = out_edges(by_index_[i], g_);
      for (; ei != eend; ++ei) {
        ++indegree[static_cast<std::size_t>(get(index_, target(*ei, g_)))];
      }
    }
    // Which point (position in points_) sits at each index.
    std::vector<rank_t> point_at(n_, no_rank);
    for (std::size_t k = 0; k < points_.size(); ++k) {
      point_at[points_[k].index] = static_cast<rank_t>(k);
    }

    std::vector<rank_t> order;
    if (walks.empty()) {
      order = kahn(indegree, point_at, std::nullopt, nullptr);
    }
    for (std::size_t a : walks) {
      ranks[a].assign(n_, no_rank);
      rank_order_[a].clear();
      order = kahn(indegree, point_at, a, &ranks[a]);
    }
    return order;
  }

  std::vector<rank_t> kahn(std::vector<rank_t> indegree, const std::vector<rank_t>& point_at,
                           std::optional<std::size_t> attr, std::vector<rank_t>* rank) {
    const auto is_member = [&](std::size_t i) {
      return attr && point_at[i] != no_rank && points_[point_at[i]].value[*attr].has_value();
    };
    std::vector<rank_t> order;
    order.reserve(n_);
    std::vector<rank_t> ready; // non-members: taken first, in any order
    std::priority_queue<rank_t, std::vector<rank_t>, std::greater<>> ready_points;
    const auto release = [&](std::size_t i) {
      if (is_member(i)) {
        ready_points.push(static_cast<rank_t>(i));
      } else {
        ready.push_back(static_cast<rank_t>(i));
      }
    };
    for (std::size_t i = 0; i < n_; ++i) {
      if (indegree[i] == 0) {
        release(i);
      }
    }
    while (!ready.empty() || !ready_points.empty()) {
      std::size_t i;
      if (!ready.empty()) {
        i = ready.back();
        ready.pop_back();
      } else {
        i = ready_points.top();
        ready_points.pop();
        (*rank)[i] = static_cast<rank_t>(rank_order_[*attr].size());
        rank_order_[*attr].push_back(point_at[i]);
      }
      order.push_back(static_cast<rank_t>(i));
      auto [ei, eend] = out_edges(by_index_[i], g_);
      for (; ei != eend; ++ei) {
        const std::size_t t = static_cast<std::size_t>(get(index_, target(*ei, g_)));
        if (--indegree[t] == 0) {
          release(t);
        }
      }
    }
    if (order.size() != n_) {
      throw_cycle(indegree);
    }
    return order;
  }

  // Vertices Kahn never reached (indegree left > 0) hold every cycle; an
  // iterative depth-first search among them finds an edge back to a vertex on
  // the current path, which lies on a cycle.
  [[noreturn]] void throw_cycle(const std::vector<rank_t>& indegree) const {
    enum : std::uint8_t { white, grey, black };
    std::vector<std::uint8_t> colour(n_, white);
    using edge_iterator = decltype(out_edges(by_index_[0], g_).first);
    std::vector<std::pair<std::size_t, std::pair<edge_iterator, edge_iterator>>> stack;
    for (std::size_t s = 0; s < n_; ++s) {
      if (indegree[s] == 0 || colour[s] != white) {
        continue;
      }
      colour[s] = grey;
      stack.emplace_back(s, out_edges(by_index_[s], g_));
      while (!stack.empty()) {
        auto& [v, range] = stack.back();
        if (range.first == range.second) {
          colour[v] = black;
          stack.pop_back();
          continue;
        }
        const std::size_t t = static_cast<std::size_t>(get(index_, target(*range.first, g_)));
        ++range.first;
        if (indegree[t] == 0) {
          continue;
        }
        if (colour[t] == grey) {
          throw cycle_error("shardpoint: the graph has a cycle through " + describe_index(t), t);
        }
        if (colour[t] == white) {
          colour[t] = grey;
          stack.emplace_back(t, out_edges(by_index_[t], g_));
        }
      }
    }
    throw cycle_error("shardpoint: the graph has a cycle");
  }

  const G& g_;
  Index index_;
  const Names& names_;
  std::size_t n_;
  std::vector<V> by_index_;
  std::vector<point_record<V>> points_; // sorted by index
  // Per attribute: positions in points_ of its points, in rank order.
  std::array<std::vector<rank_t>, 2> rank_order_;
};

} // namespace detail

/// Manual sharding with an explicit vertex index map, naming vertices in error
/// messages through `names` (a readable property map to something printable).
///
/// Returns the device and stage of every vertex, by index. Throws
/// `cycle_error`, `duplicate_point_error`, `invalid_value_error`,
/// `vertex_out_of_range_error` or `invalid_index_map_error` (all derived from
/// `shardpoint::error`) and then has no other effect.
template <sharding_graph G, sharding_point_range<G> Points, vertex_index_map<G> Index,
          vertex_name_map<G> Names>
sharding_result manual_shard(const G& g, Points&& points, Index index, const Names& names) {
  return detail::sharder<G, Index, Names>(g, index, names).run(std::forward<Points>(points));
}

/// Manual sharding with an explicit vertex index map (e.g. for listS graphs).
template <sharding_graph G, sharding_point_range<G> Points, vertex_index_map<G> Index>
sharding_result manual_shard(const G& g, Points&& points, Index index) {
  const no_names names;
  return detail::sharder<G, Index, no_names>(g, index, names).run(std::forward<Points>(points));
}

/// Manual sharding of a graph with an internal `boost::vertex_index` map.
template <indexed_graph G, sharding_point_range<G> Points>
requires sharding_graph<G> sharding_result manual_shard(const G& g, Points&& points) {
  return manual_shard(g, std::forward<Points>(points), get(boost::vertex_index, g));
}

namespace detail {

template <class G, class Points, class Index, class DeviceMap, class StageMap, class Names>
void shard_into(const G& g, Points&& points, Index index, DeviceMap& device_out,
                StageMap& stage_out, const Names& names) {
  const sharding_result r =
      sharder<G, Index, Names>(g, index, names).run(std::forward<Points>(points));
  auto [vi, vend] = vertices(g);
  for (; vi != vend; ++vi) {
    const auto i = static_cast<std::size_t>(get(index, *vi));
    if (const auto d = r.device(i)) {
      put(device_out, *vi, *d);
    }
    if (const auto s = r.stage(i)) {
      put(stage_out, *vi, *s);
    }
  }
}

} // namespace detail

/// The BGL way: writes each vertex's device into `device_out` and its stage
/// into `stage_out` (writable property maps taking `int`). A map is not
/// written at all when no point carries its attribute. On an exception
/// neither map has been written.
template <sharding_graph G, sharding_point_range<G> Points, vertex_index_map<G> Index,
          vertex_int_output_map<G> DeviceMap, vertex_int_output_map<G> StageMap,
          vertex_name_map<G> Names>
void manual_shard(const G& g, Points&& points, Index index, DeviceMap device_out,
                  StageMap stage_out, const Names& names) {
  detail::shard_into(g, std::forward<Points>(points), index, device_out, stage_out, names);
}

/// As above, naming vertices by index only in error messages.
template <sharding_graph G, sharding_point_range<G> Points, vertex_index_map<G> Index,
          vertex_int_output_map<G> DeviceMap, vertex_int_output_map<G> StageMap>
void manual_shard(const G& g, Points&& points, Index index, DeviceMap device_out,
                  StageMap stage_out) {
  const no_names names;
  detail::shard_into(g, std::forward<Points>(points), index, device_out, stage_out, names);
}

} // namespace shardpoint

#endif // SHARDPOINT_MANUAL_SHARD_HPP
