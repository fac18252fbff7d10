// Reading and rewriting a model at the wire level (issue #16): the graph is
// decoded, the weights are not.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE SCAN
//
//   The input's ModelProto fields are walked with protobuf's
//   CodedInputStream. Every field but the graph is merged, from its own
//   bytes, into a skeleton ModelProto by protobuf's parser (so protobuf
//   decides what they mean and whether they are valid). The graph's fields
//   are walked the same way: nodes, inputs, outputs, value_info and the rest
//   are merged into the skeleton's graph, and the span of every node and
//   initializer field is kept. The nodes and initializers are parsed after
//   the walk, each from its own bytes, in chunks side by side where there
//   are more than 2 x 16384 and the machine has more than one core (up to 8
//   threads; each list is a sequence of independent records), and appended
//   in order. A node is parsed by protobuf whole, and so is an initializer
//   without large data; one with data fields (raw_data, float_data, ...) of
//   more than `kept_data_bytes` bytes is walked one level deeper: those are
//   checked the way protobuf's parser would check them and left out of the
//   skeleton; every other field, and small data (shape and axes constants,
//   which shape inference reads), is merged. Nested messages are parsed with
//   the recursion budget they would have in a whole-model parse.
//
//   Whatever the scan is not sure protobuf would read the same way -- a
//   second graph field, a malformed field anywhere, packed data of an odd
//   length, a file over 2 GiB -- makes it give up; the caller then parses the
//   whole model as before, with today's errors. So the scan accepts only what
//   protobuf accepts, and then the skeleton is the whole model without the
//   large data fields.
//
// NODES AS VIEWS
//
//   Asked to (`scan(..., views)`), the scan reads every node as views into
//   the input (node_view.hpp), in chunks side by side like the parse, when
//   every one is plain -- protobuf would write it back unchanged, and it
//   holds a sharding attribute only as read_annotations() takes it -- or
//   plain but for attributes holding a tensor, a graph or a type (a
//   Constant's value, an If's branches), and then parses only those, one
//   by one, into node_views::parsed. One node that is neither, and all are
//   parsed as above. The skeleton then has no nodes until parse_views(),
//   which parses them as the scan would have (loaded_model::proto() calls
//   it on first use).
//   The initializers likewise: their names read as views when every one is
//   plain (no external data, no segment, no unknown field), and none parsed
//   until parse_views(); their left-out bytes counted as the parse counts
//   them.
//
// THE REWRITE
//
//   The output is the input with every top-level node field replaced by the
//   skeleton's node, serialised by protobuf (with its sharding attributes'
//   fields spliced in, see `marks`), and the graph's length prefix
//   recomputed; every other byte is copied verbatim. Nodes read as views and
//   never parsed are copied too, each with its marks spliced in at its
//   view's `splice`: protobuf's bytes, as the node is plain. A model protobuf itself
//   wrote (fields in number order, packed repeated scalars) comes out byte
//   for byte as a parse, edit and serialise of the whole model would write
//   it; other inputs keep their own field order and encodings, and both
//   outputs parse to the same message.
//
// COST
//
//   One pass over the field tags: O(fields) outside the weights' bytes, which
//   are skipped (read only for packed varints, which are validated); the
//   nodes' parse, and their sizes for the rewrite, spread over the threads.
//   Memory: the skeleton, the size of the graph. The input stays mapped,
//   read only.
#ifndef SHARDPOINT_ONNX_SRC_WIRE_HPP
#define SHARDPOINT_ONNX_SRC_WIRE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include <shardpoint/sharding_result.hpp>

#include "node_view.hpp"

namespace shardpoint::onnx::wire {

/// Data fields of at most this many bytes are kept in the skeleton.
inline constexpr std::size_t kept_data_bytes = 64 << 10;

/// [begin, end) in the input.
struct span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// Where the graph and its nodes lie in the input.
struct layout {
  span graph;                  ///< the whole graph field: tag, length, value
  std::size_t graph_value = 0; ///< where the graph's value starts
  std::vector<span> nodes;     ///< each top-level node field: tag, length, value
  /// Each top-level initializer field, and whether data was left out of it.
  std::vector<span> initializers;
  std::vector<bool> stripped;
  std::size_t stripped_bytes = 0; ///< data left out of the skeleton
  std::vector<span> node_values;  ///< each node's value, when read as views
  /// Each initializer's value, when read as views (node_views::
  /// initializers_as_views), and the `kept` of the scan, for parse_views().
  std::vector<span> initializer_values;
  std::size_t kept = kept_data_bytes;
};

/// Scans `input` into `skeleton` (empty on entry), leaving out data fields of
/// more than `kept` bytes. Nothing when the scan gives up (see above);
/// `skeleton` is then in an unspecified state.
/// With `views`, the nodes are read as views (node_view.hpp) into `*views`
/// when every one is plain or plain but for attributes holding a tensor, a
/// graph or a type (those alone parsed, into views->parsed), and then the
/// skeleton's graph has no nodes until parse_views(); otherwise `*views`
/// is left empty. With
/// them (and at least one node), the initializers' names are read as views
/// when every initializer is plain (decode_tensor), and then none is parsed
/// either until parse_views(); `where.stripped` is set as the parse would
/// have set it -- unless `initializer_views` is false: they are then parsed
/// as without views.
std::optional<layout> scan(std::string_view input, ::onnx::ModelProto& skeleton,
                           std::size_t kept = kept_data_bytes, node_views* views = nullptr,
                           bool initializer_views = true);

/// What scan() read as views -- the nodes, and the initializers when
/// `where.initializer_values` is set -- parsed into `graph` (which has none
/// of them) as scan() would have parsed them. False only where protobuf
/// refuses what the views accepted, which the views' rules exclude.
bool parse_views(std::string_view input, const layout& where, ::onnx::GraphProto& graph);

/// The sharding attributes of the top-level nodes (annotate(loaded_model&),
/// model.hpp), never made into AttributeProto objects -- two of them a node,
/// half a KiB, were a third of the memory of sharding a model of 10^6 nodes.
/// The rewrite adds to each node the fields protobuf would write for the two
/// attributes annotate() appends (each serialised by protobuf once per
/// value), where it would write them: after the node's own attributes,
/// before its fields 6 and up. That place is known only in a node without
/// unknown fields, which protobuf writes after all known ones; such a node
/// is given the attributes themselves (spliced() is false).
class marks {
public:
  explicit marks(const sharding_result& result);
  /// Whether the rewrite adds the marks to `node`.
  static bool spliced(const ::onnx::NodeProto& node) { return node.unknown_fields().empty(); }
  [[nodiscard]] std::size_t nodes() const { return result_.size(); }
  /// The bytes node `v` gains, and writing them.
  [[nodiscard]] std::size_t size(std::size_t v) const;
  void write(std::size_t v, google::protobuf::io::CodedOutputStream& out) const;

private:
  [[nodiscard]] const std::string* field(const std::vector<std::string>& by_value,
                                         std::span<const int> values, std::size_t v) const;
  sharding_result result_;
  std::vector<std::string> ipu_, stage_; ///< a node's field, by value
};

/// Where the rewrite may send a long run of unchanged input bytes round
/// `out` (to the file `out` writes, copied from the input's file by the
/// kernel: model.cpp). copy() writes input bytes [from, to) after what
/// `out` has been given; errors are the file's, reported where it is closed.
class range_copier {
public:
  /// The shortest run given to copy().
  static constexpr std::size_t least = std::size_t{64} << 10;
  virtual void copy(google::protobuf::io::CodedOutputStream& out, std::size_t from,
                    std::size_t to) = 0;

protected:
  range_copier() = default;
  range_copier(const range_copier&) = default;
  range_copier& operator=(const range_copier&) = default;
  ~range_copier() = default;
};

/// The size of the rewritten model, and the rewrite into `out`; with
/// `marks`, each node spliced() gains its marks; with `copier`, runs of
/// unchanged bytes go through it.
std::size_t rewritten_size(std::string_view input, const layout& where,
                           const ::onnx::GraphProto& graph, const marks* marks = nullptr);
void rewrite(std::string_view input, const layout& where, const ::onnx::GraphProto& graph,
             google::protobuf::io::CodedOutputStream& out, const marks* marks = nullptr,
             range_copier* copier = nullptr);
/// The same for nodes scan() read as views and nothing parsed: each node's
/// bytes copied, its marks spliced in at its view's `splice`.
std::size_t rewritten_size(std::string_view input, const layout& where, const node_views& views,
                           const marks* marks = nullptr);
void rewrite(std::string_view input, const layout& where, const node_views& views,
             google::protobuf::io::CodedOutputStream& out, const marks* marks = nullptr,
             range_copier* copier = nullptr);

/// Top-level nodes to write into a graph that has none, each as runs of
/// bytes of the input joined: node i's value is runs[ends[i - 1] ..
/// ends[i]) (from 0 for i = 0).
struct node_runs {
  std::vector<std::string_view> runs;
  std::vector<std::size_t> ends;
};

/// A model serialised by protobuf (`model`: small, a skeleton's part) with
/// some of its graph's initializer fields replaced by fields of `input`
/// copied verbatim: initializer k of the graph becomes `from[k]` when that
/// is set. With `nodes`, the graph of `model` has no nodes, and gains those
/// first, where protobuf writes a graph's nodes (field 1). The pieces of the
/// output, in order, without copying either side.
class splice {
public:
  splice(std::string_view model, std::string_view input, const std::vector<const span*>& from,
         const node_runs* nodes = nullptr);
  [[nodiscard]] std::size_t size() const { return size_; }
  /// With `copier`, the pieces of `input` go through it.
  void write(google::protobuf::io::CodedOutputStream& out, range_copier* copier = nullptr) const;

private:
  std::string_view input_;
  std::vector<std::string_view> before_; ///< up to the graph's length prefix
  std::string prefix_;                   ///< the graph's tag and new length
  std::string node_heads_;               ///< each node's tag and length (sized once)
  std::vector<std::string_view> nodes_;  ///< the nodes: each head, then its runs
  std::vector<std::string_view> after_;
  std::size_t size_ = 0;
};

} // namespace shardpoint::onnx::wire

#endif // SHARDPOINT_ONNX_SRC_WIRE_HPP
