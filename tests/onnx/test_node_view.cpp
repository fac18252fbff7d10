// A node as views into its bytes (onnx_adapter/src/node_view.hpp), held to
// protobuf: what it accepts protobuf parses to the same fields and writes
// back byte for byte; what protobuf writes it accepts unless the node holds
// what it leaves to protobuf.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/synth.hpp>

#include "node_view.hpp"
#include "onnx_support.hpp"

namespace so = shardpoint::onnx;
namespace wire = shardpoint::onnx::wire;
namespace fs = std::filesystem;

namespace {

// What a node view must say of `node` (protobuf's), field by field; the
// splice is where protobuf writes the fields after the attributes, which is
// the size of the node without them.
void check_views(const ::onnx::NodeProto& node, const wire::node_view& v,
                 const std::vector<std::string_view>& names) {
  CHECK(v.name == node.name());
  CHECK(v.op_type == node.op_type());
  CHECK(v.domain == node.domain());
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
}

// Every node of `model`, as protobuf writes it: accepted exactly when it
// holds nothing left to protobuf, and then its views are its fields.
void check_model(const ::onnx::ModelProto& model) {
  std::vector<std::string_view> names;
  for (const auto& node : model.graph().node()) {
    const std::string bytes = node.SerializeAsString();
    wire::node_view v;
    const auto had = names.size();
    const bool accepted = wire::decode_node(bytes, v, names);
    CHECK(accepted == !onnx_test::left_to_protobuf(node));
    if (accepted) {
      CHECK(v.first_input == had);
      check_views(node, v, names);
    } else {
      CHECK(names.size() == had);
    }
    names.clear(); // (they view `bytes`)
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
  const bool accepted = wire::decode_node(bytes, v, names);
  ::onnx::NodeProto node;
  const bool parsed = node.ParseFromString(bytes);
  if (!parsed) {
    CHECK_FALSE(accepted);
  }
  if (accepted) {
    REQUIRE(parsed);
    CHECK(node.SerializeAsString() == bytes);
    CHECK_FALSE(onnx_test::left_to_protobuf(node));
    check_views(node, v, names);
  } else {
    CHECK(names.empty());
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

} // namespace

TEST_CASE("what protobuf writes: every shared model's nodes, generated models") {
  check_model(so::synth_decoder(3));
  check_model(so::synth_resnet50());
  ::onnx::ModelProto made;
  *made.mutable_graph()->add_node() = full_node();
  auto* sharded = made.mutable_graph()->add_node();
  *sharded = full_node();
  sharded->add_attribute()->set_name(so::stage_attribute);
  auto* tensor = made.mutable_graph()->add_node();
  tensor->set_op_type("Constant");
  tensor->add_attribute()->mutable_t()->add_dims(1);
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
      {"a sharding attribute", name + field(5, field(1, so::ipu_attribute)), false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    ::onnx::NodeProto node;
    REQUIRE(node.ParseFromString(c.bytes)); // protobuf reads it ...
    std::vector<std::string_view> names;
    wire::node_view v;
    CHECK_FALSE(wire::decode_node(c.bytes, v, names)); // ... the views do not
    CHECK(names.empty());
    CHECK((node.SerializeAsString() != c.bytes) == c.rewritten);
  }
  // And what protobuf refuses.
  for (const std::string& bytes : {std::string("\x1a\x05n", 3), std::string("\x1a", 1),
                                   std::string("\x02\x00", 2), std::string("\x0b", 1)}) {
    check_against_protobuf(bytes);
  }
}

TEST_CASE("random corruptions: accepted only as protobuf reads and writes them") {
  std::vector<std::string> seeds = {full_node().SerializeAsString()};
  const auto decoder = so::synth_decoder(1);
  for (const auto& node : decoder.graph().node()) {
    seeds.push_back(node.SerializeAsString());
  }
  std::mt19937 rng(7);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = seeds[rng() % seeds.size()];
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
      default: // a run of the node repeated
        bytes.insert(at, bytes.substr(rng() % bytes.size(), 1 + rng() % 8));
        break;
      }
    }
    CAPTURE(round);
    std::vector<std::string_view> names;
    wire::node_view v;
    accepted += wire::decode_node(bytes, v, names) ? 1 : 0;
    check_against_protobuf(bytes);
  }
  // The corruptions reach both sides of the rule.
  CHECK(accepted > 100);
  CHECK(accepted < 19900);
}
