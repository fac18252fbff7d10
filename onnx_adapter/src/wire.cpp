// Reading and rewriting a model at the wire level: see wire.hpp.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <atomic>
#include <climits>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <shardpoint/error.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/model.hpp>

#include "chunks.hpp"
#include "wire.hpp"

namespace shardpoint::onnx::wire {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using wfl = google::protobuf::internal::WireFormatLite;

// protobuf's default recursion limit, and what is left of it one and two
// messages down (a graph's fields, an initializer's fields).
constexpr int model_depth = 100;

const std::uint8_t* bytes_of(std::string_view s) {
  return reinterpret_cast<const std::uint8_t*>(s.data());
}

// Merges one field, given as its own bytes (tag included), into `message`
// with protobuf's parser and the recursion budget it would have in place.
bool merge(google::protobuf::MessageLite& message, const std::uint8_t* field, std::size_t size,
           int depth) {
  CodedInputStream in(field, static_cast<int>(size));
  in.SetRecursionLimit(depth);
  return message.MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Whether the varint `v` just read from `from` to where `in` stands was
// written in its shortest form. CodedInputStream reads a tag or a length
// padded to ten bytes; protobuf's parser refuses one longer than five. The
// walk takes only the shortest form -- all protobuf writes -- and gives
// anything else up to the whole parse, whose verdict is then protobuf's.
bool shortest(const CodedInputStream& in, std::size_t from, std::uint64_t v) {
  return static_cast<std::size_t>(in.CurrentPosition()) - from ==
         CodedOutputStream::VarintSize64(v);
}

// The fields of one message, walked: `visit(field_number, wire_type, start,
// value, in)` is called after the tag is read, with `start` the offset of the
// tag and `value` that of the value; it consumes the value and returns false
// to give up. Offsets are relative to `base`. True at the message's end;
// false at a tag not in its shortest form.
template <class Visit>
bool walk(const std::uint8_t* base, std::size_t size, Visit&& visit) {
  CodedInputStream in(base, static_cast<int>(size));
  for (;;) {
    const auto start = static_cast<std::size_t>(in.CurrentPosition());
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {
      // The end of the message, or a tag protobuf rejects (0, or unreadable).
      return start == size;
    }
    if (!shortest(in, start, tag)) {
      return false;
    }
    const auto value = static_cast<std::size_t>(in.CurrentPosition());
    if (!visit(wfl::GetTagFieldNumber(tag), wfl::GetTagWireType(tag), tag, start, value, in)) {
      return false;
    }
  }
}

// Skips any field (validating groups as protobuf does) and merges it.
bool skip_and_merge(google::protobuf::MessageLite& message, const std::uint8_t* base,
                    std::uint32_t tag, std::size_t start, CodedInputStream& in, int depth) {
  if (!wfl::SkipField(&in, tag)) {
    return false;
  }
  const auto end = static_cast<std::size_t>(in.CurrentPosition());
  return merge(message, base + start, end - start, depth);
}

// Reads a length prefix, in its shortest form, and checks that the value
// fits in the `size` bytes of the message being walked.
bool read_length(CodedInputStream& in, std::size_t size, std::size_t& length) {
  const auto from = static_cast<std::size_t>(in.CurrentPosition());
  int n = 0;
  if (!in.ReadVarintSizeAsInt(&n) || n < 0 || !shortest(in, from, static_cast<std::uint64_t>(n))) {
    return false;
  }
  length = static_cast<std::size_t>(n);
  return length <= size - static_cast<std::size_t>(in.CurrentPosition());
}

// An initializer: every field merged but large data, which is checked.
bool scan_tensor(const std::uint8_t* base, std::size_t size, ::onnx::TensorProto& tensor,
                 std::size_t kept, std::size_t& stripped) {
  constexpr int depth = model_depth - 2;
  return walk(base, size,
              [&](int field, wfl::WireType type, std::uint32_t tag, std::size_t start,
                  std::size_t value, CodedInputStream& in) {
                if (is_data_field(field) && type == wfl::WIRETYPE_LENGTH_DELIMITED) {
                  std::size_t length = 0;
                  if (!read_length(in, size, length)) {
                    return false;
                  }
                  const std::size_t at = static_cast<std::size_t>(in.CurrentPosition());
                  if (length > kept) {
                    stripped += length;
                    return data_readable(field, base + at, length) &&
                           in.Skip(static_cast<int>(length));
                  }
                  return in.Skip(static_cast<int>(length)) &&
                         merge(tensor, base + start, at + length - start, depth);
                }
                (void)value;
                return skip_and_merge(tensor, base, tag, start, in, depth);
              });
}

// The values (bytes without tag and length, offsets into the input) of the
// graph's nodes and initializers: independent records, parsed after the
// walk side by side (parse_deferred).
struct deferred {
  std::vector<span> nodes;
  std::vector<span> initializers;
};

bool scan_graph(const std::uint8_t* base, std::size_t size, std::size_t offset,
                ::onnx::GraphProto& graph, layout& where, deferred& values) {
  constexpr int depth = model_depth - 1;
  return walk(base, size,
              [&](int field, wfl::WireType type, std::uint32_t tag, std::size_t start,
                  std::size_t value, CodedInputStream& in) {
                (void)value;
                if (type != wfl::WIRETYPE_LENGTH_DELIMITED) {
                  return skip_and_merge(graph, base, tag, start, in, depth);
                }
                std::size_t length = 0;
                if (!read_length(in, size, length)) {
                  return false;
                }
                const auto at = static_cast<std::size_t>(in.CurrentPosition());
                if (!in.Skip(static_cast<int>(length))) {
                  return false;
                }
                if (field == ::onnx::GraphProto::kInitializerFieldNumber) {
                  where.initializers.push_back({offset + start, offset + at + length});
                  values.initializers.push_back({offset + at, offset + at + length});
                  return true; // parsed after the walk (parse_deferred)
                }
                if (field == ::onnx::GraphProto::kNodeFieldNumber) {
                  where.nodes.push_back({offset + start, offset + at + length});
                  values.nodes.push_back({offset + at, offset + at + length});
                  return true; // parsed after the walk (parse_deferred)
                }
                return merge(graph, base + start, at + length - start, depth);
              });
}

// Whether any data field of an initializer (its value's bytes) is longer
// than `kept`; nothing when its fields cannot be walked.
std::optional<bool> has_large_data(const std::uint8_t* base, std::size_t size, std::size_t kept) {
  bool large = false;
  const bool ok = walk(base, size,
                       [&](int field, wfl::WireType type, std::uint32_t tag, std::size_t,
                           std::size_t, CodedInputStream& in) {
                         if (is_data_field(field) && type == wfl::WIRETYPE_LENGTH_DELIMITED) {
                           std::size_t length = 0;
                           if (!read_length(in, size, length)) {
                             return false;
                           }
                           large = large || length > kept;
                           return in.Skip(static_cast<int>(length));
                         }
                         return wfl::SkipField(&in, tag);
                       });
  return ok ? std::optional(large) : std::nullopt;
}

// The messages of a repeated field of the graph (`field`), each made by
// `parse(i, message)` from its own bytes (values[i], offsets into `input`)
// into a message of the graph's arena, and appended in order. They are
// independent records, so chunks of them are parsed side by side
// (protobuf's arenas allocate from any thread). False when `parse` is.
template <class Message, class Parse>
bool parse_deferred(const std::vector<span>& values, ::onnx::GraphProto& graph,
                    google::protobuf::RepeatedPtrField<Message>& field, Parse parse) {
  google::protobuf::Arena* arena = graph.GetArena();
  std::vector<Message*> made(values.size());
  std::atomic<bool> ok{true};
  in_chunks(values.size(), [&](std::size_t, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to && ok.load(std::memory_order_relaxed); ++i) {
      made[i] = google::protobuf::Arena::CreateMessage<Message>(arena);
      if (!parse(i, *made[i])) {
        ok = false;
      }
    }
  });
  // Every message made is the graph's, also when one failed (the skeleton
  // is then unspecified, but owns them: off an arena they are on the heap).
  field.Reserve(static_cast<int>(made.size()));
  for (auto* message : made) {
    if (message != nullptr) {
      field.UnsafeArenaAddAllocated(message);
    }
  }
  return ok.load();
}

// The nodes and initializers after the walk: a node, or an initializer
// without large data, by protobuf from its own bytes with the budget it has
// in a whole-model parse; an initializer with large data field by field
// (scan_tensor), which leaves that data out.
// A message of the graph (a node, an initializer) by protobuf from its own
// bytes, with the recursion budget it has in a whole-model parse.
bool parse_whole(const std::uint8_t* input, const span& value,
                 google::protobuf::MessageLite& message) {
  CodedInputStream in(input + value.begin, static_cast<int>(value.end - value.begin));
  in.SetRecursionLimit(model_depth - 2);
  return message.MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

bool parse_node_fields(const std::uint8_t* input, const std::vector<span>& values,
                       ::onnx::GraphProto& graph) {
  return parse_deferred(
      values, graph, *graph.mutable_node(),
      [&](std::size_t i, ::onnx::NodeProto& node) { return parse_whole(input, values[i], node); });
}

// The initializers: one without large data by protobuf whole, one with it
// field by field (scan_tensor), which leaves that data out; the bytes left
// out of each into `stripped`.
bool parse_initializer_fields(const std::uint8_t* input, const std::vector<span>& values,
                              std::size_t kept, ::onnx::GraphProto& graph,
                              std::vector<std::size_t>& stripped) {
  stripped.assign(values.size(), 0);
  return parse_deferred(values, graph, *graph.mutable_initializer(),
                        [&](std::size_t i, ::onnx::TensorProto& tensor) {
                          const span& value = values[i];
                          const std::uint8_t* bytes = input + value.begin;
                          const std::size_t size = value.end - value.begin;
                          const auto large = has_large_data(bytes, size, kept);
                          if (!large) {
                            return false;
                          }
                          return *large ? scan_tensor(bytes, size, tensor, kept, stripped[i])
                                        : parse_whole(input, value, tensor);
                        });
}

void set_stripped(const std::vector<std::size_t>& stripped, layout& where) {
  where.stripped.reserve(stripped.size());
  for (const std::size_t bytes : stripped) {
    where.stripped.push_back(bytes != 0);
    where.stripped_bytes += bytes;
  }
}

// The nodes, unless they were read as views (`views`), and the
// initializers, unless they were too (`tensor_views`).
bool parse_deferred(const std::uint8_t* input, const deferred& values, std::size_t kept, bool views,
                    bool tensor_views, ::onnx::GraphProto& graph, layout& where) {
  if (!views && !parse_node_fields(input, values.nodes, graph)) {
    return false;
  }
  if (tensor_views) {
    return true;
  }
  std::vector<std::size_t> stripped; // bytes left out, by tensor
  if (!parse_initializer_fields(input, values.initializers, kept, graph, stripped)) {
    return false;
  }
  set_stripped(stripped, where);
  return true;
}

std::size_t field_size(std::size_t length) {
  return 1 + CodedOutputStream::VarintSize64(length) + length; // tags 1 and 7: one byte
}

} // namespace

namespace {

// Every node as views (node_view.hpp), in chunks side by side, each
// gathering its names (and the nodes with a sharding attribute, and those
// protobuf parsed), joined in order. False when one is not plain, or plain
// but for attributes protobuf holds.
bool decode_nodes(const std::uint8_t* input, const std::vector<span>& values, node_views& out) {
  static_assert(node_recursion_budget == model_depth - 2);
  const std::size_t n = values.size();
  struct chunk_names {
    std::size_t from = 0, to = 0;
    std::vector<std::string_view> names;
    std::vector<std::pair<std::size_t, node_sharding>> sharded;
    std::vector<std::pair<std::size_t, std::unique_ptr<::onnx::NodeProto>>> parsed;
  };
  std::vector<chunk_names> chunks(chunk_count(n));
  out.nodes.resize(n);
  std::atomic<bool> ok{true};
  in_chunks(n, [&](std::size_t chunk, std::size_t from, std::size_t to) {
    auto& mine = chunks[chunk];
    mine.from = from;
    mine.to = to;
    mine.names.reserve(3 * (to - from));
    for (std::size_t i = from; i < to && ok.load(std::memory_order_relaxed); ++i) {
      const std::string_view value(reinterpret_cast<const char*>(input) + values[i].begin,
                                   values[i].end - values[i].begin);
      node_sharding sharding;
      std::unique_ptr<::onnx::NodeProto> parsed;
      if (!decode_node(value, out.nodes[i], mine.names, sharding, parsed)) {
        ok = false;
        break;
      }
      if (sharding != node_sharding{}) {
        mine.sharded.emplace_back(i, sharding);
      }
      if (parsed != nullptr) {
        mine.parsed.emplace_back(i, std::move(parsed));
      }
    }
  });
  std::size_t total = 0;
  for (const auto& chunk : chunks) {
    total += chunk.names.size();
  }
  if (!ok.load() || total > UINT32_MAX) {
    out = {};
    return false;
  }
  out.names.reserve(total);
  for (auto& chunk : chunks) { // a chunk's names were numbered from 0
    const auto offset = static_cast<std::uint32_t>(out.names.size());
    for (std::size_t v = chunk.from; v < chunk.to; ++v) {
      out.nodes[v].first_input += offset;
    }
    out.names.insert(out.names.end(), chunk.names.begin(), chunk.names.end());
    chunk.names = {};
    if (!chunk.sharded.empty() && out.sharding.empty()) {
      out.sharding.resize(n);
    }
    for (const auto& [v, sharding] : chunk.sharded) {
      out.sharding[v] = sharding;
    }
    if (!chunk.parsed.empty() && out.parsed.empty()) {
      out.parsed.resize(n);
    }
    for (auto& [v, node] : chunk.parsed) {
      out.subgraphs = out.subgraphs || has_subgraphs(*node);
      out.parsed[v] = std::move(node);
    }
  }
  return true;
}

// Every initializer's name as a view (decode_tensor), in chunks side by
// side, into views.initializers, and where.stripped as the parse would set
// it. False, with nothing set, when one is not plain.
bool decode_tensors(const std::uint8_t* input, const std::vector<span>& values, std::size_t kept,
                    node_views& views, layout& where) {
  const std::size_t n = values.size();
  std::vector<std::size_t> stripped(n);
  views.initializers.resize(n);
  std::atomic<bool> ok{true};
  in_chunks(n, [&](std::size_t, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to && ok.load(std::memory_order_relaxed); ++i) {
      const std::string_view value(reinterpret_cast<const char*>(input) + values[i].begin,
                                   values[i].end - values[i].begin);
      tensor_view tensor;
      if (!decode_tensor(value, kept, tensor)) {
        ok = false;
        break;
      }
      views.initializers[i] = tensor.name;
      stripped[i] = tensor.left_out;
    }
  });
  if (!ok.load()) {
    views.initializers = {};
    return false;
  }
  views.initializers_as_views = true;
  set_stripped(stripped, where);
  return true;
}

} // namespace

std::optional<layout> scan(std::string_view input, ::onnx::ModelProto& skeleton, std::size_t kept,
                           node_views* views, bool initializer_views) {
  if (input.empty() || input.size() > static_cast<std::size_t>(INT_MAX)) {
    return std::nullopt;
  }
  const std::uint8_t* base = bytes_of(input);
  layout where;
  deferred values;
  bool graph_seen = false;
  const bool ok =
      walk(base, input.size(),
           [&](int field, wfl::WireType type, std::uint32_t tag, std::size_t start,
               std::size_t value, CodedInputStream& in) {
             if (field != ::onnx::ModelProto::kGraphFieldNumber ||
                 type != wfl::WIRETYPE_LENGTH_DELIMITED) {
               return skip_and_merge(skeleton, base, tag, start, in, model_depth);
             }
             if (graph_seen) {
               return false; // protobuf would merge the two: leave it to protobuf
             }
             graph_seen = true;
             std::size_t length = 0;
             if (!read_length(in, input.size(), length)) {
               return false;
             }
             const auto at = static_cast<std::size_t>(in.CurrentPosition());
             (void)value;
             where.graph = {start, at + length};
             where.graph_value = at;
             return in.Skip(static_cast<int>(length)) &&
                    scan_graph(base + at, length, at, *skeleton.mutable_graph(), where, values);
           });
  if (!ok) {
    return std::nullopt;
  }
  const bool as_views = views != nullptr && decode_nodes(base, values.nodes, *views);
  // (Initializers as views only beside nodes as views: proto() parses them
  // when it parses the nodes, and a model without nodes has none to parse.)
  const bool tensor_views = as_views && initializer_views && !values.nodes.empty() &&
                            decode_tensors(base, values.initializers, kept, *views, where);
  if (graph_seen && !parse_deferred(base, values, kept, as_views, tensor_views,
                                    *skeleton.mutable_graph(), where)) {
    return std::nullopt;
  }
  where.kept = kept;
  if (as_views) { // (the nodes' bytes, for parse_views() and the rewrite)
    where.node_values = std::move(values.nodes);
  }
  if (tensor_views) {
    where.initializer_values = std::move(values.initializers);
  }
  return where;
}

bool parse_views(std::string_view input, const layout& where, ::onnx::GraphProto& graph) {
  if (!parse_node_fields(bytes_of(input), where.node_values, graph)) {
    return false;
  }
  std::vector<std::size_t> stripped; // (as the scan counted them)
  return where.initializer_values.empty() ||
         parse_initializer_fields(bytes_of(input), where.initializer_values, where.kept, graph,
                                  stripped);
}

marks::marks(const sharding_result& result) : result_(result) {
  // Every value's field, made before the rewrite reads them from threads.
  const auto make = [](const char* name, std::span<const int> values) {
    std::vector<std::string> by_value;
    for (const int x : values) {
      if (x < 0 || static_cast<std::size_t>(x) < by_value.size()) {
        continue;
      }
      by_value.resize(static_cast<std::size_t>(x) + 1);
    }
    for (const int x : values) {
      if (x < 0 || !by_value[static_cast<std::size_t>(x)].empty()) {
        continue;
      }
      ::onnx::NodeProto node; // protobuf's bytes for the attribute as annotate() makes it
      auto* a = node.add_attribute();
      a->set_name(name);
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(x);
      by_value[static_cast<std::size_t>(x)] = node.SerializeAsString();
    }
    return by_value;
  };
  ipu_ = make(ipu_attribute, result_.devices());
  stage_ = make(stage_attribute, result_.stages());
}

const std::string* marks::field(const std::vector<std::string>& by_value,
                                std::span<const int> values, std::size_t v) const {
  if (values.empty() || values[v] < 0) {
    return nullptr;
  }
  return &by_value[static_cast<std::size_t>(values[v])];
}

std::size_t marks::size(std::size_t v) const {
  std::size_t n = 0;
  for (const auto* f : {field(ipu_, result_.devices(), v), field(stage_, result_.stages(), v)}) {
    n += f != nullptr ? f->size() : 0;
  }
  return n;
}

void marks::write(std::size_t v, CodedOutputStream& out) const {
  for (const auto* f : {field(ipu_, result_.devices(), v), field(stage_, result_.stages(), v)}) {
    if (f != nullptr) {
      out.WriteRaw(f->data(), static_cast<int>(f->size()));
    }
  }
}

namespace {

// Where a node's attributes end in protobuf's serialisation of it (a node
// without unknown fields: its fields in number order): before its first
// field numbered above attribute's, or at its end.
std::size_t attributes_end(const std::string& node) {
  CodedInputStream in(bytes_of(node), static_cast<int>(node.size()));
  for (;;) {
    const auto at = static_cast<std::size_t>(in.CurrentPosition());
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0 || wfl::GetTagFieldNumber(tag) > ::onnx::NodeProto::kAttributeFieldNumber) {
      return at;
    }
    if (!wfl::SkipField(&in, tag)) {
      throw internal_error("shardpoint: protobuf wrote a node it cannot read back");
    }
  }
}

// What node `v` gains in the rewrite.
std::size_t gain(const marks* marks, const ::onnx::NodeProto& node, std::size_t v) {
  return marks != nullptr && marks::spliced(node) ? marks->size(v) : 0;
}

} // namespace

namespace {

// The rewrite's size, given `fields(from, to)`: the bytes of nodes [from,
// to) as fields (tag, length, value), called side by side.
template <class Fields>
std::size_t rewritten_size_with(std::string_view input, const layout& where, Fields fields) {
  std::atomic<std::size_t> nodes{0};
  in_chunks(where.nodes.size(),
            [&](std::size_t, std::size_t from, std::size_t to) { nodes += fields(from, to); });
  std::size_t value = where.graph.end - where.graph_value;
  for (const span& s : where.nodes) {
    value -= s.end - s.begin;
  }
  value += nodes.load();
  return input.size() - (where.graph.end - where.graph.begin) + field_size(value);
}

// The rewrite, given each node's value size `size(i)` and `write(i, out)`
// writing that value.
template <class Size, class Write>
void rewrite_with(std::string_view input, const layout& where, CodedOutputStream& out,
                  range_copier* copier, Size size, Write write) {
  const std::size_t n = where.nodes.size();
  std::size_t value = where.graph.end - where.graph_value;
  for (std::size_t i = 0; i < n; ++i) {
    value = value - (where.nodes[i].end - where.nodes[i].begin) + field_size(size(i));
  }
  const auto copy = [&](std::size_t from, std::size_t to) {
    if (copier != nullptr && to - from >= range_copier::least) {
      copier->copy(out, from, to);
    } else {
      out.WriteRaw(input.data() + from, static_cast<int>(to - from));
    }
  };
  copy(0, where.graph.begin);
  out.WriteTag(wfl::MakeTag(::onnx::ModelProto::kGraphFieldNumber, wfl::WIRETYPE_LENGTH_DELIMITED));
  out.WriteVarint64(value);
  std::size_t at = where.graph_value;
  for (std::size_t i = 0; i < n; ++i) {
    const span& s = where.nodes[i];
    copy(at, s.begin);
    out.WriteTag(
        wfl::MakeTag(::onnx::GraphProto::kNodeFieldNumber, wfl::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint32(static_cast<std::uint32_t>(size(i)));
    write(i, out);
    at = s.end;
  }
  copy(at, where.graph.end);
  copy(where.graph.end, input.size());
}

void check_nodes(const layout& where, std::size_t nodes, const marks* marks) {
  if (nodes != where.nodes.size() || (marks != nullptr && marks->nodes() != where.nodes.size())) {
    throw internal_error("shardpoint: the rewrite was given a graph with other nodes");
  }
}

} // namespace

std::size_t rewritten_size(std::string_view input, const layout& where,
                           const ::onnx::GraphProto& graph, const marks* marks) {
  check_nodes(where, static_cast<std::size_t>(graph.node_size()), marks);
  // ByteSizeLong caches each node's size in it, for rewrite().
  return rewritten_size_with(input, where, [&](std::size_t from, std::size_t to) {
    std::size_t sum = 0;
    for (std::size_t i = from; i < to; ++i) {
      const auto& node = graph.node(static_cast<int>(i));
      sum += field_size(node.ByteSizeLong() + gain(marks, node, i));
    }
    return sum;
  });
}

void rewrite(std::string_view input, const layout& where, const ::onnx::GraphProto& graph,
             CodedOutputStream& out, const marks* marks, range_copier* copier) {
  check_nodes(where, static_cast<std::size_t>(graph.node_size()), marks);
  std::string bytes; // a node that gains marks, serialised (reused)
  rewrite_with(
      input, where, out, copier,
      [&](std::size_t i) { // the sizes rewritten_size() cached
        const auto& node = graph.node(static_cast<int>(i));
        return static_cast<std::size_t>(node.GetCachedSize()) + gain(marks, node, i);
      },
      [&](std::size_t i, CodedOutputStream& to) {
        const auto& node = graph.node(static_cast<int>(i));
        if (gain(marks, node, i) == 0) {
          node.SerializeWithCachedSizes(&to);
          return;
        }
        bytes.resize(static_cast<std::size_t>(node.GetCachedSize()));
        node.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(bytes.data()));
        const std::size_t split = attributes_end(bytes);
        to.WriteRaw(bytes.data(), static_cast<int>(split));
        marks->write(i, to);
        to.WriteRaw(bytes.data() + split, static_cast<int>(bytes.size() - split));
      });
}

namespace {

std::size_t value_size(const layout& where, std::size_t i) {
  return where.node_values[i].end - where.node_values[i].begin;
}

} // namespace

std::size_t rewritten_size(std::string_view input, const layout& where, const node_views& views,
                           const marks* marks) {
  check_nodes(where, views.size(), marks);
  return rewritten_size_with(input, where, [&](std::size_t from, std::size_t to) {
    std::size_t sum = 0;
    for (std::size_t i = from; i < to; ++i) {
      sum += field_size(value_size(where, i) + (marks != nullptr ? marks->size(i) : 0));
    }
    return sum;
  });
}

void rewrite(std::string_view input, const layout& where, const node_views& views,
             CodedOutputStream& out, const marks* marks, range_copier* copier) {
  check_nodes(where, views.size(), marks);
  rewrite_with(
      input, where, out, copier,
      [&](std::size_t i) { return value_size(where, i) + (marks != nullptr ? marks->size(i) : 0); },
      [&](std::size_t i, CodedOutputStream& to) { // a plain node, its marks spliced in
        const char* value = input.data() + where.node_values[i].begin;
        const std::size_t split = views.nodes[i].splice;
        to.WriteRaw(value, static_cast<int>(split));
        if (marks != nullptr) {
          marks->write(i, to);
        }
        to.WriteRaw(value + split, static_cast<int>(value_size(where, i) - split));
      });
}

splice::splice(std::string_view model, std::string_view input, const std::vector<const span*>& from,
               const node_runs* nodes)
    : input_(input) {
  const std::uint8_t* base = bytes_of(model);
  std::size_t graph_start = 0;
  std::size_t graph_value = 0;
  std::size_t graph_end = 0;
  const bool found = walk(base, model.size(),
                          [&](int field, wfl::WireType, std::uint32_t tag, std::size_t start,
                              std::size_t value, CodedInputStream& in) {
                            if (!wfl::SkipField(&in, tag)) {
                              return false;
                            }
                            if (field == ::onnx::ModelProto::kGraphFieldNumber) {
                              graph_start = start;
                              graph_end = static_cast<std::size_t>(in.CurrentPosition());
                              CodedInputStream length(base + value, 10);
                              std::uint32_t n = 0;
                              length.ReadVarint32(&n);
                              graph_value =
                                  value + static_cast<std::size_t>(length.CurrentPosition());
                            }
                            return true;
                          });
  if (!found || graph_end == 0) {
    throw internal_error("shardpoint: splice() given a model without a graph");
  }
  before_.push_back(model.substr(0, graph_start));
  std::size_t k = 0;
  std::size_t at = graph_value;
  std::size_t value_size = 0;
  if (nodes != nullptr) { // each node's field: tag, length, then its runs
    node_heads_.reserve(nodes->ends.size() * (1 + 5)); // (never grows: the views stay put)
    std::size_t run = 0;
    for (const std::size_t end : nodes->ends) {
      std::size_t length = 0;
      for (std::size_t r = run; r < end; ++r) {
        length += nodes->runs[r].size();
      }
      std::array<std::uint8_t, 6> head{};
      auto* p = CodedOutputStream::WriteTagToArray(
          wfl::MakeTag(::onnx::GraphProto::kNodeFieldNumber, wfl::WIRETYPE_LENGTH_DELIMITED),
          head.data());
      p = CodedOutputStream::WriteVarint32ToArray(static_cast<std::uint32_t>(length), p);
      const auto size = static_cast<std::size_t>(p - head.data());
      const std::size_t from_head = node_heads_.size();
      node_heads_.append(reinterpret_cast<const char*>(head.data()), size);
      nodes_.emplace_back(node_heads_.data() + from_head, size);
      for (; run < end; ++run) {
        nodes_.push_back(nodes->runs[run]);
      }
      value_size += size + length;
    }
  }
  const auto keep = [&](std::string_view piece) {
    after_.push_back(piece);
    value_size += piece.size();
  };
  walk(base + graph_value, graph_end - graph_value,
       [&](int field, wfl::WireType, std::uint32_t tag, std::size_t start, std::size_t,
           CodedInputStream& in) {
         wfl::SkipField(&in, tag);
         const auto end = static_cast<std::size_t>(in.CurrentPosition());
         if (field == ::onnx::GraphProto::kInitializerFieldNumber) {
           if (k < from.size() && from[k] != nullptr) {
             keep(model.substr(at, graph_value + start - at));
             keep(input.substr(from[k]->begin, from[k]->end - from[k]->begin));
             at = graph_value + end;
           }
           ++k;
         }
         return true;
       });
  keep(model.substr(at, graph_end - at));
  if (k != from.size()) {
    throw internal_error("shardpoint: splice() given another number of initializers");
  }
  {
    google::protobuf::io::StringOutputStream s(&prefix_);
    CodedOutputStream out(&s);
    out.WriteTag(
        wfl::MakeTag(::onnx::ModelProto::kGraphFieldNumber, wfl::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint64(value_size);
  }
  after_.push_back(model.substr(graph_end));
  size_ = graph_start + prefix_.size() + value_size + (model.size() - graph_end);
}

void splice::write(CodedOutputStream& out, range_copier* copier) const {
  for (const auto piece : before_) {
    out.WriteRaw(piece.data(), static_cast<int>(piece.size()));
  }
  out.WriteRaw(prefix_.data(), static_cast<int>(prefix_.size()));
  for (const auto piece : nodes_) { // (short runs, written as they are)
    out.WriteRaw(piece.data(), static_cast<int>(piece.size()));
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(input_.data());
  for (const auto piece : after_) {
    const auto at = reinterpret_cast<std::uintptr_t>(piece.data());
    if (copier != nullptr && piece.size() >= range_copier::least && at >= begin &&
        at - begin + piece.size() <= input_.size()) { // a piece of the input
      copier->copy(out, at - begin, at - begin + piece.size());
    } else {
      out.WriteRaw(piece.data(), static_cast<int>(piece.size()));
    }
  }
}

} // namespace shardpoint::onnx::wire
