// shardpoint/onnx/adapter.hpp -- manual sharding of ONNX models.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// The ONNX side of shardpoint: read a model, look at its top-level nodes as a
// Boost.Graph (the core algorithm runs on it unchanged), read a PopRT-style
// sharding config, write the `__ipu_number` / `__pipeline_stage` attributes,
// and save the result atomically.
#ifndef SHARDPOINT_ONNX_ADAPTER_HPP
#define SHARDPOINT_ONNX_ADAPTER_HPP

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <shardpoint/shardpoint.hpp>

namespace shardpoint::onnx {

/// Bad input: a file, a model or a config that cannot be used. The command
/// line maps it to exit code 2.
class input_error : public shardpoint::error {
  using shardpoint::error::error;
};

inline constexpr const char* ipu_attribute = "__ipu_number";
inline constexpr const char* stage_attribute = "__pipeline_stage";

// ---------------------------------------------------------------------------
// Models

/// Reads and parses a model. Never opens external data files: tensors stored
/// outside the model keep their references untouched. Throws input_error.
::onnx::ModelProto load_model(const std::filesystem::path& path);

/// A model read by read_model(): the ModelProto and the protobuf arena it
/// lives in. Parsing and later edits (attributes, names) allocate from the
/// arena, which takes its memory in large pre-faulted blocks and frees it all
/// at once; on a model of 10^5 nodes that is about twice as fast as
/// load_model(). Move-only; proto() must not be used after a move.
class loaded_model {
public:
  loaded_model(loaded_model&& other) noexcept;
  loaded_model& operator=(loaded_model&& other) noexcept;
  ~loaded_model();

  ::onnx::ModelProto& proto() noexcept { return *proto_; }
  const ::onnx::ModelProto& proto() const noexcept { return *proto_; }

private:
  loaded_model();
  friend loaded_model read_model(const std::filesystem::path& path);

  std::unique_ptr<google::protobuf::Arena> arena_;
  ::onnx::ModelProto* proto_ = nullptr;
};

/// load_model() into an arena: the same checks and errors, faster.
loaded_model read_model(const std::filesystem::path& path);

/// Serialises `model` to `path` atomically: a temporary file in the same
/// folder, flushed, then renamed over `path`. On any failure `path` is left as
/// it was and no temporary file remains. Throws input_error.
void save_model(const ::onnx::ModelProto& model, const std::filesystem::path& path);

/// Writes `bytes` to `path` atomically, as save_model does. Throws input_error.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

// ---------------------------------------------------------------------------
// The graph of top-level nodes

using csr_graph = boost::compressed_sparse_row_graph<boost::directedS>;

/// Top-level nodes in file order as vertices; an edge u -> v when v reads a
/// tensor u writes, directly or from inside one of v's subgraphs (If, Loop,
/// Scan bodies, nested) through the outer scope. Graph inputs and initializers
/// are not vertices. Owns copies of the tensor names it needs: it stays valid
/// when the model is changed or destroyed.
struct node_graph {
  static constexpr std::size_t no_producer = static_cast<std::size_t>(-1);

  csr_graph graph;
  /// Every top-level tensor some node reads or writes, each once.
  std::vector<std::string> tensors;
  /// Per tensor: the node writing it, or no_producer (graph inputs,
  /// initializers, tensors nobody writes).
  std::vector<std::size_t> producer;
  /// The tensors node v reads (inputs and outer-scope reads of its
  /// subgraphs), each once, as indices into `tensors`, in increasing order:
  /// read_ids[read_offsets[v] .. read_offsets[v + 1]).
  std::vector<std::size_t> read_offsets;
  std::vector<std::uint32_t> read_ids;

  std::span<const std::uint32_t> reads(std::size_t v) const {
    return {read_ids.data() + read_offsets[v], read_ids.data() + read_offsets[v + 1]};
  }
  /// The names of the tensors node v reads, sorted.
  std::vector<std::string> read_names(std::size_t v) const;
};

/// Throws input_error when two nodes write the same tensor.
node_graph build_graph(const ::onnx::GraphProto& graph);

/// How nodes without a (unique) name are handled.
enum class naming {
  /// Empty names get `<op_type>_<node index>` (with `_<k>` appended, k = 1,
  /// 2, ..., while that is taken), like PopRT's convert phase; a non-empty
  /// name on two nodes is an error.
  rename_empty,
  /// PopRT's --only_manual_sharding: any empty or duplicate name is an error.
  strict
};

/// Gives unnamed nodes names (rename_empty) or checks names (strict).
/// Returns the indices of the renamed nodes. Throws input_error listing the
/// offending nodes.
std::vector<std::size_t> assign_names(::onnx::GraphProto& graph, naming mode);

// ---------------------------------------------------------------------------
// Configs

/// One sharding point as a config names it.
struct config_entry {
  std::string node;
  std::optional<int> device;
  std::optional<int> stage;
  std::string where; ///< e.g. "shard.yaml:5:3", for messages
};

/// Reads a sharding config: the seed's shard.yaml (a YAML list of
/// {node, device, stage}) or the Python API's mapping
/// {sharding_info: {node: device}, pipelining_info: {node: stage}} in YAML or,
/// for a `.json` file, JSON. Throws input_error with file, line and column.
std::vector<config_entry> read_config(const std::filesystem::path& path);

/// Parses one `--shard NODE=DEVICE[:STAGE]` flag. Throws input_error.
config_entry parse_shard_flag(const std::string& text);

/// Resolves entries to sharding points on `graph`'s nodes (by name). Throws
/// input_error for an unknown name (suggesting the closest ones), a name
/// on two nodes, or a node listed twice.
std::vector<sharding_point<std::size_t>> resolve(const ::onnx::GraphProto& graph,
                                                 const std::vector<config_entry>& entries);

// ---------------------------------------------------------------------------
// Sharding

/// Runs the core algorithm on the model's node graph; messages name nodes.
/// Throws input_error for a cyclic graph.
sharding_result shard(const ::onnx::GraphProto& graph, const node_graph& nodes,
                      const std::vector<sharding_point<std::size_t>>& points);

/// Writes `__ipu_number` / `__pipeline_stage` on every top-level node,
/// replacing any already there. An attribute the result leaves unset is
/// removed from every node, so that no stale value survives.
void annotate(::onnx::GraphProto& graph, const sharding_result& result);

/// The sharding already stored in a model's attributes. Throws input_error for
/// an attribute that is not a non-negative INT.
sharding_result read_annotations(const ::onnx::GraphProto& graph);

/// Runs the core's validate() with node names in the messages.
std::vector<diagnostic> validate(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                 const sharding_result& result, const pipeline_options& options);

// ---------------------------------------------------------------------------
// Reports

/// A tensor written in one stage and read in another (or, when no vertex has a
/// stage, written on one device and read on another).
struct crossing_tensor {
  std::string name;
  int from = 0;
  int to = 0;
  std::optional<std::int64_t> bytes; ///< when the shape is known
  /// Symbolic dimensions (e.g. "N") the size is per, counted as 1 in `bytes`.
  std::string per;
};

struct group_report {
  int device = -1; ///< -1: unset
  int stage = -1;
  std::size_t nodes = 0;
  std::int64_t parameter_bytes = 0;
};

struct report {
  std::vector<group_report> groups; ///< per (device, stage), sorted
  std::string boundary = "stage";   ///< what crossings cross: "stage" or "device"
  std::vector<crossing_tensor> crossings;
  std::vector<diagnostic> diagnostics;
};

/// Per device and stage: node counts and parameter bytes (the initializers a
/// group reads; one read by two groups counts in both); the tensors crossing
/// stage boundaries, with byte sizes where ONNX shape inference knows them.
/// Shape inference runs on `model` itself, which is returned exactly as it was
/// (also when an exception leaves).
report make_report(::onnx::ModelProto& model, const node_graph& nodes,
                   const sharding_result& result, std::vector<diagnostic> diagnostics);

std::string to_table(const report& r);
std::string to_json(const report& r);

// ---------------------------------------------------------------------------
// Costs, for the pipeline emulator

/// How `estimate_costs` prices a node.
enum class cost_model {
  unit, ///< every node costs 1
  /// Estimated floating-point operations / 10^6, rounded up, at least 1, from
  /// the op type and the shapes ONNX shape inference finds (symbolic
  /// dimensions count as 1): MatMul and Gemm 2 x (output elements) x K;
  /// Conv and ConvTranspose 2 x (output elements) x (input channels / group)
  /// x kernel area; any other op its output elements. A node whose output
  /// shape is unknown costs 1.
  flops
};

/// The cost of every top-level node, in cost units. Like make_report(), runs
/// shape inference on `model` and returns it exactly as it was.
std::vector<std::int64_t> estimate_costs(::onnx::ModelProto& model, cost_model how);

// ---------------------------------------------------------------------------
// Synthetic models

/// ResNet-50 v1 with the node names, op types and topology of the model zoo's
/// resnet50-v1-7.onnx (175 nodes); weights are a deterministic pattern.
::onnx::ModelProto synth_resnet50();

/// A transformer-decoder-like model of `layers` layers, 29 nodes each
/// (decomposed LayerNorm, single-head attention, MLP, two residual adds),
/// with hidden size `hidden` and sequence length `sequence`; weights are a
/// deterministic pattern. Node names are `layer<L>/<op>`.
::onnx::ModelProto synth_decoder(int layers, int hidden = 8, int sequence = 16);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_ADAPTER_HPP
