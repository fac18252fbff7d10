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
//   G models VertexListGraph and IncidenceGraph (`sharding_graph<G>`) with an
//   internal vertex index, or is `indexed(g, index_map[, name_map])`
//   (graph_access.hpp); the index map is checked to be one-to-one onto
//   [0, num_vertices(g)). Vertex descriptors passed in points must belong to
//   g: a vertex whose index is out of range is reported, but the index map is
//   read for it, which for node-based graphs (listS) needs a valid descriptor.
//   The topological order with its tie rule, and the report of a cycle, are
//   topological_order.hpp's.
#ifndef SHARDPOINT_MANUAL_SHARD_HPP
#define SHARDPOINT_MANUAL_SHARD_HPP

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "error.hpp"
#include "graph_access.hpp"
#include "sharding_point.hpp"
#include "sharding_result.hpp"
#include "topological_order.hpp"

namespace shardpoint {
namespace detail {

using rank_t = vertex_id;
inline constexpr rank_t no_rank = no_vertex;

inline constexpr std::size_t device_attr = 0;
inline constexpr std::size_t stage_attr = 1;

struct point_record {
  std::size_t index;
  std::array<std::optional<int>, 2> value; // device, stage
};

template <class Ref>
class sharder {
public:
  explicit sharder(const Ref& g) : g_(g), n_(g.size()) {}

  template <class Points>
  sharding_result run(Points&& points) {
    check_graph_size(n_);
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
      const std::vector<rank_t> order = kahn_ranks(walks, ranks);
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
  template <class Points>
  void collect(Points&& points) {
    using graph = typename Ref::graph_type;
    for (auto&& item : points) {
      const sharding_point<vertex_t<graph>> p = to_point<graph>(item);
      const std::size_t i = g_.index(p.vertex);
      if (i >= n_) {
        std::string msg = "shardpoint: sharding point vertex ";
        msg.append(std::to_string(i)).append(" is outside the graph (");
        msg.append(std::to_string(n_)).append(" vertices)");
        throw vertex_out_of_range_error(msg, i);
      }
      check_value(p.device, "device", i);
      check_value(p.stage, "stage", i);
      points_.push_back({i, {p.device, p.stage}});
    }
    std::sort(points_.begin(), points_.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
    const auto dup =
        std::adjacent_find(points_.begin(), points_.end(),
                           [](const auto& a, const auto& b) { return a.index == b.index; });
    if (dup != points_.end()) {
      std::string msg = "shardpoint: ";
      msg.append(g_.describe(dup->index)).append(" is listed as a sharding point more than once");
      throw duplicate_point_error(msg, dup->index);
    }
  }

  void check_value(const std::optional<int>& value, const char* what, std::size_t i) const {
    if (!value) {
      return;
    }
    if (*value < 0 || *value > max_group_id) {
      std::string msg = "shardpoint: sharding point ";
      msg.append(g_.describe(i)).append(" has ").append(*value < 0 ? "negative " : "too large a ");
      msg.append(what).append(" ").append(std::to_string(*value));
      msg.append(*value < 0 ? "" : " (devices and stages are at most 65535)");
      throw invalid_value_error(msg, i);
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
      auto [ei, eend] = g_.out_edges_of(i);
      for (; ei != eend; ++ei) {
        const std::size_t t = g_.target_index(*ei);
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

  // A topological order of all vertices (returned), and for each walked
  // attribute the ranks of its points in the order of step 1: Kahn's
  // algorithm with the attribute's points keyed (topological_order.hpp).
  std::vector<rank_t> kahn_ranks(const std::vector<std::size_t>& walks,
                                 std::array<std::vector<rank_t>, 2>& ranks) {
    const std::vector<vertex_id> indegree = indegrees(g_);
    std::vector<rank_t> point_at(n_, no_rank); // position in points_ of each point
    for (std::size_t k = 0; k < points_.size(); ++k) {
      point_at[points_[k].index] = static_cast<rank_t>(k);
    }
    std::vector<rank_t> order;
    if (walks.empty()) {
      order = kahn_order(
          g_, indegree, [](std::size_t) { return false; }, [](std::size_t) {});
    }
    for (std::size_t a : walks) {
      ranks[a].assign(n_, no_rank);
      rank_order_[a].clear();
      order = kahn_order(
          g_, indegree,
          [&](std::size_t i) {
            return point_at[i] != no_rank && points_[point_at[i]].value[a].has_value();
          },
          [&](std::size_t i) {
            ranks[a][i] = static_cast<rank_t>(rank_order_[a].size());
            rank_order_[a].push_back(point_at[i]);
          });
    }
    return order;
  }

  const Ref& g_;
  std::size_t n_;
  std::vector<point_record> points_; // sorted by index
  // Per attribute: positions in points_ of its points, in rank order.
  std::array<std::vector<rank_t>, 2> rank_order_;
};

template <class G, class Points>
sharding_result shard(const G& g, Points&& points) {
  const auto ref = access(g);
  return sharder<decltype(ref)>(ref).run(std::forward<Points>(points));
}

} // namespace detail

/// Manual sharding of `g`: a graph with an internal vertex index, or
/// `indexed(g, index_map[, name_map])`. `points` is any input range of
/// sharding_point whose vertex type converts to the graph's, or a braced
/// list `{{v, device, stage}, ...}`.
///
/// Returns the device and stage of every vertex, by index. Throws
/// `cycle_error`, `duplicate_point_error`, `invalid_value_error`,
/// `vertex_out_of_range_error` or `invalid_index_map_error` (all derived from
/// `shardpoint::error`) and then has no other effect.
template <vertex_list_graph G, ranges::input_range Points>
sharding_result manual_shard(const G& g, Points&& points) {
  if constexpr (!detail::accessible<G>) {
    detail::require_graph<G>();
    return {};
  } else if constexpr (!sharding_point_for<ranges::range_reference_t<Points>, G>) {
    detail::require_point<ranges::range_reference_t<Points>, G>();
    return {};
  } else {
    return detail::shard(g, std::forward<Points>(points));
  }
}

/// The same with the points as a braced list.
template <vertex_list_graph G>
sharding_result manual_shard(const G& g,
                             std::initializer_list<sharding_point<vertex_t<G>>> points) {
  if constexpr (!detail::accessible<G>) {
    detail::require_graph<G>();
    return {};
  } else {
    return detail::shard(g, points);
  }
}

/// Manual sharding with an explicit vertex index map (e.g. for listS
/// graphs): `manual_shard(indexed(g, index), points)`.
template <sharding_graph G, ranges::input_range Points, vertex_index_map<G> Index>
sharding_result manual_shard(const G& g, Points&& points, Index index) {
  return manual_shard(indexed(g, std::move(index)), std::forward<Points>(points));
}

/// With an index map and a name map for messages:
/// `manual_shard(indexed(g, index, names), points)`.
template <sharding_graph G, ranges::input_range Points, vertex_index_map<G> Index,
          vertex_name_map<G> Names>
sharding_result manual_shard(const G& g, Points&& points, Index index, const Names& names) {
  return manual_shard(indexed(g, std::move(index), names), std::forward<Points>(points));
}

namespace detail {

template <class G, class Points, class Index, class DeviceMap, class StageMap, class Names>
void shard_into(const G& g, Points&& points, Index index, DeviceMap& device_out,
                StageMap& stage_out, const Names& names) {
  const sharding_result r = [&] {
    if constexpr (std::is_same_v<Names, no_names>) {
      return manual_shard(indexed(g, index), std::forward<Points>(points));
    } else {
      return manual_shard(indexed(g, index, names), std::forward<Points>(points));
    }
  }();
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
  detail::shard_into(g, std::forward<Points>(points), index, device_out, stage_out, no_names{});
}

} // namespace shardpoint

#endif // SHARDPOINT_MANUAL_SHARD_HPP
