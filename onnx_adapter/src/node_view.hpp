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
//     graph or a type (those nodes need protobuf), none named as a sharding
//     attribute (a writer would drop it).
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
#include <span>
#include <string_view>
#include <vector>

namespace shardpoint::onnx::wire {

/// A node's strings, viewing the input. Its inputs are names[first_input,
/// first_input + inputs), its outputs the `outputs` names after those.
struct node_view {
  std::string_view name, op_type, domain;
  std::uint32_t first_input = 0; ///< into the caller's names
  std::uint32_t inputs = 0;
  std::uint32_t outputs = 0;
  std::uint32_t splice = 0; ///< offset in the value where attributes end
};

/// Every top-level node of a graph as views, in order: what `wire::scan`
/// gives instead of parsing the nodes, when every one of them is plain.
struct node_views {
  std::vector<node_view> nodes;
  std::vector<std::string_view> names; ///< every node's inputs and outputs

  [[nodiscard]] std::size_t size() const { return nodes.size(); }
  [[nodiscard]] std::span<const std::string_view> inputs(std::size_t v) const {
    return {names.data() + nodes[v].first_input, nodes[v].inputs};
  }
  [[nodiscard]] std::span<const std::string_view> outputs(std::size_t v) const {
    return {names.data() + nodes[v].first_input + nodes[v].inputs, nodes[v].outputs};
  }
};

/// Decodes a NodeProto's value bytes (no tag, no length) into `out`,
/// appending its inputs and then its outputs to `names`. False, with
/// `names` as it was, when the bytes are not plain (see above).
bool decode_node(std::string_view value, node_view& out, std::vector<std::string_view>& names);

} // namespace shardpoint::onnx::wire

#endif // SHARDPOINT_ONNX_SRC_NODE_VIEW_HPP
