// A top-level node as views into the input: see node_view.hpp.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <array>
#include <climits>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <shardpoint/onnx/model.hpp>
#include <shardpoint/sharding_point.hpp>

#include "node_view.hpp"

namespace shardpoint::onnx::wire {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using wfl = google::protobuf::internal::WireFormatLite;

// One message's fields, read in order with the checks every field shares:
// each tag and varint shortest, fields in ascending order, a singular field
// at most once.
class fields {
public:
  explicit fields(std::string_view bytes)
      : base_(reinterpret_cast<const std::uint8_t*>(bytes.data())), size_(bytes.size()),
        in_(base_, static_cast<int>(bytes.size())) {}

  /// Reads the next field's tag; false at the end (`done()` tells the end
  /// from a bad tag) or when the order is broken (`singular_last`: whether
  /// the field before it may not repeat).
  bool next(bool singular_last) {
    start_ = position();
    if (start_ == size_) {
      done_ = true;
      return false;
    }
    const std::uint32_t tag = in_.ReadTag();
    if (tag == 0 || !shortest(start_, tag)) {
      return false;
    }
    const int field = wfl::GetTagFieldNumber(tag);
    if (field < 1 || field < last_ || (field == last_ && singular_last)) {
      return false;
    }
    last_ = field;
    type_ = wfl::GetTagWireType(tag);
    return true;
  }
  [[nodiscard]] bool done() const { return done_; }
  [[nodiscard]] int field() const { return last_; }
  [[nodiscard]] wfl::WireType type() const { return type_; }
  [[nodiscard]] std::size_t start() const { return start_; } ///< of the field's tag

  /// A length-delimited value.
  bool bytes(std::string_view& out) {
    const std::size_t at = position();
    int n = 0;
    if (type_ != wfl::WIRETYPE_LENGTH_DELIMITED || !in_.ReadVarintSizeAsInt(&n) || n < 0 ||
        !shortest(at, static_cast<std::uint64_t>(n))) {
      return false;
    }
    const std::size_t value = position();
    if (static_cast<std::size_t>(n) > size_ - value || !in_.Skip(n)) {
      return false;
    }
    out = {reinterpret_cast<const char*>(base_ + value), static_cast<std::size_t>(n)};
    return true;
  }
  /// A varint value.
  bool varint(std::uint64_t& out) {
    const std::size_t at = position();
    return type_ == wfl::WIRETYPE_VARINT && in_.ReadVarint64(&out) && shortest(at, out);
  }
  bool fixed32() {
    std::uint32_t ignored = 0;
    return type_ == wfl::WIRETYPE_FIXED32 && in_.ReadLittleEndian32(&ignored);
  }

private:
  [[nodiscard]] std::size_t position() const {
    return static_cast<std::size_t>(in_.CurrentPosition());
  }
  // Whether the bytes from `at` to here are the shortest encoding of `v`,
  // the one protobuf writes.
  [[nodiscard]] bool shortest(std::size_t at, std::uint64_t v) const {
    if (position() - at == 1) { // (most: one byte is always the shortest)
      return true;
    }
    std::array<std::uint8_t, 10> buffer{};
    const auto* end = CodedOutputStream::WriteVarint64ToArray(v, buffer.data());
    const auto n = static_cast<std::size_t>(end - buffer.data());
    return n == position() - at && std::memcmp(buffer.data(), base_ + at, n) == 0;
  }

  const std::uint8_t* base_;
  std::size_t size_;
  CodedInputStream in_;
  std::size_t start_ = 0;
  int last_ = 0;
  wfl::WireType type_ = wfl::WIRETYPE_VARINT;
  bool done_ = false;
};

bool is_singular_attribute_field(int field) {
  switch (field) {
  case ::onnx::AttributeProto::kFloatsFieldNumber:
  case ::onnx::AttributeProto::kIntsFieldNumber:
  case ::onnx::AttributeProto::kStringsFieldNumber:
  case ::onnx::AttributeProto::kTensorsFieldNumber:
  case ::onnx::AttributeProto::kGraphsFieldNumber:
  case ::onnx::AttributeProto::kTypeProtosFieldNumber:
  case ::onnx::AttributeProto::kSparseTensorsFieldNumber:
    return false;
  default:
    return true;
  }
}

// Whether an attribute's field `field` holds a tensor, a graph or a type:
// what protobuf reads for the views (node_view.hpp).
bool is_held_attribute_field(int field) {
  switch (field) {
  case ::onnx::AttributeProto::kTFieldNumber:
  case ::onnx::AttributeProto::kGFieldNumber:
  case ::onnx::AttributeProto::kTensorsFieldNumber:
  case ::onnx::AttributeProto::kGraphsFieldNumber:
  case ::onnx::AttributeProto::kTpFieldNumber:
  case ::onnx::AttributeProto::kTypeProtosFieldNumber:
  case ::onnx::AttributeProto::kSparseTensorFieldNumber:
  case ::onnx::AttributeProto::kSparseTensorsFieldNumber:
    return true;
  default:
    return false;
  }
}

// An attribute of the kinds a plain node holds (node_view.hpp); a sharding
// attribute's value into `sharding`. With `held`, also one holding a
// tensor, a graph or a type, whose bytes are left to protobuf: `*held` is
// then set.
bool plain_attribute(std::string_view bytes, node_sharding& sharding, bool* held) {
  fields f(bytes);
  int previous = 0;
  std::string_view name;
  std::uint64_t i = 0;    // (absent: 0, as protobuf reads it)
  std::uint64_t type = 0; // (absent: UNDEFINED)
  while (f.next(is_singular_attribute_field(previous))) {
    previous = f.field();
    std::string_view s;
    std::uint64_t v = 0;
    bool ok = false;
    switch (f.field()) {
    case ::onnx::AttributeProto::kNameFieldNumber:
      ok = f.bytes(name);
      break;
    case ::onnx::AttributeProto::kSFieldNumber:
    case ::onnx::AttributeProto::kStringsFieldNumber:
    case ::onnx::AttributeProto::kDocStringFieldNumber:
    case ::onnx::AttributeProto::kRefAttrNameFieldNumber:
      ok = f.bytes(s);
      break;
    case ::onnx::AttributeProto::kFFieldNumber:
    case ::onnx::AttributeProto::kFloatsFieldNumber:
      ok = f.fixed32();
      break;
    case ::onnx::AttributeProto::kIFieldNumber:
      ok = f.varint(i);
      break;
    case ::onnx::AttributeProto::kIntsFieldNumber:
      ok = f.varint(v);
      break;
    case ::onnx::AttributeProto::kTypeFieldNumber:
      ok = f.varint(type) && type <= INT_MAX &&
           ::onnx::AttributeProto_AttributeType_IsValid(static_cast<int>(type));
      break;
    default: // a tensor, graph, type or sparse tensor, or an unknown field
      if (held == nullptr || !is_held_attribute_field(f.field()) || !f.bytes(s)) {
        return false;
      }
      *held = true; // (its bytes are protobuf's to check)
      ok = true;
      break;
    }
    if (!ok) {
      return false;
    }
  }
  if (!f.done()) {
    return false;
  }
  const bool ipu = name == ipu_attribute;
  if (!ipu && name != stage_attribute) {
    return true;
  }
  // As read_annotations() takes it; what it throws on is left to it. (A
  // negative INT is a 10-byte varint: above the bound as unsigned.)
  std::int32_t& slot = ipu ? sharding.device : sharding.stage;
  if (type != ::onnx::AttributeProto::INT || i > static_cast<std::uint64_t>(max_group_id) + 1 ||
      slot != -1) {
    return false;
  }
  slot = static_cast<std::int32_t>(i);
  return true;
}

bool is_singular_node_field(int field) {
  return field != ::onnx::NodeProto::kInputFieldNumber &&
         field != ::onnx::NodeProto::kOutputFieldNumber &&
         field != ::onnx::NodeProto::kAttributeFieldNumber;
}

bool is_singular_tensor_field(int field) {
  return field == ::onnx::TensorProto::kDataTypeFieldNumber ||
         field == ::onnx::TensorProto::kNameFieldNumber ||
         field == ::onnx::TensorProto::kRawDataFieldNumber ||
         field == ::onnx::TensorProto::kDocStringFieldNumber;
}

} // namespace

bool is_data_field(int field) {
  switch (field) {
  case ::onnx::TensorProto::kFloatDataFieldNumber:
  case ::onnx::TensorProto::kInt32DataFieldNumber:
  case ::onnx::TensorProto::kStringDataFieldNumber:
  case ::onnx::TensorProto::kInt64DataFieldNumber:
  case ::onnx::TensorProto::kRawDataFieldNumber:
  case ::onnx::TensorProto::kDoubleDataFieldNumber:
  case ::onnx::TensorProto::kUint64DataFieldNumber:
    return true;
  default:
    return false;
  }
}

bool data_readable(int field, const std::uint8_t* value, std::size_t length) {
  switch (field) {
  case ::onnx::TensorProto::kFloatDataFieldNumber:
    return length % 4 == 0;
  case ::onnx::TensorProto::kDoubleDataFieldNumber:
    return length % 8 == 0;
  case ::onnx::TensorProto::kInt32DataFieldNumber:
  case ::onnx::TensorProto::kInt64DataFieldNumber:
  case ::onnx::TensorProto::kUint64DataFieldNumber: {
    CodedInputStream in(value, static_cast<int>(length));
    std::uint64_t v = 0;
    while (static_cast<std::size_t>(in.CurrentPosition()) < length) {
      if (!in.ReadVarint64(&v)) {
        return false;
      }
    }
    return true;
  }
  default: // raw_data, string_data: any bytes
    return true;
  }
}

bool decode_tensor(std::string_view value, std::size_t kept, tensor_view& out) {
  if (value.size() > static_cast<std::size_t>(INT_MAX)) {
    return false;
  }
  tensor_view tensor;
  fields f(value);
  int previous = 0;
  while (f.next(is_singular_tensor_field(previous))) {
    previous = f.field();
    std::string_view s;
    std::uint64_t v = 0;
    switch (f.field()) {
    case ::onnx::TensorProto::kDimsFieldNumber:
    case ::onnx::TensorProto::kDataTypeFieldNumber:
      if (!f.varint(v)) {
        return false;
      }
      break;
    case ::onnx::TensorProto::kNameFieldNumber:
      if (!f.bytes(tensor.name)) {
        return false;
      }
      break;
    case ::onnx::TensorProto::kDocStringFieldNumber:
      if (!f.bytes(s)) {
        return false;
      }
      break;
    default: // the data, or a segment, external data, a data location, an unknown field
      if (!is_data_field(f.field()) || !f.bytes(s) ||
          !data_readable(f.field(), reinterpret_cast<const std::uint8_t*>(s.data()), s.size())) {
        return false;
      }
      if (s.size() > kept) {
        tensor.left_out += s.size();
      }
      break;
    }
  }
  if (!f.done()) {
    return false;
  }
  out = tensor;
  return true;
}

namespace {

// decode_node(); with `held`, a node with attributes holding a tensor, a
// graph or a type is accepted too (`*held` set), its bytes checked by the
// caller.
bool decode(std::string_view value, node_view& out, std::vector<std::string_view>& names,
            node_sharding& sharding, bool* held) {
  const std::size_t had = names.size();
  const auto refuse = [&] {
    names.resize(had);
    return false;
  };
  if (value.size() > static_cast<std::size_t>(INT_MAX) || had > UINT32_MAX) {
    return refuse();
  }
  node_view node;
  node.value = value.data();
  node_sharding marks;
  node.first_input = static_cast<std::uint32_t>(had);
  node.splice = static_cast<std::uint32_t>(value.size());
  bool spliced = false;
  std::size_t attributes = value.size(); // where the first field numbered 5 or above starts
  fields f(value);
  int previous = 0;
  while (f.next(is_singular_node_field(previous))) {
    previous = f.field();
    if (attributes == value.size() && f.field() >= ::onnx::NodeProto::kAttributeFieldNumber) {
      attributes = f.start();
    }
    if (!spliced && f.field() > ::onnx::NodeProto::kAttributeFieldNumber) {
      node.splice = static_cast<std::uint32_t>(f.start());
      spliced = true;
    }
    std::string_view s;
    if (!f.bytes(s)) {
      return refuse();
    }
    switch (f.field()) {
    case ::onnx::NodeProto::kInputFieldNumber:
      names.push_back(s);
      ++node.inputs;
      break;
    case ::onnx::NodeProto::kOutputFieldNumber:
      names.push_back(s);
      ++node.outputs;
      break;
    case ::onnx::NodeProto::kNameFieldNumber:
      node.name_at = static_cast<std::uint32_t>(s.data() - value.data());
      node.name_size = static_cast<std::uint32_t>(s.size());
      break;
    case ::onnx::NodeProto::kOpTypeFieldNumber:
      node.op_type_at = static_cast<std::uint32_t>(s.data() - value.data());
      node.op_type_size = static_cast<std::uint32_t>(s.size());
      break;
    case ::onnx::NodeProto::kDomainFieldNumber:
      node.domain_at = static_cast<std::uint32_t>(s.data() - value.data());
      node.domain_size = static_cast<std::uint32_t>(s.size());
      break;
    case ::onnx::NodeProto::kAttributeFieldNumber:
      if (!plain_attribute(s, marks, held)) {
        return refuse();
      }
      break;
    case ::onnx::NodeProto::kDocStringFieldNumber:
      break;
    default: // an unknown field
      return refuse();
    }
  }
  if (!f.done() || names.size() > UINT32_MAX) {
    return refuse();
  }
  node.attributes_at = static_cast<std::uint32_t>(attributes); // (<= splice)
  out = node;
  sharding = marks;
  return true;
}

} // namespace

bool decode_node(std::string_view value, node_view& out, std::vector<std::string_view>& names,
                 node_sharding& sharding) {
  return decode(value, out, names, sharding, nullptr);
}

void node_runs_of(std::string_view value, const node_view& node, bool drop_sharding,
                  std::vector<std::string_view>& runs) {
  if (!drop_sharding) {
    runs.push_back(value);
    return;
  }
  // The attribute fields, [attributes_at, splice): each a tag, a length and
  // an attribute whose name, where it has one, is its first field.
  const auto* base = reinterpret_cast<const std::uint8_t*>(value.data());
  CodedInputStream in(base + node.attributes_at,
                      static_cast<int>(node.splice - node.attributes_at));
  std::size_t kept = 0; // where the run being kept began
  for (;;) {
    const std::size_t start = node.attributes_at + static_cast<std::size_t>(in.CurrentPosition());
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {
      break;
    }
    std::uint32_t length = 0;
    in.ReadVarint32(&length);
    const std::size_t body = node.attributes_at + static_cast<std::size_t>(in.CurrentPosition());
    in.Skip(static_cast<int>(length));
    std::string_view name;
    CodedInputStream attribute(base + body, static_cast<int>(length));
    std::uint32_t name_size = 0;
    if (attribute.ReadTag() == wfl::MakeTag(::onnx::AttributeProto::kNameFieldNumber,
                                            wfl::WIRETYPE_LENGTH_DELIMITED) &&
        attribute.ReadVarint32(&name_size)) {
      name = value.substr(body + static_cast<std::size_t>(attribute.CurrentPosition()), name_size);
    }
    if (name == ipu_attribute || name == stage_attribute) {
      runs.push_back(value.substr(kept, start - kept));
      kept = body + length;
    }
  }
  runs.push_back(value.substr(kept));
}

bool decode_node(std::string_view value, node_view& out, std::vector<std::string_view>& names,
                 node_sharding& sharding, std::unique_ptr<::onnx::NodeProto>& parsed) {
  const std::size_t had = names.size();
  bool held = false;
  node_view node;
  node_sharding marks;
  if (!decode(value, node, names, marks, &held)) {
    return false;
  }
  if (held) { // protobuf's bytes, or not a view
    auto message = std::make_unique<::onnx::NodeProto>();
    CodedInputStream in(reinterpret_cast<const std::uint8_t*>(value.data()),
                        static_cast<int>(value.size()));
    in.SetRecursionLimit(node_recursion_budget);
    if (!message->MergePartialFromCodedStream(&in) || !in.ConsumedEntireMessage() ||
        message->ByteSizeLong() != value.size() || message->SerializeAsString() != value) {
      names.resize(had);
      return false;
    }
    parsed = std::move(message);
  }
  out = node;
  sharding = marks;
  return true;
}

} // namespace shardpoint::onnx::wire
