// shardpoint/onnx/model.hpp -- reading and atomically writing ONNX models.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_MODEL_HPP
#define SHARDPOINT_ONNX_MODEL_HPP

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <shardpoint/error.hpp>
#include <shardpoint/sharding_result.hpp>

namespace shardpoint::onnx {

/// Bad input: a file, a model or a config that cannot be used (the command
/// line's exit code 2). The same type as shardpoint::bad_input_error.
using input_error = shardpoint::bad_input_error;

inline constexpr const char* ipu_attribute = "__ipu_number";
inline constexpr const char* stage_attribute = "__pipeline_stage";

/// Whether `a` is one of the two sharding attributes.
inline bool is_sharding_attribute(const ::onnx::AttributeProto& a) {
  return a.name() == ipu_attribute || a.name() == stage_attribute;
}

/// Reads and parses a model. Never opens external data files: tensors stored
/// outside the model keep their references untouched. Throws input_error.
::onnx::ModelProto load_model(const std::filesystem::path& path);

namespace wire {
struct node_views;
} // namespace wire

/// How read_graph() reads the top-level nodes.
enum class node_reading {
  /// Parsed by protobuf, as everything else.
  parsed,
  /// As views into the input where every node is plain (src/node_view.hpp:
  /// bytes protobuf would write back unchanged, a sharding attribute only
  /// as read_annotations() takes it), those with an attribute holding a
  /// tensor, a graph or a type parsed one by one beside their views, all
  /// parsed only when proto() is first called; parsed otherwise.
  /// For commands that need of the nodes only their names, edges and
  /// sharding attributes (`shard` and `validate` without a report,
  /// `inspect`), and only through the functions that take a loaded_model
  /// (graph.hpp).
  views,
  /// The nodes as `views` does, the initializers parsed (as `parsed` does:
  /// their data left out where large). For commands that measure a model
  /// (shape inference reads the initializers' types and small data) through
  /// the functions that take a loaded_model (costs.hpp's measure_nodes).
  views_with_initializers,
};

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

  /// The model. On a model whose nodes were read as views (node_views()),
  /// the first call parses them (as read_graph() would have), and the
  /// initializers when they were read as views too, once, also when several
  /// threads call it.
  ::onnx::ModelProto& proto();
  const ::onnx::ModelProto& proto() const;

  /// (internal) The nodes as views into the input, read by
  /// read_graph(path, node_reading::views) and not yet parsed by proto();
  /// null otherwise. What the node graph needs of a node, without protobuf
  /// objects (src/node_view.hpp).
  [[nodiscard]] const wire::node_views* node_views() const noexcept;
  /// (internal) proto() without parsing the nodes: while node_views() is
  /// set, a graph without nodes, and without initializers when the views
  /// hold their names (node_views()->initializers_as_views; read them
  /// there, never here: proto() may be adding them on another thread);
  /// everything else as proto() has it.
  [[nodiscard]] const ::onnx::ModelProto& proto_without_nodes() const noexcept { return *proto_; }
  /// (internal) The same, to change the graph's inputs for a while (a
  /// batch or a size set and restored: memory.hpp's activation_bytes),
  /// never its nodes or initializers, and while no other thread calls
  /// proto().
  [[nodiscard]] ::onnx::ModelProto& mutable_proto_without_nodes() noexcept { return *proto_; }

  /// Whether proto() is the skeleton of a model read at the wire level
  /// (read_graph, parse_graph): everything but the data of large tensors.
  /// save_model() and serialize_model() then write the input back with the
  /// nodes as proto() has them; only the top-level nodes may be edited
  /// (their attributes, names, subgraphs), nothing else, none added.
  bool is_skeleton() const noexcept { return source_ != nullptr; }

  struct wire_source;    ///< (internal) the input and where its graph and nodes lie
  struct sharding_marks; ///< (internal) a skeleton's sharding attributes, for the writer
  struct pending_nodes;  ///< (internal) nodes read as views, parsed on demand

private:
  /// An arena whose first block suits a model of `input_bytes`.
  explicit loaded_model(std::size_t input_bytes);
  friend loaded_model read_model(const std::filesystem::path& path);
  friend loaded_model parse_model(std::string_view bytes, const std::string& source);
  friend loaded_model read_graph(const std::filesystem::path& path, node_reading nodes);
  friend loaded_model parse_graph(std::string_view bytes, const std::string& source,
                                  node_reading nodes);
  friend void save_model(const loaded_model& model, const std::filesystem::path& path);
  friend std::string serialize_model(const loaded_model& model);
  friend struct part_writer; ///< (internal) model.cpp's
  friend std::optional<::onnx::TensorProto> initializer_with_data(const loaded_model& whole, int k);
  friend std::size_t serialized_size(const loaded_model& model);
  friend void annotate(loaded_model& model, const sharding_result& result);
  friend void serialize_into(const loaded_model& model, char* out, std::size_t size);

  std::unique_ptr<google::protobuf::Arena> arena_;
  ::onnx::ModelProto* proto_ = nullptr;
  std::shared_ptr<const wire_source> source_;
  std::shared_ptr<const sharding_marks> marks_;
  std::unique_ptr<pending_nodes> pending_;
  bool complete_ = false; ///< loaded: what keep_models_until_exit() keeps
};

/// (internal) The graph holding `model`'s initializers, parsing no node
/// read as views: the skeleton's (proto_without_nodes()) where the nodes
/// are views and the initializers were parsed beside them
/// (node_reading::views_with_initializers), proto()'s otherwise. Read its
/// initializers, inputs and outputs, never its node list.
const ::onnx::GraphProto& graph_with_initializers(const loaded_model& model);

/// For a program about to end with its models (the command line): from
/// now on, a model that loaded is not freed when destroyed but left to the
/// process's exit, which returns its memory at once. Freeing a model of
/// 10^6 nodes costs ~8% of `shard`'s time (its strings' destructors, the
/// unmapping), for nothing when the process ends next: clang's
/// `-disable-free`. The memory stays reachable, so leak checkers do not
/// count it (LeakSanitizer scans the arenas' blocks as roots). Not for a
/// long-lived process (the Python module never calls it): a program that
/// loads several models in turn would hold them all.
void keep_models_until_exit();

/// load_model() into an arena: the same checks and errors, faster.
loaded_model read_model(const std::filesystem::path& path);

/// A model from serialised bytes already in memory (the Python bindings'
/// path); `source` names it in messages. The same checks as read_model().
loaded_model parse_model(std::string_view bytes, const std::string& source = "<bytes>");

/// The fast path for commands that need the graph, not the weights: the file
/// is mapped and scanned at the wire level (src/wire.hpp), the weights'
/// bytes are never copied, and the result is a skeleton (is_skeleton()).
/// When the scan is not sure it reads the file as protobuf would, it is
/// read_model()'s whole parse instead, with the same checks and errors.
loaded_model read_graph(const std::filesystem::path& path, node_reading nodes);
inline loaded_model read_graph(const std::filesystem::path& path) {
  return read_graph(path, node_reading::parsed);
}
/// The same on bytes in memory, which must outlive the model.
loaded_model parse_graph(std::string_view bytes, const std::string& source, node_reading nodes);
inline loaded_model parse_graph(std::string_view bytes, const std::string& source = "<bytes>") {
  return parse_graph(bytes, source, node_reading::parsed);
}

/// annotate(graph, result) (graph.hpp) for a model read by any of the above,
/// and what the commands call: the two sharding attributes on every
/// top-level node, as the model is written (save_model, serialize_model).
/// A skeleton's nodes lose their sharding attributes now and gain the new
/// ones as the writer writes them, never as AttributeProto objects in
/// memory; read_annotations() of proto() does not see them until then.
/// Nodes read as views are parsed first when any holds a sharding
/// attribute (to remove it), and stay views otherwise.
/// The written bytes are annotate(graph, result)'s, byte for byte.
void annotate(loaded_model& model, const sharding_result& result);

/// Writes a model read by any of the above to `path` atomically: a
/// skeleton's input with its nodes replaced, or the whole model.
void save_model(const loaded_model& model, const std::filesystem::path& path);
/// The same, into memory.
std::string serialize_model(const loaded_model& model);
/// Writes `part`, a model made of pieces of `whole` (a stage of it), to
/// `path` atomically, as save_model(part, path) would write it had `whole`
/// all its data: initializer k of its graph is written as `whole`'s
/// initializer `from[k]`, copied verbatim from the input where the skeleton
/// left its data out (from[k] < 0: as `part` has it).
void save_part(const ::onnx::ModelProto& part, const loaded_model& whole,
               const std::vector<int>& from, const std::filesystem::path& path);
/// The same of a part built without nodes, given instead as `nodes`,
/// indices of `whole`'s top-level nodes, which `whole` holds as views
/// (node_views()): they are written first in the part's graph, where
/// protobuf writes a graph's nodes, each copied verbatim from the input,
/// without its sharding attributes unless `keep_sharding` -- the bytes
/// save_part() would write of the part holding those nodes.
void save_part(const ::onnx::ModelProto& part, const loaded_model& whole,
               const std::vector<int>& from, std::span<const std::size_t> nodes, bool keep_sharding,
               const std::filesystem::path& path);

/// `whole`'s initializer `k` with its data, read again from the input, when
/// the skeleton left data out of it (one tensor in memory, not the model's);
/// nothing when proto() holds it whole.
std::optional<::onnx::TensorProto> initializer_with_data(const loaded_model& whole, int k);

/// The same in two steps, as for a ModelProto below.
std::size_t serialized_size(const loaded_model& model);
void serialize_into(const loaded_model& model, char* out, std::size_t size);

/// Serialises `model` to `path` atomically: a temporary file in the same
/// folder, flushed, then renamed over `path`. On any failure `path` is left as
/// it was and no temporary file remains. Throws input_error, or
/// unsupported_error for a model over protobuf's 2 GiB limit.
void save_model(const ::onnx::ModelProto& model, const std::filesystem::path& path);

/// The serialised bytes of `model` (same limit as save_model).
std::string serialize_model(const ::onnx::ModelProto& model);

/// The size of `model` serialised (unsupported_error over 2 GiB), then the
/// bytes written into a buffer of exactly that size, e.g. one the caller
/// owns (the Python bindings' bytes object): no second copy.
std::size_t serialized_size(const ::onnx::ModelProto& model);
void serialize_into(const ::onnx::ModelProto& model, char* out, std::size_t size);

/// Writes `bytes` to `path` atomically, as save_model does. Throws input_error.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_MODEL_HPP
