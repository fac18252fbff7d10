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
#include <type_traits>
#include <utility>

#include <boost/graph/properties.hpp>
#include <boost/pending/property.hpp>
#include <range/v3/range/concepts.hpp>
#include <range/v3/range/traits.hpp>

#include "sharding_point.hpp"

namespace boost {
// Declared (not defined) here so that the trait below can recognise it
// without pulling in all of adjacency_list.hpp.
template <class OutEdgeListS, class VertexListS, class DirectedS, class VertexProperty,
          class EdgeProperty, class GraphProperty, class EdgeListS>
class adjacency_list;
struct vecS;
} // namespace boost

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

// Whether `get(boost::vertex_index, g)` may even be asked. Boost answers that
// question for an adjacency_list whose vertices are not in a vecS with a hard
// error deep inside its property lookup ("forming reference to void") unless
// the vertex property holds a vertex_index_t, so it is answered here first.
template <class G>
struct may_have_vertex_index : std::true_type {};

template <class OE, class VL, class D, class VP, class EP, class GP, class EL>
struct may_have_vertex_index<boost::adjacency_list<OE, VL, D, VP, EP, GP, EL>>
    : std::bool_constant<std::is_same_v<VL, boost::vecS> ||
                         boost::lookup_one_property<VP, boost::vertex_index_t>::found> {};

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

/// A readable property map from the vertices of `G` to a number: a cost, a
/// memory size, the bytes of an output. Integral and floating-point values
/// alike (the algorithms compute in double).
template <class M, class G>
concept vertex_weight_map = requires(const M& m, const vertex_t<G>& v) {
  get(m, v);
  requires std::is_arithmetic_v<std::remove_cvref_t<decltype(get(m, v))>>;
};

namespace detail {
/// The check of a per-vertex bytes map (what each vertex produces), with the
/// one message every memory entry point gives.
template <class M, class G>
constexpr void require_produced_bytes() {
  static_assert(vertex_weight_map<M, G>,
                "shardpoint: the produced-bytes map must be a readable property map from vertex "
                "to a number");
}
} // namespace detail

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

/// A readable property map from vertices to bool (e.g. which vertices are
/// the graph's inputs).
template <class M, class G>
concept vertex_predicate_map = readable_property_map < M,
        vertex_t<G>,
bool > ;

/// A graph whose vertices carry the internal `boost::vertex_index` property
/// (every vecS adjacency_list, compressed_sparse_row_graph, and any type
/// that answers `get(boost::vertex_index, g)`). A listS adjacency_list
/// without a vertex_index_t property is not one: give it an index map.
template <class G>
concept indexed_graph = detail::may_have_vertex_index<G>::value && requires(const G& g) {
  { get(boost::vertex_index, g) } -> vertex_index_map<G>;
};

namespace detail {

template <class P, class V>
struct is_point_of : std::false_type {};

template <class W, class V>
struct is_point_of<sharding_point<W>, V> : std::is_convertible<W, V> {};

} // namespace detail

/// A point for graph G: a `sharding_point<W>` whose vertex type W converts
/// to G's vertex descriptor (so `sharding_point<int>` serves a graph whose
/// vertices are `std::size_t`), or anything convertible to
/// `sharding_point<vertex_t<G>>`.
template <class P, class G>
concept sharding_point_for = detail::is_point_of<std::remove_cvref_t<P>, vertex_t<G>>::value ||
    std::convertible_to<P, sharding_point<vertex_t<G>>>;

/// Any input range of points for G (see sharding_point_for).
template <class R, class G>
concept sharding_point_range =
    ranges::input_range<R> && sharding_point_for<ranges::range_reference_t<R>, G>;

} // namespace shardpoint

#endif // SHARDPOINT_CONCEPTS_HPP
