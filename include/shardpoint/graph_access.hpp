// shardpoint/graph_access.hpp -- one way for every algorithm to take a graph
// with its vertex index map and, optionally, a name map for messages.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Every shardpoint algorithm addresses vertices by index in [0, n) and names
// them in its errors. A graph with an internal `boost::vertex_index` (vecS
// adjacency_list, compressed_sparse_row_graph, ...) is passed as it is. Any
// other graph -- a listS adjacency_list, or a graph whose index lives in a
// property map of its own -- is passed as
//
//     shardpoint::indexed(g, index_map)               // or
//     shardpoint::indexed(g, index_map, name_map)     // messages name vertices
//
// which every entry point accepts in place of `g` (manual_shard, validate,
// evaluate, balanced_shard, ...). The older positional forms
// (`manual_shard(g, points, index_map, name_map)`) forward to it.
//
// Inside, algorithms see a `detail::graph_ref`: the vertex of each index
// (checked one-to-one in one pass), successor iteration by index, and
// `describe(i)` for messages.
#ifndef SHARDPOINT_GRAPH_ACCESS_HPP
#define SHARDPOINT_GRAPH_ACCESS_HPP

#include <cstddef>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/text.hpp"
#include "error.hpp"

namespace shardpoint {

/// Stands for "no name map": messages then name vertices by index only.
struct no_names {};

/// A graph seen together with its vertex index map and a name map (or
/// `no_names`). Models `sharding_graph` and `indexed_graph` itself, with the
/// same vertex and edge descriptors as G. Holds a reference to `g`.
template <sharding_graph G, vertex_index_map<G> Index, class Names = no_names>
class indexed_view {
public:
  indexed_view(const G& g, Index index, Names names = {})
      : g_(&g), index_(std::move(index)), names_(std::move(names)) {}

  [[nodiscard]] const G& base() const noexcept { return *g_; }
  [[nodiscard]] const Index& index_map() const noexcept { return index_; }
  [[nodiscard]] const Names& name_map() const noexcept { return names_; }

  friend auto vertices(const indexed_view& v) { return vertices(*v.g_); }
  friend auto num_vertices(const indexed_view& v) { return num_vertices(*v.g_); }
  friend auto out_edges(const vertex_t<G>& u, const indexed_view& v) { return out_edges(u, *v.g_); }
  friend auto target(const edge_t<G>& e, const indexed_view& v) { return target(e, *v.g_); }
  friend Index get(boost::vertex_index_t, const indexed_view& v) { return v.index_; }

private:
  const G* g_;
  Index index_;
  Names names_;
};

/// `g` with an explicit vertex index map: a readable property map from
/// vertices onto [0, num_vertices(g)), checked one-to-one by the algorithms.
template <sharding_graph G, vertex_index_map<G> Index>
indexed_view<G, Index> indexed(const G& g, Index index) {
  return {g, std::move(index)};
}

/// `g` with an index map and a name map (vertex -> anything printable) that
/// error messages use: "vertex 17 ('conv3')".
template <sharding_graph G, vertex_index_map<G> Index, vertex_name_map<G> Names>
indexed_view<G, Index, Names> indexed(const G& g, Index index, Names names) {
  return {g, std::move(index), std::move(names)};
}

namespace detail {

/// "vertex 17", or "vertex 17 ('conv3')" when a name map is given.
template <class Names, class Vertex>
std::string describe(std::size_t index, const Vertex& v, const Names& names) {
  std::ostringstream os;
  os << "vertex " << index;
  if constexpr (!std::is_same_v<Names, no_names>) {
    os << " ('" << get(names, v) << "')";
  } else {
    (void)v;
    (void)names;
  }
  return os.str();
}

/// What an algorithm works on: G with its index and name maps, plus the
/// vertex of each index (built and checked on construction, O(V)).
template <class G, class Index, class Names>
class graph_ref {
public:
  using graph_type = G;
  using vertex_type = vertex_t<G>;

  /// Throws `invalid_index_map_error` unless `index` maps the vertices of g
  /// one-to-one onto [0, num_vertices(g)).
  graph_ref(const G& g, Index index, Names names)
      : g_(g), index_(std::move(index)), names_(std::move(names)),
        n_(static_cast<std::size_t>(num_vertices(g))) {
    by_index_.resize(n_);
    std::vector<bool> seen(n_, false);
    auto [vi, vend] = vertices(g_);
    for (; vi != vend; ++vi) {
      const auto i = static_cast<std::size_t>(get(index_, *vi));
      if (i >= n_) {
        throw invalid_index_map_error(cat("shardpoint: the vertex index map gives index ", i,
                                          " for a graph of ", n_, " vertices"));
      }
      if (seen[i]) {
        throw invalid_index_map_error(
            cat("shardpoint: the vertex index map gives index ", i, " to two vertices"), i);
      }
      seen[i] = true;
      by_index_[i] = *vi;
    }
  }

  [[nodiscard]] const G& graph() const noexcept { return g_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] const vertex_type& vertex(std::size_t i) const { return by_index_[i]; }
  [[nodiscard]] std::size_t index(const vertex_type& v) const {
    return static_cast<std::size_t>(get(index_, v));
  }
  [[nodiscard]] const Index& index_map() const noexcept { return index_; }
  [[nodiscard]] const Names& name_map() const noexcept { return names_; }

  /// Calls f(j) for the index j of every edge i -> v(j), in out_edges order.
  template <class F>
  void for_each_successor(std::size_t i, F&& f) const {
    auto [ei, eend] = out_edges(by_index_[i], g_);
    for (; ei != eend; ++ei) {
      f(static_cast<std::size_t>(get(index_, target(*ei, g_))));
    }
  }

  /// The edges out of the vertex of index i, as an iterator pair.
  [[nodiscard]] auto out_edges_of(std::size_t i) const { return out_edges(by_index_[i], g_); }
  [[nodiscard]] std::size_t target_index(const edge_t<G>& e) const {
    return static_cast<std::size_t>(get(index_, target(e, g_)));
  }

  /// "vertex 17" or "vertex 17 ('conv3')".
  [[nodiscard]] std::string describe(std::size_t i) const {
    return detail::describe(i, by_index_[i], names_);
  }

  /// Reads a vertex property map for the vertex of index i.
  template <class M>
  [[nodiscard]] decltype(auto) read(const M& m, std::size_t i) const {
    return get(m, by_index_[i]);
  }

private:
  const G& g_;
  Index index_;
  Names names_;
  std::size_t n_;
  std::vector<vertex_type> by_index_;
};

template <class G>
struct is_indexed_view : std::false_type {};
template <class G, class I, class N>
struct is_indexed_view<indexed_view<G, I, N>> : std::true_type {};

/// Whether an algorithm can run on G as it is: a sharding_graph with an
/// internal vertex index, or an indexed_view.
template <class G>
inline constexpr bool accessible = [] {
  if constexpr (is_indexed_view<G>::value) {
    return true;
  } else if constexpr (sharding_graph<G>) {
    return indexed_graph<G>;
  } else {
    return false;
  }
}();

// The requirements of every entry point, checked with messages that say
// what to do. Entry points are constrained only on vertex_list_graph, so that
// a near miss (a graph without out_edges, a listS graph without an index map,
// points of the wrong type) reaches these static_asserts instead of a page of
// overload candidates and Boost internals; each entry point calls them in the
// branch where `accessible<G>` (or its point check) fails, and nothing else,
// so the message is the first error and the only one.
template <class G>
constexpr void require_graph() {
  static_assert(sharding_graph<G>,
                "shardpoint: G must model VertexListGraph and IncidenceGraph: vertices(g), "
                "num_vertices(g), out_edges(v, g) and target(e, g), found by ADL "
                "(see examples/custom_graph)");
  if constexpr (sharding_graph<G> && !is_indexed_view<G>::value) {
    static_assert(indexed_graph<G>,
                  "shardpoint: this graph has no internal vertex_index map (a listS graph "
                  "needs an explicit index map): pass shardpoint::indexed(g, index_map)");
  }
}

template <class P, class G>
constexpr void require_point() {
  static_assert(sharding_point_for<P, G>,
                "shardpoint: points must be sharding_point<V> with V convertible to the "
                "graph's vertex descriptor");
}

/// The graph_ref of g: its own index map, or the maps of an indexed_view.
/// Precondition: accessible<G>.
template <class G>
auto access(const G& g) {
  if constexpr (is_indexed_view<G>::value) {
    using base = std::remove_cvref_t<decltype(g.base())>;
    using index = std::remove_cvref_t<decltype(g.index_map())>;
    using names = std::remove_cvref_t<decltype(g.name_map())>;
    return graph_ref<base, index, names>(g.base(), g.index_map(), g.name_map());
  } else {
    using index = decltype(get(boost::vertex_index, g));
    return graph_ref<G, index, no_names>(g, get(boost::vertex_index, g), no_names{});
  }
}

/// `f(access(g))`, for an entry point that takes any graph: where G is not
/// accessible, the requirements' message instead (and an `R{}` never used,
/// the build having failed), `f` not instantiated.
template <class R, class G, class F>
R with_access(const G& g, F&& f) {
  if constexpr (!accessible<G>) {
    require_graph<G>();
    return R{};
  } else {
    return std::forward<F>(f)(access(g));
  }
}

/// Every item a vertex of `a` uses (`used[v]`, by vertex index) is one of
/// `items`; otherwise an Error naming the vertex: "<vertex> uses <what> k of
/// N". For the item lists (memory items, parameters) the callers are given.
template <class Error, class Ref, class Uses>
void check_uses(const Ref& a, const Uses& used, std::size_t items, const char* what) {
  for (std::size_t v = 0; v < used.size(); ++v) {
    for (auto k : used[v]) {
      if (k >= items) {
        throw Error(cat("shardpoint: ", a.describe(v), " uses ", what, " ", k, " of ", items), v);
      }
    }
  }
}

/// A point converted to G's vertex type.
template <class G, class P>
sharding_point<vertex_t<G>> to_point(const P& p) {
  if constexpr (std::is_convertible_v<const P&, sharding_point<vertex_t<G>>>) {
    return p;
  } else {
    return {static_cast<vertex_t<G>>(p.vertex), p.device, p.stage};
  }
}

} // namespace detail
} // namespace shardpoint

#endif // SHARDPOINT_GRAPH_ACCESS_HPP
