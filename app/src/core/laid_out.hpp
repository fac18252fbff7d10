// A graph as the algorithms see it: its nodes laid out with producers late
// (producers_late_positions), so that a Constant joins the stage that reads
// it. Internal to app_core (suggest.cpp, picture.cpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_CORE_LAID_OUT_HPP
#define SHARDPOINT_APP_CORE_LAID_OUT_HPP

#include <string>
#include <vector>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/app/model_source.hpp>

namespace shardpoint::app::detail {

// The algorithms index vertices by the positions (results, points and
// memory items alike); `node_order` maps them back.
struct laid_out_model {
  node_measures w; ///< measured first: a source may build its graph meanwhile
  const model_source::graph_type& graph;
  std::vector<std::string> names;
  std::vector<std::size_t> positions;  ///< node -> position
  std::vector<std::size_t> node_order; ///< position -> node
  memory_items params;                 ///< parameter bytes, by position

  laid_out_model(model_source& source, cost_model cost)
      : w(source.measure(cost)), graph(acyclic_graph(source)), names(source.names()),
        positions(producers_late_positions(graph)), node_order(positions.size()) {
    params.bytes = std::move(w.parameters.bytes);
    params.used = to_positions(std::move(w.parameters.used));
    for (std::size_t v = 0; v < positions.size(); ++v) {
      node_order[positions[v]] = v;
    }
  }

  /// The source's graph, refused with a cycle as the source says it.
  static const model_source::graph_type& acyclic_graph(model_source& source) {
    source.check_acyclic();
    return source.graph();
  }
  /// A property map over the nodes of a vector indexed by node.
  template <class T>
  [[nodiscard]] auto by_node(const std::vector<T>& values) const {
    return boost::make_iterator_property_map(values.begin(), get(boost::vertex_index, graph));
  }
  /// The graph as the algorithms take it: vertex index = position.
  [[nodiscard]] auto view() const { return indexed(graph, by_node(positions), by_node(names)); }
  /// A vector indexed by node, re-indexed by position.
  template <class T>
  [[nodiscard]] std::vector<T> to_positions(std::vector<T> by_node_index) const {
    std::vector<T> out(positions.size());
    for (std::size_t v = 0; v < positions.size(); ++v) {
      out[positions[v]] = std::move(by_node_index[v]);
    }
    return out;
  }
  /// A split by position as a sharding of the nodes (device = stage).
  [[nodiscard]] sharding_result by_node_index(const sharding_result& r) const {
    std::vector<int> stage_of(positions.size());
    for (std::size_t v = 0; v < positions.size(); ++v) {
      stage_of[v] = *r.stage(positions[v]);
    }
    return {positions.size(), stage_of, stage_of};
  }
};

} // namespace shardpoint::app::detail

#endif // SHARDPOINT_APP_CORE_LAID_OUT_HPP
