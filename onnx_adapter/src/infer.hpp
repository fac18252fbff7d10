// ONNX shape inference node by node, with tensors by id (internal to the
// adapter, issue #30).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// WHY
//
//   libonnx's InferShapes keeps every tensor's type, data and undefined
//   output in std::unordered_map<std::string, ...> tables, and builds a map
//   of each node's attributes by name: on a 10^6-node decoder those tables,
//   not the operators' inference functions, were most of the 7 s that shape
//   inference added to `shard`'s table report (bench/README.md). This pass
//   calls the same inference functions through the same libonnx helpers
//   (mergeShapesAndTypes, MaterializeSymbolicShape, InferShapeForFunctionNode,
//   the symbol table), with every name looked up once in a flat table.
//
// THE PROCEDURE (libonnx 1.12's ShapeInferenceImplBase on a model, step for
// step; the test holds its result to InferShapes' on every shared model)
//
//   1. Every symbolic dimension the graph declares is taken (new ones are
//      unk__0, unk__1, ... past them).
//   2. value_info, then inputs, then outputs register their types, a later
//      one replacing an earlier; one without a type is "undefined": the
//      first type inferred for its name is copied into it.
//   3. Initializers' data is readable by inference functions; an initializer
//      already registered is checked against that type (a mismatch ends
//      inference), and with ir_version >= 4 one not registered registers its
//      own type. Constant nodes' tensor values (`value`) are data too.
//   4. Each node in order: its schema by domain and opset (a domain without
//      an opset import ends inference); its inference function, or its
//      function body's, given the inputs' registered types and data; an
//      inference error skips the node. Each named output's type gets fresh
//      symbols for its anonymous dimensions and is merged into the type
//      registered for the name, or registers a new one (a mismatch ends
//      inference).
//   5. The result, per name, is what inferred_shapes reads from a model
//      InferShapes has run on: the last of the inputs, value_info (the
//      inferred ones after the declared), outputs; every initializer's own
//      type over all of them.
//
//   Whatever ends inference keeps what was inferred before it, as a model
//   InferShapes stopped on keeps its partial value_info. The model itself
//   is not touched.
//
// MEMO (step 4): an inference function is a function of what its context
//   shows it -- the node's attributes, how many inputs and outputs it has,
//   the inputs' types, which inputs hold data and the data it asks for --
//   and of nothing else (no node name, no symbol table, no data
//   propagation). A node asking what an earlier node asked gets that
//   node's answer without the function running: its key is the schema,
//   the counts, the attributes (name, type and values; a tensor, graph or
//   type attribute, or a sparse input, is not keyed: such a node is always
//   inferred), each input's type by its bytes and whether it holds data,
//   then the data of every input the function asked for at this key
//   (recorded as it runs: a function that reads input 1's data only for
//   some data of input 0 adds input 1 when it first does, and earlier
//   answers, keyed without it, are no longer found). An answer is kept
//   only when no output has a dimension MaterializeSymbolicShape would
//   name (each would get a fresh symbol); an inference error is an answer
//   too. A name no type was registered for takes the answer's type itself,
//   shared with every name it answered; merging anything into it later
//   (a second producer) first gives the name its own copy. A model whose
//   layers repeat (the 10^6-node decoder asks 19 questions) runs each
//   inference function once a layer shape, not once a node. The memo keeps
//   at most 64 MiB of keys and answers; past it, new questions are
//   inferred node by node, as without it.
//
// NOT HANDLED: subgraphs (If, Loop, Scan), model-local functions, sparse
// initializers, data propagation. make() then returns nothing and the
// caller runs InferShapes.
//
// COST: O(nodes + names) probes of a flat table (name_ids), every node's
// names interned once before step 4 (which the types by node position then
// read without a lookup); per node a key of its attributes and input type
// ids (each type's bytes hashed once, when first read) and a hash-table
// probe; the operators' inference functions once per distinct key; and a
// schema lookup per op type of the default domain (per node for others).
// An inferred tensor type merged into no earlier type is kept as inferred,
// not copied (the merge would copy it whole). Memory: one TypeProto per
// distinct answer, per declared or initializer type and per name merged
// into, in an arena; 12 bytes per node input and output.
#ifndef SHARDPOINT_ONNX_SRC_INFER_HPP
#define SHARDPOINT_ONNX_SRC_INFER_HPP

#include <memory>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

namespace shardpoint::onnx::wire {
struct node_views;
} // namespace shardpoint::onnx::wire

namespace shardpoint::onnx::shapes {

/// The type an initializer has: its element type and dimensions.
void initializer_type(const ::onnx::TensorProto& t, ::onnx::TypeProto& type);

class node_inference {
public:
  /// The inferred types of `model`'s top-level tensors, or nothing when the
  /// model is not one this pass handles (see above). `model` must outlive
  /// the result.
  static std::unique_ptr<node_inference> make(const ::onnx::ModelProto& model);
  /// Whether `model` is one this pass handles: make() returns a result.
  static bool handles(const ::onnx::ModelProto& model);
  /// make() of a model handles() said this pass handles.
  static std::unique_ptr<node_inference> make_handled(const ::onnx::ModelProto& model);
  /// The same of a model read with node_reading::views_with_initializers:
  /// its skeleton (loaded_model::proto_without_nodes(): everything but the
  /// nodes, the initializers parsed), which handles() said this pass
  /// handles, and its nodes as views. The views' attribute bytes are the
  /// memo's key for their attributes; a node is parsed only where its
  /// inference function runs. Both must outlive the result.
  static std::unique_ptr<node_inference> make_handled(const ::onnx::ModelProto& skeleton,
                                                      const wire::node_views& nodes);

  node_inference(const node_inference&) = delete;
  node_inference& operator=(const node_inference&) = delete;
  ~node_inference();

  /// The type of a top-level tensor, or nullptr (as inferred_shapes::find).
  [[nodiscard]] const ::onnx::TypeProto* find(std::string_view name) const;
  /// find() of the name of node v's input i, output j, without looking it
  /// up (every node's names are interned, by node, before inference).
  [[nodiscard]] const ::onnx::TypeProto* input_type(std::size_t v, std::size_t i) const;
  [[nodiscard]] const ::onnx::TypeProto* output_type(std::size_t v, std::size_t j) const;

  struct state; ///< (internal)

private:
  explicit node_inference(std::unique_ptr<state> s);
  static std::unique_ptr<node_inference> finish(const ::onnx::ModelProto& model,
                                                std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

} // namespace shardpoint::onnx::shapes

#endif // SHARDPOINT_ONNX_SRC_INFER_HPP
