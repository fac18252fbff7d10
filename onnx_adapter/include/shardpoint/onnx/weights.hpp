// shardpoint/onnx/weights.hpp -- tensor parallelism inside each pipeline
// stage of an ONNX model, in MindSpore's terms: which weights are split and
// how, the strategy files, the per-rank weights, and back.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// WHICH WEIGHTS ARE SPLIT (the seed's sharded_state_dict)
//
//   From a layout file (io/layout_file.hpp), or derived from the graph:
//   Megatron-style pairs. A MatMul/Gemm with a weight whose result flows,
//   through only bias Adds, casts and dropouts, into an Add of two
//   activations (the residual stream) is row-parallel; the MatMul/Gemm
//   weights found walking back from its input through the block's own
//   elementwise and attention ops (Softmax, activation-by-activation MatMul,
//   Transpose, Reshape, scaling, activations) -- the Q, K, V projections, the
//   MLP up-projection -- are column-parallel. A Gather over an initializer is
//   vocab-parallel. A bias (the initializer an Add applies to a column or row
//   MatMul's output, or Gemm's C) follows its layer. Everything else is
//   replicated.
//
//   Shard tuples, T the tensor-parallel degree, exactly as the seed:
//   column (T, 1) when the weight is stored transposed (Gemm transB = 1),
//   else (1, T), its bias (T,); row (1, T) transposed, else (T, 1), its bias
//   (1,); vocab (T, 1); replicated all ones.
//
// STAGES AND RANKS
//
//   A weight belongs to the stage of the nodes that read it (reads from
//   subgraphs included); read from two stages it is an error, or with
//   `replicate_shared` it goes to both. Stage s holds ranks s * D .. s * D +
//   D - 1, D the devices a stage (a multiple of T: the rest is data-parallel
//   replication, MindSpore's repeat_calc_num).
#ifndef SHARDPOINT_ONNX_WEIGHTS_HPP
#define SHARDPOINT_ONNX_WEIGHTS_HPP

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/io/outputs.hpp>

#include "graph.hpp"
#include "weight_files.hpp"

namespace shardpoint::onnx {

struct weight_options {
  int tensor_parallel = 1;              ///< T
  std::optional<int> devices_per_stage; ///< D, T when not given
  bool replicate_shared = false;        ///< a weight read by two stages goes to both
  /// Whether every split dimension must be a multiple of its parts (of T):
  /// false only to ask which dimensions T would split (tensor_parallel_
  /// extents), never for a layout that is written or planned as it is.
  bool divisible = true;
};

/// An initializer, the stages reading it, and how it is split.
struct weight_decision {
  std::string name;
  std::vector<std::int64_t> shape;
  int onnx_type = 0;
  std::vector<int> stages;
  io::layout_choice choice;
  std::vector<std::int64_t> shard; ///< the choice made concrete with T
};

/// Derived (Megatron pairs, see the top of this header) for every
/// initializer the nodes read.
std::vector<io::layout_choice> derive_layout(const ::onnx::GraphProto& graph,
                                             const node_graph& nodes);

/// The decision for every initializer the nodes read: `file` when given
/// (every name must be an initializer; weights it does not name are
/// replicated), else derived. Stages from `stages` (a model without them is
/// one stage). Throws bad_input_error for an unknown name or a weight read by
/// two stages (without replicate_shared), layout_error for a kind that does
/// not fit the weight's rank, bad_parameter_error for T < 1 or D not a
/// multiple of T.
std::vector<weight_decision> decide(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                    const sharding_result& stages, const weight_options& options,
                                    const std::vector<io::layout_choice>* file);
/// The same of a loaded model: on its views, parsing no node, where it was
/// read with node_reading::views_with_initializers and its nodes are views;
/// on proto() otherwise. The same decisions either way.
std::vector<weight_decision> decide(const loaded_model& model, const node_graph& nodes,
                                    const sharding_result& stages, const weight_options& options,
                                    const std::vector<io::layout_choice>* file);

/// A length every tensor-parallel degree must divide, and where it is.
struct split_extent {
  std::string weight;
  std::size_t dimension = 0;
  std::int64_t length = 0;
};

/// The dimensions `decisions` split (decide()'s with T = 2 and `divisible`
/// false: those any degree splits), each length once, at the first weight
/// splitting one so long: a degree that does not divide one of them splits
/// no layout of these weights (plan's search refuses it, as `memory` and
/// `weights` do).
std::vector<split_extent> tensor_parallel_extents(const std::vector<weight_decision>& decisions);

/// One strategy per stage, the layouts built for D devices (layout_error,
/// MindSpore's wording, for what a stage cannot hold).
std::vector<weights::stage_strategy> strategies(const std::vector<weight_decision>& decisions,
                                                const weight_options& options, int stages);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_WEIGHTS_HPP
