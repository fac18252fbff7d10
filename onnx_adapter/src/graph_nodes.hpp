// A graph's top-level nodes as the adapter's passes read them: protobuf's
// nodes, or the views of a model read with node_reading::views (internal to
// the adapter, issue #30).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Two types with one interface, for passes written once as templates:
//
//   size(); name(v), op_type(v), domain(v); inputs(v), outputs(v) (each a
//   range of names with size() and operator[]); subgraphs(v);
//   node(v, scratch): the node as a NodeProto -- protobuf's own, or the
//   view parsed into `scratch` (its fields and attributes, no doc string),
//   for what needs attributes (an inference function, a Constant's value);
//   initializer_names(g, f) and initializer_count(g) of the graph `g`.
//
// A view whose attributes hold a tensor, a graph or a type was parsed when
// it was read (node_views::parsed): node(v, scratch) is then that node,
// which lives as long as the views, so a pass may keep pointers into what
// those attributes hold (a Constant's tensor). Any other view parsed into
// `scratch` lives while `scratch` does and is unchanged: a pass keeps no
// pointer into it (and it holds no tensor, graph or type to point to).
//
// COST: the accessors are O(1); node(v, scratch) on a view copies its
// strings and parses its attribute bytes, O(the node's bytes).
#ifndef SHARDPOINT_ONNX_SRC_GRAPH_NODES_HPP
#define SHARDPOINT_ONNX_SRC_GRAPH_NODES_HPP

#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/graph.hpp>

#include "node_view.hpp"

namespace shardpoint::onnx {

struct proto_nodes {
  const ::onnx::GraphProto& g;

  [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(g.node_size()); }
  [[nodiscard]] const ::onnx::NodeProto& node(std::size_t v) const {
    return g.node(static_cast<int>(v));
  }
  [[nodiscard]] const ::onnx::NodeProto& node(std::size_t v, ::onnx::NodeProto&) const {
    return node(v);
  }
  [[nodiscard]] std::string_view name(std::size_t v) const { return node(v).name(); }
  [[nodiscard]] std::string_view op_type(std::size_t v) const { return node(v).op_type(); }
  [[nodiscard]] std::string_view domain(std::size_t v) const { return node(v).domain(); }
  [[nodiscard]] const auto& inputs(std::size_t v) const { return node(v).input(); }
  [[nodiscard]] const auto& outputs(std::size_t v) const { return node(v).output(); }
  [[nodiscard]] bool subgraphs(std::size_t v) const { return has_subgraphs(node(v)); }
  /// The names of the graph's initializers (`g` is the graph), f(name) each.
  template <class F>
  static void initializer_names(const ::onnx::GraphProto& g, F f) {
    for (const auto& t : g.initializer()) {
      f(std::string_view(t.name()));
    }
  }
  static std::size_t initializer_count(const ::onnx::GraphProto& g) {
    return static_cast<std::size_t>(g.initializer_size());
  }
};

struct view_nodes {
  const wire::node_views& w;

  [[nodiscard]] std::size_t size() const { return w.size(); }
  [[nodiscard]] std::string_view name(std::size_t v) const { return w.nodes[v].name(); }
  [[nodiscard]] std::string_view op_type(std::size_t v) const { return w.nodes[v].op_type(); }
  [[nodiscard]] std::string_view domain(std::size_t v) const { return w.nodes[v].domain(); }
  [[nodiscard]] auto inputs(std::size_t v) const { return w.inputs(v); }
  [[nodiscard]] auto outputs(std::size_t v) const { return w.outputs(v); }
  [[nodiscard]] bool subgraphs(std::size_t v) const {
    const auto* parsed = w.parsed_node(v);
    return parsed != nullptr && has_subgraphs(*parsed);
  }
  /// Whether node v holds a tensor, a graph or a type (and was parsed).
  [[nodiscard]] bool parsed(std::size_t v) const { return w.parsed_node(v) != nullptr; }
  /// The bytes of node v's attribute fields (node_view::attributes).
  [[nodiscard]] std::string_view attribute_bytes(std::size_t v) const {
    return w.nodes[v].attribute_bytes();
  }
  /// Node v parsed into `scratch`: its inputs, outputs, name, op type,
  /// domain and attributes; or, when it was parsed as it was read, that
  /// node.
  const ::onnx::NodeProto& node(std::size_t v, ::onnx::NodeProto& scratch) const {
    if (const auto* parsed = w.parsed_node(v)) {
      return *parsed;
    }
    const std::string_view attributes = w.nodes[v].attribute_bytes();
    // (The views accepted these bytes: protobuf parses them, node_view.hpp.)
    if (!scratch.ParseFromArray(attributes.data(), static_cast<int>(attributes.size()))) {
      throw internal_error("a node's attributes the views read do not parse");
    }
    for (const std::string_view name : inputs(v)) {
      scratch.add_input(std::string(name));
    }
    for (const std::string_view name : outputs(v)) {
      scratch.add_output(std::string(name));
    }
    scratch.set_name(std::string(name(v)));
    scratch.set_op_type(std::string(op_type(v)));
    scratch.set_domain(std::string(domain(v)));
    return scratch;
  }
  /// The same as proto_nodes': from the views when they hold the names --
  /// the skeleton (`g`) then has no initializers, and is not read, as
  /// proto() may be parsing them into it on another thread.
  template <class F>
  void initializer_names(const ::onnx::GraphProto& g, F f) const {
    if (!w.initializers_as_views) {
      proto_nodes::initializer_names(g, f);
      return;
    }
    for (const std::string_view name : w.initializers) {
      f(name);
    }
  }
  [[nodiscard]] std::size_t initializer_count(const ::onnx::GraphProto& g) const {
    return w.initializers_as_views ? w.initializers.size() : proto_nodes::initializer_count(g);
  }
};

/// "node 3 'name'", or "node 3 (unnamed 'Op')": node v of `nodes` in a
/// message.
template <class Nodes>
std::string label_of(const Nodes& nodes, std::size_t i) {
  const std::string_view name = nodes.name(i);
  return "node " + std::to_string(i) +
         (name.empty() ? " (unnamed " + io::quote(std::string(nodes.op_type(i))) + ")"
                       : " " + io::quote(std::string(name)));
}

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SRC_GRAPH_NODES_HPP
