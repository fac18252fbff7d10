// A top-level node as views into the input (issue #30's first brick): what
// the node graph needs of it -- name, op type, domain, inputs, outputs --
// and where a writer splices attributes in, without a protobuf object.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE RULE
//
//   decode_node(value, ...) accepts a NodeProto's bytes only when they are
//   *plain*: protobuf parses them, and serialising what it parsed gives the
//   same bytes back. Then a writer may copy the bytes verbatim wherever it
//   would have written protobuf's node, and splice fields in at `splice`
//   (where protobuf writes a node's fields numbered above 5, after its
//   attributes). Plain means, at the wire level, what protobuf's serialiser
//   writes:
//
//   - only the fields onnx.proto declares (NodeProto 1-7; in an attribute
//     name, f, i, s, floats, ints, strings, doc_string, type and
//     ref_attr_name), each with the wire type protobuf writes it with
//     (repeated scalars unpacked, as proto2 writes them), no unknown field;
//   - fields in ascending number order, a singular field at most once;
//   - every varint (tags, lengths, values) in its shortest encoding, an
//     attribute's type one of AttributeType's values;
//   - and, for what this reader is for: no attribute holding a tensor, a
//     graph or a type (those nodes need protobuf, see below); a sharding
//     attribute (`__ipu_number`, `__pipeline_stage`) only as
//     read_annotations() takes it -- of type INT, its value in
//     0..max_group_id + 1, at most once in the node -- and then its value
//     is read (`sharding`): what the function would throw on is left to it.
//
//   A node plain but for attributes holding a tensor, a graph or a type (a
//   Constant's value, an If's branches) is a view too when the caller asks
//   for it (`parsed`): protobuf then parses its bytes, with the recursion
//   budget a top-level node has in a model, into a NodeProto the caller
//   keeps, and the node is accepted only when protobuf writes that message
//   back to the same bytes. What needs those attributes reads the parsed
//   node; what needs names, edges and attribute bytes reads the view, as
//   for any other node. One such node no longer sends a whole model to
//   protobuf: an exported model's Constants are most of them.
//
//   A node holding a sharding attribute is read, never written as a view:
//   annotate(loaded_model&) parses the nodes first when any view holds one
//   (a verbatim copy would keep the old attribute beside the new); a copy
//   of the model as it is stays byte for byte.
//
//   Anything else is refused (false), never misread: the caller then parses
//   the node with protobuf. tests/fuzz/fuzz_wire holds the rule to protobuf
//   on every input it makes: an accepted node parses to a message whose
//   fields are the views and which serialises to the node's bytes.
//
// COST
//
//   One pass over the node's bytes, O(bytes); views, no copies. Varints and
//   tags are read by protobuf's CodedInputStream.
#ifndef SHARDPOINT_ONNX_SRC_NODE_VIEW_HPP
#define SHARDPOINT_ONNX_SRC_NODE_VIEW_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

namespace shardpoint::onnx::wire {

/// A node's strings, viewing the input. Its inputs are names[first_input,
/// first_input + inputs), its outputs the `outputs` names after those.
/// Offsets into its value, not views, for its other strings: 56 bytes a
/// node, where three views and the rest took 80 (10^6 nodes a model).
struct node_view {
  const char* value = nullptr; ///< the node's value bytes (no tag, no length)
  std::uint32_t name_at = 0, name_size = 0;
  std::uint32_t op_type_at = 0, op_type_size = 0;
  std::uint32_t domain_at = 0, domain_size = 0;
  std::uint32_t first_input = 0; ///< into the caller's names
  std::uint32_t inputs = 0;
  std::uint32_t outputs = 0;
  std::uint32_t attributes_at = 0; ///< offset in the value where attributes start
  std::uint32_t splice = 0;        ///< and where they end

  [[nodiscard]] std::string_view name() const { return {value + name_at, name_size}; }
  [[nodiscard]] std::string_view op_type() const { return {value + op_type_at, op_type_size}; }
  [[nodiscard]] std::string_view domain() const { return {value + domain_at, domain_size}; }
  /// The node's attribute fields, tags and all: [attributes_at, splice) (a
  /// plain node's fields are in number order). Merged into an empty
  /// NodeProto they give it the node's attributes, as a whole parse would.
  [[nodiscard]] std::string_view attribute_bytes() const {
    return {value + attributes_at, splice - attributes_at};
  }
  friend bool operator==(const node_view&, const node_view&) = default;
};

/// A node's sharding attributes as a view read them: each value, or -1
/// where the node has none.
struct node_sharding {
  std::int32_t device = -1;
  std::int32_t stage = -1;
  friend bool operator==(const node_sharding&, const node_sharding&) = default;
};

/// Every top-level node of a graph as views, in order: what `wire::scan`
/// gives instead of parsing the nodes, when every one of them is plain or
/// plain but for attributes protobuf holds (`parsed`).
/// With them, when every initializer is plain too (see decode_tensor), the
/// initializers' names, and then none is parsed either.
struct node_views {
  std::vector<node_view> nodes;
  std::vector<std::string_view> names; ///< every node's inputs and outputs
  /// Whether the initializers were read as views: their names are then
  /// `initializers`, in order, and the skeleton has none until parsed.
  bool initializers_as_views = false;
  std::vector<std::string_view> initializers;
  /// Every node's sharding attributes, by node; empty when no node has one
  /// (most models: nothing is kept for them).
  std::vector<node_sharding> sharding;
  /// By node, the nodes with an attribute holding a tensor, a graph or a
  /// type, parsed (see above), null for the others; empty when no node has
  /// one. They live as long as the views.
  std::vector<std::unique_ptr<::onnx::NodeProto>> parsed;
  /// Whether a parsed node holds a graph (an If's, a Loop's body).
  bool subgraphs = false;

  [[nodiscard]] std::size_t size() const { return nodes.size(); }
  [[nodiscard]] std::span<const std::string_view> inputs(std::size_t v) const {
    return {names.data() + nodes[v].first_input, nodes[v].inputs};
  }
  [[nodiscard]] std::span<const std::string_view> outputs(std::size_t v) const {
    return {names.data() + nodes[v].first_input + nodes[v].inputs, nodes[v].outputs};
  }
  /// Node v parsed, when it holds a tensor, a graph or a type; else null.
  [[nodiscard]] const ::onnx::NodeProto* parsed_node(std::size_t v) const {
    return parsed.empty() ? nullptr : parsed[v].get();
  }
};

/// `value`, the bytes `node` views (decode_node accepted them), as runs of
/// those bytes appended to `runs`: without its sharding attributes' fields
/// when `drop_sharding` (the runs between them), else whole. Joined, they
/// are protobuf's bytes of the node with those attributes removed, as the
/// node is plain (its fields in order, each attribute one field).
void node_runs_of(std::string_view value, const node_view& node, bool drop_sharding,
                  std::vector<std::string_view>& runs);

/// The recursion budget a top-level node has in protobuf's parse of a
/// model: its default, 100, less the model's and the graph's levels.
inline constexpr int node_recursion_budget = 98;

/// Decodes a NodeProto's value bytes (no tag, no length) into `out`,
/// appending its inputs and then its outputs to `names`, and its sharding
/// attributes' values into `sharding`. False, with `names` as it was, when
/// the bytes are not plain (see above).
bool decode_node(std::string_view value, node_view& out, std::vector<std::string_view>& names,
                 node_sharding& sharding);
/// The same, also taking a node plain but for attributes holding a
/// tensor, a graph or a type, which it parses into `parsed` (see above);
/// `parsed` stays null for a plain node.
bool decode_node(std::string_view value, node_view& out, std::vector<std::string_view>& names,
                 node_sharding& sharding, std::unique_ptr<::onnx::NodeProto>& parsed);

/// An initializer (a TensorProto's value bytes) as views: its name, and
/// how many bytes of its data fields are longer than `kept` -- what the
/// scan leaves out of a skeleton (wire.hpp), counted as it counts them.
///
/// THE RULE: plain as for nodes -- protobuf parses the bytes -- in the
/// fields a tensor held in the file has: dims (unpacked varints, as proto2
/// writes them), data_type, name, doc_string and the data fields (float,
/// int32, int64, double and uint64 data packed, string_data, raw_data), in
/// number order, a singular field at most once, every tag, length and
/// varint shortest, packed varints complete and packed floats and doubles
/// whole. A segment, external data, a data location or any other field is
/// refused: the caller then parses every initializer with protobuf (so
/// that, among others, a tensor naming an external file is seen).
/// Whether a TensorProto's field `field` holds its data (float_data,
/// int32_data, string_data, int64_data, raw_data, double_data, uint64_data).
bool is_data_field(int field);
/// What protobuf's parser checks in such a field's value read as packed:
/// nothing in bytes; packed varints must each be complete; packed floats
/// and doubles whole (an odd length: false, left to protobuf).
bool data_readable(int field, const std::uint8_t* value, std::size_t length);

struct tensor_view {
  std::string_view name;
  std::size_t left_out = 0;
};
bool decode_tensor(std::string_view value, std::size_t kept, tensor_view& out);

} // namespace shardpoint::onnx::wire

#endif // SHARDPOINT_ONNX_SRC_NODE_VIEW_HPP
