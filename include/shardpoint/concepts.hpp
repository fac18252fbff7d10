// shardpoint/concepts.hpp -- the Boost.Graph concepts shardpoint relies on,
// stated as C++20 concepts.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_CONCEPTS_HPP
#define SHARDPOINT_CONCEPTS_HPP

#include <concepts>
#include <cstddef>
#include <iterator>
#include <ostream>
#include <utility>

#include <boost/graph/properties.hpp>
#include <range/v3/range/concepts.hpp>
#include <range/v3/range/traits.hpp>

#include "sharding_point.hpp"

namespace shardpoint {

namespace detail {

// Descriptor types are read off what the free functions return, not off
// boost::graph_traits: its primary template is not SFINAE-friendly, so asking
// it about a type that is no graph would be a hard error instead of a
// concept that is simply not satisfied.
template <class G>
using vertex_iterator_t = decltype(vertices(std::declval<const G&>()).first);

template <class G>
using out_edge_iterator_t =
    decltype(out_edges(*std::declval<vertex_iterator_t<G>>(), std::declval<const G&>()).first);

} // namespace detail

/// The vertex descriptor of G (boost::graph_traits<G>::vertex_descriptor for
/// every Boost graph).
template <class G>
using vertex_t = typename std::iterator_traits<detail::vertex_iterator_t<G>>::value_type;

/// The edge descriptor of G.
template <class G>
using edge_t = typename std::iterator_traits<detail::out_edge_iterator_t<G>>::value_type;

/// BGL's VertexListGraph: `vertices(g)` gives an iterator pair over every
/// vertex and `num_vertices(g)` counts them. Found by argument-dependent
/// lookup, so a graph type outside Boost qualifies by providing the free
/// functions in its own namespace.
template <class G>
concept vertex_list_graph = requires(const G& g) {
  typename vertex_t<G>;
  { num_vertices(g) } -> std::convertible_to<std::size_t>;
  { vertices(g).first != vertices(g).second } -> std::convertible_to<bool>;
  { *vertices(g).first } -> std::convertible_to<vertex_t<G>>;
};

/// BGL's IncidenceGraph: `out_edges(v, g)` gives an iterator pair over the
/// edges leaving `v`, and `target(e, g)` the vertex an edge enters.
template <class G>
concept incidence_graph = vertex_list_graph<G> && requires(const G& g, const vertex_t<G>& v) {
  typename edge_t<G>;
  { out_edges(v, g).first != out_edges(v, g).second } -> std::convertible_to<bool>;
  { target(*out_edges(v, g).first, g) } -> std::convertible_to<vertex_t<G>>;
};

/// What every shardpoint algorithm needs: walk all vertices and their out-edges.
/// In-edges are never needed (see manual_shard.hpp for why), so a
/// BidirectionalGraph is not required and brings no extra cost either.
template <class G>
concept sharding_graph = vertex_list_graph<G> && incidence_graph<G>;

/// A readable property map from keys `K` to something convertible to `V`.
template <class M, class K, class V>
concept readable_property_map = requires(const M& m, const K& k) {
  { get(m, k) } -> std::convertible_to<V>;
};

/// A readable property map from the vertices of `G` to their indices in
/// [0, num_vertices(g)).
template <class M, class G>
concept vertex_index_map = readable_property_map<M, vertex_t<G>, std::size_t>;

/// A writable property map that accepts `int` values for the vertices of `G`.
template <class M, class G>
concept vertex_int_output_map = requires(M m, const vertex_t<G>& v) {
  put(m, v, int{});
};

/// A readable property map from vertices to names that can be streamed into an
/// error message (std::string, const char*, ...).
template <class M, class G>
concept vertex_name_map = requires(const M& m, const vertex_t<G>& v, std::ostream& os) {
  os << get(m, v);
};

/// A graph whose vertices carry the internal `boost::vertex_index` property.
template <class G>
concept indexed_graph = requires(const G& g) {
  { get(boost::vertex_index, g) } -> vertex_index_map<G>;
};

/// Any input range of `sharding_point<vertex_t<G>>`.
template <class R, class G>
concept sharding_point_range = ranges::input_range<R> &&
    std::convertible_to<ranges::range_reference_t<R>, sharding_point<vertex_t<G>>>;

} // namespace shardpoint

#endif // SHARDPOINT_CONCEPTS_HPP
