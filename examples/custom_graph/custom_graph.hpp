// A graph type that is not Boost's -- a plain struct of successor lists --
// made into a Boost.Graph VertexListGraph + IncidenceGraph with a
// boost::graph_traits specialisation and free functions found by ADL.
// shardpoint's algorithms then run on it unchanged, and so do Boost's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_EXAMPLES_CUSTOM_GRAPH_HPP
#define SHARDPOINT_EXAMPLES_CUSTOM_GRAPH_HPP

#include <cstdint>
#include <utility>
#include <vector>

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/transform_iterator.hpp>
#include <boost/property_map/property_map.hpp>

namespace mygraph {

/// Vertex v's successors are successors[v]: an edge v -> w for each w there.
struct dag {
  std::vector<std::vector<std::uint32_t>> successors;
};

struct edge {
  std::uint32_t source;
  std::uint32_t target;
  friend bool operator==(const edge&, const edge&) = default;
};

/// Turns a successor of `source` into an edge.
struct make_edge {
  std::uint32_t source = 0;
  edge operator()(std::uint32_t target) const { return {source, target}; }
};

using vertex_iterator = boost::counting_iterator<std::uint32_t>;
using out_edge_iterator =
    boost::transform_iterator<make_edge, std::vector<std::uint32_t>::const_iterator, edge, edge>;

struct traversal_category : boost::vertex_list_graph_tag, boost::incidence_graph_tag {};

} // namespace mygraph

template <>
struct boost::graph_traits<mygraph::dag> {
  using vertex_descriptor = std::uint32_t;
  using edge_descriptor = mygraph::edge;
  using directed_category = boost::directed_tag;
  using edge_parallel_category = boost::allow_parallel_edge_tag;
  using traversal_category = mygraph::traversal_category;
  using vertex_iterator = mygraph::vertex_iterator;
  using out_edge_iterator = mygraph::out_edge_iterator;
  using vertices_size_type = std::uint32_t;
  using degree_size_type = std::uint32_t;
  using edges_size_type = std::size_t;
  static vertex_descriptor null_vertex() { return UINT32_MAX; }
};

/// Tells Boost's algorithms which map `get(vertex_index, g)` returns.
template <>
struct boost::property_map<mygraph::dag, boost::vertex_index_t> {
  using type = boost::typed_identity_property_map<std::uint32_t>;
  using const_type = type;
};

namespace mygraph {

// The free functions Boost.Graph's concepts ask for; found by ADL.
inline std::pair<vertex_iterator, vertex_iterator> vertices(const dag& g) {
  return {vertex_iterator(0), vertex_iterator(static_cast<std::uint32_t>(g.successors.size()))};
}
inline std::uint32_t num_vertices(const dag& g) {
  return static_cast<std::uint32_t>(g.successors.size());
}
inline std::pair<out_edge_iterator, out_edge_iterator> out_edges(std::uint32_t v, const dag& g) {
  const auto& s = g.successors[v];
  return {out_edge_iterator(s.begin(), make_edge{v}), out_edge_iterator(s.end(), make_edge{v})};
}
inline std::uint32_t out_degree(std::uint32_t v, const dag& g) {
  return static_cast<std::uint32_t>(g.successors[v].size());
}
inline std::uint32_t source(const edge& e, const dag&) {
  return e.source;
}
inline std::uint32_t target(const edge& e, const dag&) {
  return e.target;
}

/// Vertices are their own indices: the internal vertex_index map.
inline boost::typed_identity_property_map<std::uint32_t> get(boost::vertex_index_t, const dag&) {
  return {};
}

} // namespace mygraph

#endif
