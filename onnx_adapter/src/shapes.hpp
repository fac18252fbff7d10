// Sizes and shapes of a model's tensors, from ONNX shape inference run on
// the model in place (internal to the adapter).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SHAPES_HPP
#define SHARDPOINT_ONNX_SHAPES_HPP

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include <shardpoint/onnx/costs.hpp>
#include <shardpoint/onnx/graph.hpp>

namespace shardpoint::onnx::shapes {

/// Bytes per element of an ONNX tensor type; 0 for strings and unknown types.
std::int64_t element_size(int type);

/// The bytes of an initializer's data (from its dims and type).
std::int64_t tensor_bytes(const ::onnx::TensorProto& t);

struct sized {
  std::int64_t bytes = 0;
  std::string per; // symbolic dimensions, counted as 1
};

/// The bytes of a value of `type`, or nothing when its shape is unknown;
/// `tensor` names it when its size passes 2^62 bytes (bad input).
std::optional<sized> value_bytes(const ::onnx::TypeProto& type, std::string_view tensor);
/// value_bytes(...).bytes, without naming the symbolic dimensions.
std::optional<std::int64_t> value_byte_count(const ::onnx::TypeProto& type,
                                             std::string_view tensor);

// Gives the graph inputs of `model` the sizes the user set (input_sizes)
// for as long as it lives, and puts the inputs back as they were. Throws
// bad_parameter_error for a size that names no input or symbol, has
// another rank, or contradicts a dimension the model fixes.
class sized_inputs {
public:
  sized_inputs(::onnx::ModelProto& model, const input_sizes* sizes);
  sized_inputs(const sized_inputs&) = delete;
  sized_inputs& operator=(const sized_inputs&) = delete;
  ~sized_inputs();

  /// Whether any size was given (shape inference then propagates data).
  [[nodiscard]] bool active() const { return graph_ != nullptr; }

private:
  ::onnx::GraphProto* graph_ = nullptr;
  google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> saved_;
};

class node_inference; // infer.hpp
} // namespace shardpoint::onnx::shapes

namespace shardpoint::onnx::wire {
struct node_views;
} // namespace shardpoint::onnx::wire

namespace shardpoint::onnx::shapes {

// ONNX shape inference of `model`'s top-level tensors. A model without
// subgraphs or model-local functions, inferred without data propagation, is
// inferred node by node (infer.hpp), to the same types, without touching
// it. Any other runs libonnx's InferShapes on `model` itself, not on a copy
// (copying 10^5 nodes costs as much as inferring their shapes), and puts
// the model back as it was on destruction. InferShapes writes in two places: it appends to and
// refines `value_info`, and it refines graph outputs, in the main graph and in
// every subgraph it enters. Both are saved for every graph beforehand and
// swapped back afterwards; nothing else is touched (the round trip of every
// model in the tests checks this byte for byte).
class inferred_shapes {
public:
  /// Whether inferring `model`'s shapes leaves it untouched (it is inferred
  /// node by node): other readers of the model may then run beside it.
  static bool leaves_untouched(const ::onnx::ModelProto& model, bool propagate_data);

  /// `propagate_data`: with ONNX's data propagation (shape computations).
  explicit inferred_shapes(::onnx::ModelProto& model, bool propagate_data = false);
  /// The same, and `unshaped` -- work that needs no shapes and only reads
  /// the model -- run beside inference on another core where inference
  /// leaves the model untouched (leaves_untouched), else before it. Its
  /// error is thrown as it would be had it run first.
  inferred_shapes(::onnx::ModelProto& model, bool propagate_data,
                  const std::function<void()>& unshaped);
  /// The same, without data propagation, of a model read with
  /// node_reading::views_with_initializers: its skeleton
  /// (proto_without_nodes()), which node_inference::handles(), and its
  /// nodes as views, which are not parsed (node_inference::make_handled).
  /// `unshaped` may be empty.
  inferred_shapes(const ::onnx::ModelProto& skeleton, const wire::node_views& nodes,
                  const std::function<void()>& unshaped);
  inferred_shapes(const inferred_shapes&) = delete;
  inferred_shapes& operator=(const inferred_shapes&) = delete;
  ~inferred_shapes();

  /// The type of a top-level tensor, or nullptr when inference found none.
  /// Valid while *this lives.
  const ::onnx::TypeProto* find(std::string_view name) const;
  /// find() of the name of the top-level graph's node v's input i, output
  /// j (which it must have): without looking the name up where the model
  /// was inferred node by node.
  const ::onnx::TypeProto* input_type(std::size_t v, std::size_t i) const;
  const ::onnx::TypeProto* output_type(std::size_t v, std::size_t j) const;
  /// find() of `nodes.tensors[t]`, which a node writes (nodes.producer[t]):
  /// by its place among that node's outputs.
  const ::onnx::TypeProto* produced_type(const node_graph& nodes, std::size_t t) const;

private:
  void infer(::onnx::ModelProto& model, bool propagate_data, bool by_node);

  struct saved_graph {
    ::onnx::GraphProto* graph;
    google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> value_info;
    google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> output;
  };
  const ::onnx::GraphProto* graph_;
  const wire::node_views* views_ = nullptr; // the nodes, when graph_ has none
  std::unique_ptr<node_inference> by_node_;
  std::vector<saved_graph> saved_;
  std::unordered_map<std::string_view, const ::onnx::TypeProto*> types_;
  std::deque<::onnx::TypeProto> initializer_types_;
};

/// Whether an ONNX tensor type is floating point (a weight's, usually).
bool is_floating(int type);

/// Whether a type inferred_shapes found (nullptr: none) is unknown or has a
/// dimension without a value; adds its symbolic dimensions' names to
/// `symbols`.
bool has_free_dims(const ::onnx::TypeProto* type, std::set<std::string>& symbols);

/// The dimensions of a type inferred_shapes found, symbolic ones as 1;
/// nothing when the shape is unknown.
std::optional<std::vector<std::int64_t>> dims_of(const ::onnx::TypeProto* type);

/// A weight: its elements, type and bytes as stored (bytes -1: no weight).
struct weight_tensor {
  std::int64_t elements = 0;
  std::int64_t bytes = -1;
  int onnx_type = 0;
  bool constant = false; ///< a Constant node's value, not an initializer
  /// False for a tensor of strings (an initializer's) or of an undefined or
  /// unknown element type: no size per element, so 0 bytes -- a guess.
  bool sized = true;
};

/// Every weight a model holds, the one definition all parameter figures
/// use (reports, costs by parameters, memory caps, memory): per top-level
/// tensor, the initializer or Constant value it is, which every node
/// reading it holds; per node, what it holds itself -- the initializers and
/// Constant values of its subgraphs, recursively, and a Constant's value no
/// node reads.
struct model_weights {
  std::vector<weight_tensor> tensors;
  std::vector<std::vector<weight_tensor>> held;

  /// Per tensor its bytes, -1 for tensors that are no weight.
  [[nodiscard]] std::vector<std::int64_t> tensor_bytes() const;
  /// The bytes node v holds itself.
  [[nodiscard]] std::int64_t held_bytes(std::size_t v) const;
  /// How many of the tensors above, and of those the nodes hold, are not
  /// `sized` (counted as 0 bytes).
  [[nodiscard]] std::size_t unsized() const;
};

/// The views of `model`'s nodes where shapes, costs and weights can be
/// found on them: its nodes are views with the initializers parsed into the
/// skeleton (node_reading::views_with_initializers), no node holds a
/// subgraph, no size is given (sizes propagate data: InferShapes on the
/// whole model) and node_inference handles the skeleton. nullptr
/// otherwise: proto() then.
const wire::node_views* inferable_views(const loaded_model& model, const input_sizes* sizes);

model_weights weights_of(const ::onnx::GraphProto& g, const node_graph& nodes);
/// The same of a model whose nodes are views, and whose skeleton's graph
/// `g` (without nodes) holds the initializers.
model_weights weights_of(const wire::node_views& views, const ::onnx::GraphProto& g,
                         const node_graph& nodes);

} // namespace shardpoint::onnx::shapes

namespace shardpoint::onnx {
/// tensors_made_from_shapes (memory.hpp) of a model whose nodes are views,
/// and whose skeleton's graph `graph` (without nodes) holds the
/// initializers.
shape_made_tensors tensors_made_from_shapes(const wire::node_views& views,
                                            const ::onnx::GraphProto& graph);
} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SHAPES_HPP
