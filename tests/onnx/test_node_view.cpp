// A node as views into its bytes (onnx_adapter/src/node_view.hpp), held to
// protobuf: what it accepts protobuf parses to the same fields and writes
// back byte for byte; what protobuf writes it accepts unless the node holds
// what it leaves to protobuf.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/synth.hpp>

#include <google/protobuf/util/message_differencer.h>

#include "node_view.hpp"
#include "onnx_support.hpp"
#include "wire.hpp"

namespace sp = shardpoint;
namespace so = shardpoint::onnx;
namespace wire = shardpoint::onnx::wire;
namespace fs = std::filesystem;

namespace {

// What a node view must say of `node` (protobuf's), field by field; the
// splice is where protobuf writes the fields after the attributes, which is
// the size of the node without them.
void check_views(const ::onnx::NodeProto& node, const wire::node_view& v,
                 const std::vector<std::string_view>& names, const wire::node_sharding& s) {
  const auto annotations = onnx_test::node_annotations(node);
  REQUIRE(annotations);
  CHECK(s.device == annotations->first);
  CHECK(s.stage == annotations->second);
  CHECK(v.name() == node.name());
  CHECK(v.op_type() == node.op_type());
  CHECK(v.domain() == node.domain());
  REQUIRE(v.inputs == static_cast<std::uint32_t>(node.input_size()));
  REQUIRE(v.outputs == static_cast<std::uint32_t>(node.output_size()));
  for (int i = 0; i < node.input_size(); ++i) {
    CHECK(names[v.first_input + static_cast<std::uint32_t>(i)] == node.input(i));
  }
  for (int i = 0; i < node.output_size(); ++i) {
    CHECK(names[v.first_input + v.inputs + static_cast<std::uint32_t>(i)] == node.output(i));
  }
  auto head = node;
  head.clear_doc_string();
  head.clear_domain();
  CHECK(v.splice == head.ByteSizeLong());
  // The attribute bytes hold the node's attributes and nothing else.
  ::onnx::NodeProto attributes;
  ::onnx::NodeProto only;
  *only.mutable_attribute() = node.attribute();
  const std::string_view bytes = v.attribute_bytes();
  CHECK(attributes.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  CHECK(attributes.SerializeAsString() == only.SerializeAsString());
}

// Every node of `model`, as protobuf writes it: accepted exactly when it
// holds nothing left to protobuf, and then its views are its fields.
void check_model(const ::onnx::ModelProto& model) {
  std::vector<std::string_view> names;
  for (const auto& node : model.graph().node()) {
    const std::string bytes = node.SerializeAsString();
    wire::node_view v;
    wire::node_sharding s;
    const auto had = names.size();
    const bool accepted = wire::decode_node(bytes, v, names, s);
    CHECK(accepted == !onnx_test::left_to_protobuf(node));
    if (accepted) {
      CHECK(v.first_input == had);
      check_views(node, v, names, s);
    } else {
      CHECK(names.size() == had);
    }
    names.clear(); // (they view `bytes`)
    // Asked to parse what they leave to protobuf: those nodes too, parsed.
    std::unique_ptr<::onnx::NodeProto> parsed;
    const bool taken = wire::decode_node(bytes, v, names, s, parsed);
    CHECK(taken == !onnx_test::views_refuse(node));
    CHECK((parsed != nullptr) == (taken && onnx_test::holds_for_protobuf(node)));
    if (taken) {
      check_views(node, v, names, s);
    }
    if (parsed != nullptr) {
      CHECK(parsed->SerializeAsString() == bytes);
    }
    names.clear();
  }
}

// A node with every field and attribute kind the views read.
::onnx::NodeProto full_node() {
  ::onnx::NodeProto node;
  node.add_input("x");
  node.add_input("");
  node.add_input("w");
  node.add_output("y");
  node.set_name("n");
  node.set_op_type("Op");
  node.set_domain("com.example");
  node.set_doc_string("doc");
  auto* a = node.add_attribute();
  a->set_name("a");
  a->set_type(::onnx::AttributeProto::INTS);
  a->add_ints(-1);
  a->add_ints(300);
  a->set_i(-5);
  a->set_f(1.5F);
  a->add_floats(2.5F);
  a->set_s("s");
  a->add_strings("t");
  a->set_doc_string("d");
  a->set_ref_attr_name("r");
  node.add_attribute()->set_name("b");
  return node;
}

// `bytes` as a node: when the views accept them, protobuf parses them to
// the views' fields and writes them back unchanged; when protobuf refuses
// them, so do the views.
void check_against_protobuf(const std::string& bytes) {
  std::vector<std::string_view> names;
  wire::node_view v;
  wire::node_sharding s;
  const bool accepted = wire::decode_node(bytes, v, names, s);
  ::onnx::NodeProto node;
  const bool parsed = node.ParseFromString(bytes);
  if (!parsed) {
    CHECK_FALSE(accepted);
  }
  if (accepted) {
    REQUIRE(parsed);
    CHECK(node.SerializeAsString() == bytes);
    CHECK_FALSE(onnx_test::left_to_protobuf(node));
    check_views(node, v, names, s);
  } else {
    CHECK(names.empty());
  }
  // Asked to parse what they leave to protobuf: a plain node as above,
  // another only as protobuf writes it back, parsed as protobuf does.
  std::vector<std::string_view> held_names;
  wire::node_view held_v;
  wire::node_sharding held_s;
  std::unique_ptr<::onnx::NodeProto> held;
  const bool taken = wire::decode_node(bytes, held_v, held_names, held_s, held);
  if (accepted) {
    CHECK(taken);
    CHECK(held == nullptr);
    CHECK(held_v == v);
    CHECK(held_names == names);
    CHECK(held_s == s);
  } else if (taken) {
    REQUIRE(parsed);
    REQUIRE(held != nullptr);
    CHECK(node.SerializeAsString() == bytes);
    CHECK(held->SerializeAsString() == bytes);
    CHECK(onnx_test::holds_for_protobuf(node));
    check_views(node, held_v, held_names, held_s);
  } else {
    CHECK(held_names.empty());
  }
}

std::string varint(std::uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) {
    out += static_cast<char>((v & 0x7f) | 0x80);
  }
  return out + static_cast<char>(v);
}

// A length-delimited field.
std::string field(int number, const std::string& value) {
  return varint(static_cast<std::uint64_t>(number) << 3 | 2) + varint(value.size()) + value;
}

// `bytes` with one to three random changes: a byte changed, bytes cut, a
// byte inserted, a run of its own bytes repeated.
std::string corrupted(std::string bytes, std::mt19937& rng) {
  for (int k = 1 + static_cast<int>(rng() % 3); k > 0 && !bytes.empty(); --k) {
    const auto at = rng() % bytes.size();
    switch (rng() % 4) {
    case 0:
      bytes[at] = static_cast<char>(rng());
      break;
    case 1:
      bytes.erase(at, 1 + rng() % 4);
      break;
    case 2:
      bytes.insert(at, 1, static_cast<char>(rng()));
      break;
    default:
      bytes.insert(at, bytes.substr(rng() % bytes.size(), 1 + rng() % 8));
      break;
    }
  }
  return bytes;
}

} // namespace

TEST_CASE("what protobuf writes: every shared model's nodes, generated models") {
  check_model(so::synth_decoder(3));
  check_model(so::synth_resnet50());
  ::onnx::ModelProto made;
  *made.mutable_graph()->add_node() = full_node();
  auto* sharded = made.mutable_graph()->add_node();
  *sharded = full_node();
  sharded->add_attribute()->set_name(so::stage_attribute); // no type: left to protobuf
  // Sharding attributes read_annotations() takes: read by the views.
  for (const auto& [device, stage] : std::vector<std::pair<int, int>>{
           {0, -1}, {-1, 3}, {2, 5}, {sp::max_group_id + 1, 0}, {7, sp::max_group_id}}) {
    auto* node = made.mutable_graph()->add_node();
    *node = full_node();
    so::annotate(*node, device >= 0 ? std::optional<int>(device) : std::nullopt,
                 stage >= 0 ? std::optional<int>(stage) : std::nullopt);
  }
  auto* zero = made.mutable_graph()->add_node(); // an INT without `i`: 0, as protobuf reads it
  *zero = full_node();
  auto* no_value = zero->add_attribute();
  no_value->set_name(so::ipu_attribute);
  no_value->set_type(::onnx::AttributeProto::INT);
  auto* first = made.mutable_graph()->add_node(); // before the other attributes
  *first = full_node();
  so::annotate(*first, 4, 1);
  std::rotate(first->mutable_attribute()->begin(), first->mutable_attribute()->end() - 2,
              first->mutable_attribute()->end());
  auto* tensor = made.mutable_graph()->add_node();
  tensor->set_op_type("Constant");
  tensor->add_attribute()->mutable_t()->add_dims(1);
  // What the views read only as protobuf parses it (asked to): a graph, a
  // type, several tensors, beside plain attributes and sharding ones.
  auto* branch = made.mutable_graph()->add_node();
  *branch = full_node();
  branch->set_op_type("If");
  auto* g = branch->add_attribute();
  g->set_name("then_branch");
  g->set_type(::onnx::AttributeProto::GRAPH);
  g->mutable_g()->add_node()->set_op_type("Identity");
  so::annotate(*branch, 1, 0);
  auto* typed = made.mutable_graph()->add_node();
  auto* tp = typed->add_attribute();
  tp->set_name("type");
  tp->set_type(::onnx::AttributeProto::TYPE_PROTO);
  tp->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
  auto* ts = typed->add_attribute();
  ts->set_name("tensors");
  ts->set_type(::onnx::AttributeProto::TENSORS);
  ts->add_tensors()->set_name("one");
  ts->add_tensors()->set_name("two");
  auto* held_sharded = made.mutable_graph()->add_node(); // and a bad sharding attribute
  *held_sharded = *typed;
  held_sharded->add_attribute()->set_name(so::ipu_attribute);
  check_model(made);
  SKIP_WITHOUT_MODELS();
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() == ".onnx") {
      CAPTURE(entry.path().filename().string());
      check_model(so::read_graph(entry.path()).proto());
    }
  }
}

TEST_CASE("bytes protobuf reads but would write otherwise are refused") {
  const std::string name = field(3, "n");
  const std::string op = field(4, "Op");
  const std::string attribute_name = field(1, "a");
  struct refused {
    const char* what;
    std::string bytes;
    bool rewritten; // whether protobuf writes other bytes (else it is refused by policy)
  };
  const std::vector<refused> cases = {
      {"fields out of order", op + name, true},
      {"a singular field twice", name + name, true},
      {"a length not in its shortest form", std::string("\x1a\x81\x00n", 4) + op, true},
      {"a tag not in its shortest form", std::string("\x9a\x00\x01n", 4) + op, true},
      {"a string field as a varint", std::string("\x18\x01") + op, true},
      {"packed ints", name + field(5, attribute_name + field(8, "\x01\x02")), true},
      {"an int not in its shortest form",
       name + field(5, attribute_name + std::string("\x18\x81\x00", 3)), true},
      {"an attribute type out of the enum",
       name + field(5, attribute_name + "\xa0\x01\x63" + field(21, "r")), true},
      {"an unknown field (at the end, where protobuf keeps it)", name + op + field(15, "x"), false},
      {"a tensor attribute", name + field(5, attribute_name + field(5, "")), false},
      {"a sharding attribute without a type", name + field(5, field(1, so::ipu_attribute)), false},
      {"a sharding attribute of type FLOAT",
       name + field(5, field(1, so::ipu_attribute) + "\x18\x01\xa0\x01\x01"), false},
      {"a sharding attribute past the largest group",
       name + field(5, field(1, so::stage_attribute) + "\x18\x81\x80\x04\xa0\x01\x02"), false},
      {"a negative sharding attribute",
       name + field(5, field(1, so::stage_attribute) + "\x18" + std::string(9, '\xff') +
                           "\x01\xa0\x01\x02"),
       false},
      {"a sharding attribute twice",
       name + field(5, field(1, so::ipu_attribute) + "\x18\x01\xa0\x01\x02") +
           field(5, field(1, so::ipu_attribute) + "\x18\x02\xa0\x01\x02"),
       false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    ::onnx::NodeProto node;
    REQUIRE(node.ParseFromString(c.bytes)); // protobuf reads it ...
    std::vector<std::string_view> names;
    wire::node_view v;
    wire::node_sharding s;
    CHECK_FALSE(wire::decode_node(c.bytes, v, names, s)); // ... the views do not
    CHECK(names.empty());
    CHECK((node.SerializeAsString() != c.bytes) == c.rewritten);
    // Asked to parse a tensor attribute, they take that one alone.
    std::unique_ptr<::onnx::NodeProto> parsed;
    const bool tensor = std::string_view(c.what) == "a tensor attribute";
    CHECK(wire::decode_node(c.bytes, v, names, s, parsed) == tensor);
    CHECK((parsed != nullptr) == tensor);
    names.clear();
  }
  // A tensor attribute protobuf would write otherwise: refused, parsed or not.
  for (const std::string& tensor : {field(8, "t") + "\x08\x01", std::string("\x08\x81\x00", 3)}) {
    CAPTURE(tensor);
    const std::string bytes = name + field(5, attribute_name + field(5, tensor));
    ::onnx::NodeProto node;
    REQUIRE(node.ParseFromString(bytes));
    CHECK(node.SerializeAsString() != bytes);
    std::vector<std::string_view> names;
    wire::node_view v;
    wire::node_sharding s;
    std::unique_ptr<::onnx::NodeProto> parsed;
    CHECK_FALSE(wire::decode_node(bytes, v, names, s, parsed));
    CHECK(parsed == nullptr);
    CHECK(names.empty());
  }
  // And what protobuf refuses.
  for (const std::string& bytes : {std::string("\x1a\x05n", 3), std::string("\x1a", 1),
                                   std::string("\x02\x00", 2), std::string("\x0b", 1)}) {
    check_against_protobuf(bytes);
  }
}

TEST_CASE("random corruptions: accepted only as protobuf reads and writes them") {
  auto sharded = full_node();
  so::annotate(sharded, 1, 2);
  auto constant = full_node(); // one the views take only parsed (when asked to)
  auto* value = constant.add_attribute();
  value->set_name("value");
  value->set_type(::onnx::AttributeProto::TENSOR);
  value->mutable_t()->add_dims(2);
  value->mutable_t()->set_data_type(1);
  value->mutable_t()->set_raw_data(std::string(8, '\x01'));
  std::vector<std::string> seeds = {full_node().SerializeAsString(), sharded.SerializeAsString(),
                                    constant.SerializeAsString()};
  const auto decoder = so::synth_decoder(1);
  for (const auto& node : decoder.graph().node()) {
    seeds.push_back(node.SerializeAsString());
  }
  std::mt19937 rng(7);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string bytes = corrupted(seeds[rng() % seeds.size()], rng);
    CAPTURE(round);
    std::vector<std::string_view> names;
    wire::node_view v;
    wire::node_sharding s;
    accepted += wire::decode_node(bytes, v, names, s) ? 1 : 0;
    check_against_protobuf(bytes);
  }
  // The corruptions reach both sides of the rule.
  CHECK(accepted > 100);
  CHECK(accepted < 19900);
}

// ---- initializers (decode_tensor) -------------------------------------------

namespace {

// What an initializer holds that the views leave to protobuf.
bool tensor_left_to_protobuf(const ::onnx::TensorProto& t) {
  return t.has_segment() || t.external_data_size() > 0 || t.has_data_location() ||
         !t.unknown_fields().empty();
}

// The bytes of `t`'s data fields longer than `kept`, as protobuf writes them
// (each packed field once): what the scan leaves out of a skeleton.
std::size_t left_out(const ::onnx::TensorProto& t, std::size_t kept) {
  using google::protobuf::io::CodedOutputStream;
  std::size_t sum = 0;
  const auto add = [&](std::size_t n) { sum += n > kept ? n : 0; };
  add(4 * static_cast<std::size_t>(t.float_data_size()));
  add(8 * static_cast<std::size_t>(t.double_data_size()));
  std::size_t n = 0;
  for (const auto v : t.int32_data()) {
    n += CodedOutputStream::VarintSize32SignExtended(v);
  }
  add(n);
  n = 0;
  for (const auto v : t.int64_data()) {
    n += CodedOutputStream::VarintSize64(static_cast<std::uint64_t>(v));
  }
  add(n);
  n = 0;
  for (const auto v : t.uint64_data()) {
    n += CodedOutputStream::VarintSize64(v);
  }
  add(n);
  for (const auto& s : t.string_data()) {
    add(s.size());
  }
  add(t.raw_data().size());
  return sum;
}

// `t` as protobuf writes it: accepted exactly when it holds nothing left to
// protobuf, with its name and the bytes left out.
void check_tensor(const ::onnx::TensorProto& t, std::size_t kept) {
  const std::string bytes = t.SerializeAsString();
  wire::tensor_view v;
  const bool accepted = wire::decode_tensor(bytes, kept, v);
  CHECK(accepted == !tensor_left_to_protobuf(t));
  if (accepted) {
    CHECK(v.name == t.name());
    CHECK(v.left_out == left_out(t, kept));
  }
}

void check_tensors(const ::onnx::ModelProto& model) {
  for (const std::size_t kept : {std::size_t{0}, std::size_t{16}, wire::kept_data_bytes}) {
    CAPTURE(kept);
    for (const auto& t : model.graph().initializer()) {
      check_tensor(t, kept);
    }
  }
}

// A tensor with every field the views read, each data field holding values.
::onnx::TensorProto full_tensor() {
  ::onnx::TensorProto t;
  t.add_dims(2);
  t.add_dims(-3);
  t.set_data_type(-1);
  t.add_float_data(1.5F);
  t.add_int32_data(-7);
  t.add_int32_data(300);
  t.add_string_data("s");
  t.add_string_data(std::string(40, 'x'));
  t.add_int64_data(-1);
  t.set_name("w");
  t.set_raw_data(std::string(20, '\x01'));
  t.add_double_data(2.5);
  t.add_uint64_data(~std::uint64_t{0});
  t.set_doc_string("doc");
  return t;
}

// `bytes` as an initializer: when the views accept them, protobuf parses
// them, with the views' name, and no more bytes are left out than there are.
void check_tensor_against_protobuf(const std::string& bytes) {
  wire::tensor_view v;
  const bool accepted = wire::decode_tensor(bytes, 8, v);
  ::onnx::TensorProto t;
  const bool parsed = t.ParseFromString(bytes);
  if (accepted) {
    REQUIRE(parsed);
    CHECK(v.name == t.name());
    CHECK(v.left_out <= bytes.size());
    CHECK_FALSE(tensor_left_to_protobuf(t));
  }
}

} // namespace

TEST_CASE("initializers as protobuf writes them: names and the bytes left out") {
  check_tensors(so::synth_decoder(3, 8));
  check_tensors(so::synth_resnet50());
  ::onnx::ModelProto made;
  auto& g = *made.mutable_graph();
  *g.add_initializer() = full_tensor();
  g.add_initializer()->set_name(""); // empty: a name of no bytes
  auto* external = g.add_initializer();
  *external = full_tensor();
  external->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = g.add_initializer();
  location->set_name("x");
  auto* entry = location->add_external_data();
  entry->set_key("location");
  entry->set_value("x.bin");
  g.add_initializer()->mutable_segment()->set_begin(1);
  check_tensors(made);
  SKIP_WITHOUT_MODELS();
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() == ".onnx") {
      CAPTURE(entry.path().filename().string());
      check_tensors(so::read_model(entry.path()).proto()); // (with all their data)
    }
  }
}

TEST_CASE("initializer bytes protobuf reads but the views leave to it are refused") {
  const std::string name = field(8, "w");
  const std::string raw = field(9, "abcd");
  struct refused {
    const char* what;
    std::string bytes;
  };
  const std::vector<refused> cases = {
      {"fields out of order", raw + name},
      {"the name twice", name + name},
      {"raw_data twice", raw + raw},
      {"a length not in its shortest form", std::string("\x42\x81\x00w", 4)},
      {"a tag not in its shortest form", std::string("\xc2\x00\x01w", 4)},
      {"a dimension not in its shortest form", std::string("\x08\x81\x00", 3) + name},
      {"packed dimensions", field(1, "\x01\x02") + name},
      {"unpacked float data", std::string("\x25\x00\x00\x80\x3f", 5) + name},
      {"float data of a length not a multiple of 4", field(4, "\x01\x02\x03\x04\x05") + name},
      {"double data of a length not a multiple of 8", field(10, "\x01\x02\x03\x04") + name},
      {"a truncated packed varint", field(7, "\x01\x81") + name},
      {"a segment", field(3, "") + name},
      {"external data", name + field(13, field(1, "location"))},
      {"a data location", name + std::string("\x70\x01", 2)},
      {"an unknown field", name + field(20, "x")},
  };
  for (const auto& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    wire::tensor_view v;
    CHECK_FALSE(wire::decode_tensor(c.bytes, 0, v));
    check_tensor_against_protobuf(c.bytes);
  }
  // What the views accept: an empty tensor, and the full one.
  wire::tensor_view v;
  CHECK(wire::decode_tensor("", 0, v));
  CHECK(v.name.empty());
  const std::string named = name + raw; // (the views view it)
  CHECK(wire::decode_tensor(named, 3, v));
  CHECK(v.name == "w");
  CHECK(v.left_out == 4);
}

TEST_CASE("initializers, random corruptions: accepted only as protobuf reads them") {
  std::vector<std::string> seeds = {full_tensor().SerializeAsString()};
  const auto decoder = so::synth_decoder(1, 8);
  for (const auto& t : decoder.graph().initializer()) {
    seeds.push_back(t.SerializeAsString());
  }
  std::mt19937 rng(11);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string bytes = corrupted(seeds[rng() % seeds.size()], rng);
    CAPTURE(round);
    wire::tensor_view v;
    accepted += wire::decode_tensor(bytes, 8, v) ? 1 : 0;
    check_tensor_against_protobuf(bytes);
  }
  CHECK(accepted > 100); // the corruptions reach both sides of the rule
  CHECK(accepted < 19900);
}

TEST_CASE("initializers read as views by the scan: the parse's names, left-out bytes, skeleton") {
  std::vector<std::string> inputs = {so::synth_decoder(3, 8).SerializeAsString(),
                                     so::synth_resnet50().SerializeAsString()};
  auto external = so::synth_decoder(1, 8); // one initializer with external data: all parsed
  auto* entry = external.mutable_graph()->mutable_initializer(0)->add_external_data();
  entry->set_key("location");
  entry->set_value("w.bin");
  inputs.push_back(external.SerializeAsString());
  if (!onnx_test::models_dir().empty()) {
    for (const auto& e : fs::directory_iterator(onnx_test::models_dir())) {
      if (e.path().extension() == ".onnx") {
        inputs.push_back(onnx_test::read_file(e.path()));
      }
    }
  }
  int as_views = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    CAPTURE(k);
    const std::string& input = inputs[k];
    for (const std::size_t kept : {std::size_t{16}, wire::kept_data_bytes}) {
      CAPTURE(kept);
      ::onnx::ModelProto parsed;
      const auto plain = wire::scan(input, parsed, kept);
      REQUIRE(plain);
      ::onnx::ModelProto skeleton;
      wire::node_views views;
      const auto where = wire::scan(input, skeleton, kept, &views);
      REQUIRE(where);
      // Exactly when every node is plain and every initializer too.
      const auto& g = parsed.graph();
      const bool nodes_plain = views.size() != 0;
      const bool tensors_plain =
          std::none_of(g.initializer().begin(), g.initializer().end(),
                       [](const auto& t) { return tensor_left_to_protobuf(t); });
      CHECK(views.initializers_as_views == (nodes_plain && tensors_plain));
      CHECK(where->stripped == plain->stripped);
      CHECK(where->stripped_bytes == plain->stripped_bytes);
      if (views.initializers_as_views) {
        ++as_views;
        CHECK(skeleton.graph().initializer_size() == 0);
        REQUIRE(views.initializers.size() == static_cast<std::size_t>(g.initializer_size()));
        for (int i = 0; i < g.initializer_size(); ++i) {
          CHECK(views.initializers[static_cast<std::size_t>(i)] == g.initializer(i).name());
        }
      } else {
        CHECK(views.initializers.empty());
        CHECK(where->initializer_values.empty());
      }
      // Parsed on demand: the skeleton the scan without views gives.
      if (nodes_plain) {
        REQUIRE(wire::parse_views(input, *where, *skeleton.mutable_graph()));
      }
      CHECK(google::protobuf::util::MessageDifferencer::Equals(skeleton, parsed));
    }
  }
  CHECK(as_views >= 4); // the decoder and ResNet-50, with both `kept`s
}
