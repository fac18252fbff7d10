// shardpoint/onnx/graph.hpp -- an ONNX model's top-level nodes as a
// Boost.Graph, node names, and manual sharding on it: points from configs,
// the core algorithm, the `__ipu_number` / `__pipeline_stage` attributes,
// validation.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_GRAPH_HPP
#define SHARDPOINT_ONNX_GRAPH_HPP

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <onnx/onnx_pb.h>

#include <shardpoint/io/config.hpp>
#include <shardpoint/shardpoint.hpp>

#include "model.hpp"

namespace shardpoint::onnx {

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
/// The same for a loaded model; on one whose nodes are views
/// (node_reading::views), from the views, parsing nothing. So do the other
/// functions below that take a loaded_model, where the views suffice.
node_graph build_graph(const loaded_model& model);

/// Throws input_error naming a node on a cycle when the nodes form one: no
/// sharding of such a graph is valid (manual_shard and validate refuse it
/// too), and no stage of it runs. O(V + E) on nodes in topological order.
void check_acyclic(const loaded_model& model, const node_graph& nodes);

/// How nodes without a (unique) name are handled.
enum class naming {
  /// Empty names get `<op_type>_<node index>` (with `_<k>` appended, k = 1,
  /// 2, ..., while that is taken), like PopRT's convert phase; a non-empty
  /// name on two nodes is an error.
  rename_empty,
  /// PopRT's --only_manual_sharding: any empty or duplicate name is an error.
  strict
};

/// Whether a node holds subgraphs (If's branches, Loop's and Scan's
/// bodies): what it runs inside is in no top-level figure.
bool has_subgraphs(const ::onnx::NodeProto& node);

/// Gives unnamed nodes names (rename_empty) or checks names (strict).
/// Returns the indices of the renamed nodes. Throws input_error listing the
/// offending nodes.
std::vector<std::size_t> assign_names(::onnx::GraphProto& graph, naming mode);
/// The same on a loaded model; with views, the nodes are parsed only when a
/// node needs a name or two nodes share one (the error is the same).
std::vector<std::size_t> assign_names(loaded_model& model, naming mode);

/// One sharding point as a config names it (shardpoint::config::entry).
using config_entry = config::entry;

/// config::read_file: shard.yaml, or the sharding_info / pipelining_info
/// mapping in YAML or JSON.
std::vector<config_entry> read_config(const std::filesystem::path& path);

/// config::parse_shard_flag: one `--shard NODE=DEVICE[:STAGE]`.
config_entry parse_shard_flag(const std::string& text);

/// Resolves entries to sharding points on `graph`'s nodes, by name
/// (config::resolve). Throws input_error for an unknown name (suggesting
/// the closest ones), a name on two nodes, or a node listed twice.
std::vector<sharding_point<std::size_t>> resolve(const ::onnx::GraphProto& graph,
                                                 const std::vector<config_entry>& entries);
std::vector<sharding_point<std::size_t>> resolve(const loaded_model& model,
                                                 const std::vector<config_entry>& entries);

/// Runs the core algorithm on the model's node graph; messages name nodes.
/// Throws input_error for a cyclic graph.
sharding_result shard(const ::onnx::GraphProto& graph, const node_graph& nodes,
                      const std::vector<sharding_point<std::size_t>>& points);
sharding_result shard(const loaded_model& model, const node_graph& nodes,
                      const std::vector<sharding_point<std::size_t>>& points);

/// Writes `__ipu_number` / `__pipeline_stage` on every top-level node,
/// replacing any already there. An attribute the result leaves unset is
/// removed from every node, so that no stale value survives.
/// For a model read by read_graph() and the like, annotate(loaded_model&,
/// result) (model.hpp) does the same as it is written, without the memory.
void annotate(::onnx::GraphProto& graph, const sharding_result& result);
/// The same on one node: its sharding attributes replaced by `device` and
/// `stage` (removed where nothing).
void annotate(::onnx::NodeProto& node, std::optional<int> device, std::optional<int> stage);

/// Removes both sharding attributes from every node, subgraphs included.
/// Returns how many attributes were removed.
std::size_t strip_annotations(::onnx::GraphProto& graph);

/// The sharding already stored in a model's attributes. Throws input_error for
/// an attribute that is not a non-negative INT.
sharding_result read_annotations(const ::onnx::GraphProto& graph);
/// The same for a loaded model; from its views, parsing nothing, when its
/// nodes were read so (a view holds a sharding attribute only as this
/// function takes it: what it throws on is read by protobuf).
sharding_result read_annotations(const loaded_model& model);

/// Whether any top-level node carries a sharding attribute.
bool has_annotations(const ::onnx::GraphProto& graph);
/// The same for a loaded model; from its views, parsing nothing, when its
/// nodes were read so.
bool has_annotations(const loaded_model& model);

/// A top-level node as `inspect` lists it, viewing the model (its input when
/// the nodes were read as views, else its NodeProto): valid until the model
/// is edited, moved or freed.
struct node_fields {
  std::string_view name, op_type;
  std::vector<std::string_view> inputs, outputs;
};
/// f(index, fields) on every top-level node of the model, in order; from the
/// views when its nodes were read so, parsing nothing. `fields` is reused
/// from one call to the next.
void for_each_node(const loaded_model& model,
                   const std::function<void(std::size_t, const node_fields&)>& f);

/// The names of the model's initializers, in order, viewing the model;
/// without parsing nodes read as views.
std::vector<std::string_view> initializer_names(const loaded_model& model);

/// The core's validate() with node names in the messages, and rule (f) in
/// ONNX's sense: a graph input or initializer read on several devices (its
/// data is copied to each).
std::vector<diagnostic> validate(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                 const sharding_result& result, const pipeline_options& options);
std::vector<diagnostic> validate(const loaded_model& model, const node_graph& nodes,
                                 const sharding_result& result, const pipeline_options& options);

/// The display names of the nodes: the name, or "<unnamed OP>".
std::vector<std::string> node_names(const ::onnx::GraphProto& graph);
/// The same for a loaded model, from its views if its nodes were read so.
std::vector<std::string> node_names(const loaded_model& model);
/// Node `index`'s display name: its name, or "<unnamed OP>".
std::string node_name(const ::onnx::GraphProto& graph, std::size_t index);
/// The same for a loaded model, from its views if its nodes were read so.
std::string node_name(const loaded_model& model, std::size_t index);

/// A node as error messages name it: "node 3 'conv1'", or "node 3 (unnamed
/// 'Relu')" (names quoted and escaped by io::quote).
std::string node_label(const ::onnx::GraphProto& graph, std::size_t index);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_GRAPH_HPP
