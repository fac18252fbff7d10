// shardpoint/onnx/costs.hpp -- what each node of a model costs: compute
// (for the emulator and the balanced partitioner), the parameter bytes it
// reads, the bytes of its output.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_COSTS_HPP
#define SHARDPOINT_ONNX_COSTS_HPP

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include <shardpoint/memory_items.hpp>

#include "graph.hpp"

namespace shardpoint::onnx {

/// How `estimate_costs` prices a node.
enum class cost_model {
  unit, ///< every node costs 1
  /// Estimated floating-point operations / 10^6, rounded up, at least 1, from
  /// the op type and the shapes ONNX shape inference finds (symbolic
  /// dimensions count as 1): MatMul and Gemm 2 x (output elements) x K;
  /// Conv 2 x (output elements) x (input channels / group) x kernel area;
  /// ConvTranspose 2 x (input elements) x (output channels / group) x kernel
  /// area; any other op its output elements. A node whose output shape (or,
  /// for ConvTranspose, input shape) is unknown costs 1.
  flops,
  /// The weight bytes the node reads or holds (initializers, Constant
  /// values, its subgraphs' weights; node_weights::parameter_bytes), at
  /// least 1: what balancing by parameters weighs.
  params
};

/// The cost of every top-level node, in cost units. Like make_report(), runs
/// shape inference on `model` and returns it exactly as it was.
struct guesses;

/// Sizes a user gives a model's free input dimensions (`--input-shape`,
/// `--dim`): shape inference then runs with the inputs so sized, and with
/// data propagation, so that Shape -> Gather -> Concat -> Reshape chains
/// resolve. The model itself is never changed.
struct input_sizes {
  /// An input's name (empty: the model's only input) and every dimension.
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes;
  /// A symbolic dimension's name and its size, wherever the inputs use it.
  std::vector<std::pair<std::string, std::int64_t>> dims;
  /// Where the batch is, for the activations (memory.hpp): a symbolic
  /// dimension's name, or INPUT:AXIS; empty: found by name.
  std::string batch_dim;

  [[nodiscard]] bool empty() const { return shapes.empty() && dims.empty(); }
};

/// Checks `sizes` against the model's inputs as shape inference takes them:
/// bad_parameter_error for a size that names no input or symbol, has
/// another rank, or contradicts a dimension the model fixes. For a command
/// that takes the sizes and skips what they size (`--report none`), so
/// that a wrong size is refused there too. Parses no node.
void check_input_sizes(const loaded_model& model, const input_sizes& sizes);

/// `guessed`, when given, takes the nodes whose FLOPs are a guess.
std::vector<std::int64_t> estimate_costs(::onnx::ModelProto& model, cost_model how,
                                         guesses* guessed = nullptr,
                                         const input_sizes* sizes = nullptr);
/// The same of a loaded model: on its views, parsing no node, where
/// measure_nodes(loaded_model&, ...) would; on proto() otherwise.
std::vector<std::int64_t> estimate_costs(loaded_model& model, cost_model how,
                                         guesses* guessed = nullptr,
                                         const input_sizes* sizes = nullptr);

/// What the figures of node_weights rest on that is not measured: unknown
/// or symbolic shapes.
struct guesses {
  /// Nodes whose FLOPs rest on a shape inference could not find, or on a
  /// symbolic dimension (cost_model::flops only).
  std::size_t cost_nodes = 0;
  /// Nodes with a subgraph (If, Loop, Scan) whose FLOPs leave out their
  /// bodies: priced by their output as any other op (cost_model::flops);
  /// for activation_bytes, whose bodies' tensors are not counted.
  std::size_t body_nodes = 0;
  /// Nodes with an output other nodes read whose size is unknown or has a
  /// symbolic dimension.
  std::size_t bytes_nodes = 0;
  /// The symbolic dimensions those figures met (each counted as 1).
  std::set<std::string> symbols;
  /// How the activations' batch was found when that is a guess, a sentence
  /// (activation_bytes); empty otherwise.
  std::string batch;
  /// The symbolic input dimensions activation_bytes set to the micro-batch
  /// size: sized, so no longer free.
  std::set<std::string> batch_symbols;
  /// Outputs other nodes read that shape inference gives no shape at all:
  /// counted as 0 bytes (activation_bytes).
  std::size_t unsized_outputs = 0;

  [[nodiscard]] bool any() const {
    return cost_nodes > 0 || body_nodes > 0 || bytes_nodes > 0 || !batch.empty() ||
           unsized_outputs > 0;
  }
};

/// Tensors made from constants alone that no weight count holds:
/// ConstantOfShape nodes of the top-level graph whose shape is an
/// initializer -- what a model whose weights were replaced by their shapes
/// holds in their place (memory.hpp's tensors_made_from_shapes). `unsized`:
/// those whose shape cannot be read here (an external, non-INT64 or
/// negative one).
struct shape_made_tensors {
  std::size_t nodes = 0;
  std::int64_t bytes = 0;
  std::size_t unsized = 0;
};

/// What the balanced partitioner needs of a model, per top-level node.
struct node_weights {
  std::vector<std::int64_t> cost;
  /// The bytes of the weights the node reads or holds -- every weight
  /// counted: initializers (external data by its length), Constant values
  /// (read as initializers are; a Constant nobody reads holds its own), and
  /// the initializers and Constants of its subgraphs, recursively. A weight
  /// read by several nodes counts in each (so a stage's sum is never below
  /// what the report counts for it).
  std::vector<std::int64_t> parameter_bytes;
  /// The bytes of the node's outputs read by other nodes (0 where the shape
  /// is unknown; symbolic dimensions count as 1).
  std::vector<std::int64_t> output_bytes;
  /// Per weight tensor (index into nodes.tensors: an initializer or a
  /// Constant's value) its bytes, -1 for tensors that are no weight: for the
  /// exact per-stage figure, which holds each once.
  std::vector<std::int64_t> initializer_bytes;
  /// Per node the bytes it holds itself (its subgraphs' weights, a Constant
  /// value nobody reads).
  std::vector<std::int64_t> held_bytes;
  /// What of the above is a guess.
  guesses guessed;
  /// The weight tensors counted as 0 bytes (unsized_weights()), and the
  /// tensors made from shapes alone, counted as none (both said as guesses
  /// wherever weights are figures).
  std::size_t unsized_weights = 0;
  shape_made_tensors made_from_shapes;
};

/// Costs as estimate_costs, parameter bytes and output bytes in one shape
/// inference. `model` is returned exactly as it was.
node_weights measure_nodes(::onnx::ModelProto& model, const node_graph& nodes, cost_model how,
                           const input_sizes* sizes = nullptr);
/// The same where the node graph is not built yet: `nodes()` builds it (or
/// returns it; called again, it must return the same one), on another core
/// beside shape inference where inference leaves the model untouched
/// (shapes::inferred_shapes::leaves_untouched), before it otherwise. Its
/// error comes first, as when the graph is built before: also before an
/// error in `sizes`.
node_weights measure_nodes(::onnx::ModelProto& model,
                           const std::function<const node_graph&()>& nodes, cost_model how,
                           const input_sizes* sizes = nullptr);
/// The same of a loaded model: on its views, parsing no node, where it was
/// read with node_reading::views_with_initializers and its nodes are views,
/// no size is given and shape inference runs node by node
/// (shapes::node_inference::handles); on proto() otherwise. The same
/// result either way.
node_weights measure_nodes(loaded_model& model, const std::function<const node_graph&()>& nodes,
                           cost_model how, const input_sizes* sizes = nullptr);

/// How many weight tensors hold strings or an undefined or unknown element
/// type: no size per element, so every figure of weights (node_weights,
/// the memory planner's) counts them as 0 bytes -- a guess to say.
std::size_t unsized_weights(const ::onnx::GraphProto& g, const node_graph& nodes);

/// The weights as memory items (balanced_shard, evaluate): a stage holds
/// each weight tensor its nodes read once, as the report counts it, and
/// what each node holds itself.
memory_items parameter_items(const node_graph& nodes, const node_weights& weights);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_COSTS_HPP
