// shardpoint/onnx/memory.hpp -- what each pipeline stage of an ONNX model
// holds, for the memory planner (<shardpoint/memory_plan.hpp>): its weights
// with their tensor-parallel shard tuples, and its activations.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// WEIGHTS are every weight the stage's nodes read or hold (costs.hpp,
// node_weights::parameter_bytes: initializers, Constant values, subgraphs'
// weights; a weight read by two stages counts in both). Initializers carry
// the shard tuple `decide()` gives them (weights.hpp: a layout file or
// Megatron pairs); the others are whole on every tensor-parallel rank.
// Floating-point weights are trainable; integer and boolean ones are
// constants.
//
// ACTIVATIONS of one micro-batch are the bytes of the top-level nodes'
// outputs, from ONNX shape inference with the batch dimension -- the first
// dimension of every graph input -- set to the micro-batch size where it is
// symbolic. When every input's batch is fixed at b and the micro-batch size
// B differs, the sizes at b are scaled by B / b (rounded up) and a note says
// so. Outputs of unknown shape count 0; remaining symbolic dimensions count
// 1 (both guesses, in `guesses` when the caller takes them, else a note).
// What runs inside If/Loop/Scan bodies is no top-level output: not counted.
#ifndef SHARDPOINT_ONNX_MEMORY_HPP
#define SHARDPOINT_ONNX_MEMORY_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <shardpoint/memory_plan.hpp>
#include <shardpoint/sharding_result.hpp>

#include "costs.hpp"
#include "graph.hpp"
#include "weights.hpp"

namespace shardpoint::onnx {

struct model_memory {
  std::vector<stage_memory_input> stages;
  std::vector<std::string> notes; ///< how the activations were measured, when it matters
};

/// The bytes of every top-level node's outputs for one micro-batch of
/// `micro_batch_size` samples, and notes (see the top of this header); a
/// Constant's output is a weight and counts 0 here. `guessed`, when given,
/// takes the outputs whose size rests on symbolic dimensions (bytes_nodes,
/// symbols), those of no shape (unsized_outputs; without `guessed`, a
/// note) and the If/Loop/Scan nodes, whose bodies' tensors are not counted
/// (body_nodes). `model` is returned exactly as it was.
std::vector<std::int64_t> activation_bytes(::onnx::ModelProto& model, const node_graph& nodes,
                                           std::int64_t micro_batch_size,
                                           std::vector<std::string>& notes,
                                           const input_sizes* sizes = nullptr,
                                           guesses* guessed = nullptr);
/// The same of a loaded model: on its views, parsing no node, where
/// measure_nodes(loaded_model&, ...) would (costs.hpp); on proto()
/// otherwise. The same result either way.
std::vector<std::int64_t> activation_bytes(loaded_model& model, const node_graph& nodes,
                                           std::int64_t micro_batch_size,
                                           std::vector<std::string>& notes,
                                           const input_sizes* sizes = nullptr,
                                           guesses* guessed = nullptr);

/// A batch of more than one sample that the model's measures count: its
/// size, and where, in words ("input 'x' has its batch sized to 4
/// (dimension 'N')", "input 'x' has a fixed batch of 8 (dimension 0)").
struct held_batch {
  std::int64_t size = 1;
  std::string where;
};

/// The symbolic dimensions that are the batch of `graph`'s inputs by their
/// name or by `batch_dim` (as activation_bytes finds them), in order; none
/// when the batch is only guessed (the first dimension of an input).
/// `sizes`, when given, lets `batch_dim` name an axis of an input that
/// declares no shape and is sized there.
std::vector<std::string> named_batch_symbols(const ::onnx::GraphProto& graph,
                                             const std::string& batch_dim,
                                             const input_sizes* sizes = nullptr);

/// The batch the measures of `model` with `sizes` (costs, shapes) count,
/// found as activation_bytes finds it, when it is held at a number other
/// than 1; nothing when it is 1, symbolic (counted as 1) or not found.
/// `model` is returned exactly as it was.
std::optional<held_batch> measured_batch(::onnx::ModelProto& model,
                                         const input_sizes* sizes = nullptr);

/// The weights as the planner's parameter uses, by node: one tensor per
/// decision (its elements, the product of its shard, its stored element
/// size, trainable when floating point), then the weights no decision
/// covers, whole on every tensor-parallel rank: Constant values (used by the
/// nodes reading them) and what a node holds itself (its subgraphs'
/// initializers and Constants; costs.hpp, node_weights::parameter_bytes).
parameter_uses parameter_uses_of(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                 const std::vector<weight_decision>& decisions);
/// The same of a loaded model: on its views where decide(loaded_model&)
/// runs on them (weights.hpp), on proto() otherwise.
parameter_uses parameter_uses_of(const loaded_model& model, const node_graph& nodes,
                                 const std::vector<weight_decision>& decisions);

/// Tensors made from constants alone that no weight count holds
/// (shape_made_tensors, costs.hpp). Their outputs count as activations
/// (above), not as weights.
shape_made_tensors tensors_made_from_shapes(const ::onnx::GraphProto& graph);

/// Both, per stage of `stages` (one stage when it has none).
model_memory measure_memory(::onnx::ModelProto& model, const node_graph& nodes,
                            const sharding_result& stages,
                            const std::vector<weight_decision>& decisions,
                            std::int64_t micro_batch_size);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_MEMORY_HPP
