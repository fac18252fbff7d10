// Shape inference node by node (src/infer.hpp) against libonnx's InferShapes
// on the same model: every top-level name gets the same type, or none, on
// every shared model, generated decoders and ResNet-50, and models built
// here for each rule of the procedure (undefined values, Constant data,
// unknown operators, inference errors, what ends inference, ir_version 3,
// fresh symbols).
#include <map>
#include <new>
#include <optional>
#include <set>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <shardpoint/onnx/costs.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/memory.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/report.hpp>
#include <shardpoint/onnx/synth.hpp>

#include "infer.hpp"
#include "node_view.hpp"
#include "onnx_support.hpp"
#include "shapes.hpp"

namespace sp = shardpoint::onnx;
namespace fs = std::filesystem;

namespace {

using types = std::map<std::string, std::string>; // name -> serialised TypeProto

// The reference: InferShapes on a copy, read as inferred_shapes reads it.
types reference(::onnx::ModelProto m) {
  try {
    ::onnx::shape_inference::InferShapes(m, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(false, 0, false));
  } catch (const std::exception&) {
    // partial shapes, as inferred_shapes takes them
  }
  types out;
  const auto note = [&](const ::onnx::ValueInfoProto& v) {
    if (v.has_type()) {
      out[v.name()] = v.type().SerializeAsString();
    }
  };
  const auto& g = m.graph();
  std::for_each(g.input().begin(), g.input().end(), note);
  std::for_each(g.value_info().begin(), g.value_info().end(), note);
  std::for_each(g.output().begin(), g.output().end(), note);
  for (const auto& t : g.initializer()) {
    ::onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto& shape = *type.mutable_tensor_type()->mutable_shape();
    for (const auto d : t.dims()) {
      shape.add_dim()->set_dim_value(d);
    }
    out[t.name()] = type.SerializeAsString();
  }
  return out;
}

// The types of every node's inputs and outputs by the node's position,
// against find() of their names: how many differ.
template <class Inferred>
std::size_t by_position_differs(const ::onnx::GraphProto& g, const Inferred& inferred) {
  std::size_t differ = 0;
  for (int v = 0; v < g.node_size(); ++v) {
    const auto& n = g.node(v);
    const auto at = static_cast<std::size_t>(v);
    for (int i = 0; i < n.input_size(); ++i) {
      differ += inferred.input_type(at, static_cast<std::size_t>(i)) != inferred.find(n.input(i));
    }
    for (int j = 0; j < n.output_size(); ++j) {
      differ += inferred.output_type(at, static_cast<std::size_t>(j)) != inferred.find(n.output(j));
    }
  }
  return differ;
}

// How many models node_inference ran on as views (check_views).
std::size_t views_checked = 0;

// node_inference on `m` read as views (node_reading::views_with_initializers),
// where its nodes are plain: the same types as `inferred`, on `m` parsed,
// by name and by node position. A view's attributes are keyed by their
// bytes and parsed only where a function runs.
void check_views(const ::onnx::ModelProto& m, const sp::shapes::node_inference& inferred,
                 const std::set<std::string>& names) {
  const std::string bytes = m.SerializeAsString();
  std::optional<sp::loaded_model> read;
  try {
    read.emplace(sp::parse_graph(bytes, "<bytes>", sp::node_reading::views_with_initializers));
  } catch (const sp::input_error&) {
    return; // a model no command reads (built here for one rule)
  }
  auto& loaded = *read;
  if (loaded.node_views() == nullptr) {
    return; // a node the views leave to protobuf
  }
  ++views_checked;
  const auto views =
      sp::shapes::node_inference::make_handled(loaded.proto_without_nodes(), *loaded.node_views());
  REQUIRE(views);
  const auto text = [](const ::onnx::TypeProto* t) {
    return t != nullptr ? t->SerializeAsString() : std::string("(none)");
  };
  for (const auto& name : names) {
    CAPTURE(name);
    CHECK(text(views->find(name)) == text(inferred.find(name)));
  }
  const auto& g = m.graph();
  std::size_t differ = 0;
  for (int v = 0; v < g.node_size(); ++v) {
    const auto at = static_cast<std::size_t>(v);
    for (int i = 0; i < g.node(v).input_size(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      differ += text(views->input_type(at, k)) != text(inferred.input_type(at, k)) ? 1 : 0;
    }
    for (int j = 0; j < g.node(v).output_size(); ++j) {
      const auto k = static_cast<std::size_t>(j);
      differ += text(views->output_type(at, k)) != text(inferred.output_type(at, k)) ? 1 : 0;
    }
  }
  CHECK(differ == 0);
  CHECK(loaded.node_views() != nullptr); // nothing parsed them
}

// node_inference's answer for every name the model or the reference has
// (and the same on its views: check_views).
types by_node(const ::onnx::ModelProto& m, const types& also) {
  const auto inferred = sp::shapes::node_inference::make(m);
  REQUIRE(inferred);
  CHECK(by_position_differs(m.graph(), *inferred) == 0);
  std::set<std::string> names;
  const auto& g = m.graph();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
    for (const auto& v : *list) {
      names.insert(v.name());
    }
  }
  for (const auto& t : g.initializer()) {
    names.insert(t.name());
  }
  for (const auto& n : g.node()) {
    names.insert(n.input().begin(), n.input().end());
    names.insert(n.output().begin(), n.output().end());
  }
  for (const auto& [name, type] : also) {
    names.insert(name);
  }
  types out;
  for (const auto& name : names) {
    if (const auto* type = inferred->find(name)) {
      out[name] = type->SerializeAsString();
    }
  }
  check_views(m, *inferred, names);
  return out;
}

// The same types, and the model untouched.
void check_same(const ::onnx::ModelProto& m) {
  const std::string before = m.SerializeAsString();
  const types want = reference(m);
  const types got = by_node(m, want);
  CHECK(m.SerializeAsString() == before);
  CHECK(got.size() == want.size());
  for (const auto& entry : want) {
    CAPTURE(entry.first);
    const auto it = got.find(entry.first);
    REQUIRE(it != got.end());
    CHECK(it->second == entry.second);
  }
}

::onnx::ValueInfoProto& value(::onnx::GraphProto& g, const std::string& name, int type,
                              std::vector<std::int64_t> dims, bool is_input = false) {
  auto& v = is_input ? *g.add_input() : *g.add_value_info();
  v.set_name(name);
  auto& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(type);
  for (const auto d : dims) {
    t.mutable_shape()->add_dim()->set_dim_value(d);
  }
  return v;
}

::onnx::NodeProto& node(::onnx::GraphProto& g, const std::string& op,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& domain = "") {
  auto& n = *g.add_node();
  n.set_op_type(op);
  n.set_domain(domain);
  for (const auto& i : inputs) {
    n.add_input(i);
  }
  for (const auto& o : outputs) {
    n.add_output(o);
  }
  return n;
}

::onnx::TensorProto int64s(const std::string& name, const std::vector<std::int64_t>& values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::INT64);
  t.add_dims(static_cast<std::int64_t>(values.size()));
  for (const auto v : values) {
    t.add_int64_data(v);
  }
  return t;
}

// x [2, 3, 4] FLOAT; Relu -> a; y is the only output.
::onnx::ModelProto base_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto& g = *m.mutable_graph();
  value(g, "x", ::onnx::TensorProto::FLOAT, {2, 3, 4}, true);
  node(g, "Relu", {"x"}, {"a"});
  auto& y = *g.add_output();
  y.set_name("y");
  return m;
}

} // namespace

TEST_CASE("node_inference: the shared models' types are InferShapes' types") {
  SKIP_WITHOUT_MODELS();
  std::size_t seen = 0;
  std::size_t handled = 0;
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() != ".onnx") {
      continue;
    }
    ++seen;
    CAPTURE(entry.path().filename().string());
    const auto m = sp::load_model(entry.path());
    if (!sp::shapes::node_inference::make(m)) {
      // Subgraphs: left to InferShapes; silero_vad_legacy is the one.
      CHECK(entry.path().filename() == "silero_vad_legacy.onnx");
      continue;
    }
    ++handled;
    check_same(m);
  }
  CHECK(seen >= 8);
  CHECK(handled == seen - 1);
  CHECK(views_checked >= 1); // (ResNet-50 replica: every node plain, its views inferred too)
}

TEST_CASE("node_inference: generated decoders and ResNet-50") {
  check_same(sp::synth_resnet50());
  // 1200 layers: 34,800 nodes, whose names are interned in chunks side by
  // side on a machine of two cores or more.
  for (const int layers : {1, 3, 17, 1200}) {
    CAPTURE(layers);
    const auto before = views_checked;
    check_same(sp::synth_decoder(layers, 8 + layers % 100, 5 + layers % 100));
    CHECK(views_checked == before + 1);
  }
  // With the value_info a model may declare: refined, contradicting none.
  auto m = sp::synth_decoder(2);
  auto& g = *m.mutable_graph();
  g.add_value_info()->set_name("layer0/mlp_residual"); // no type: undefined
  value(g, "layer1/mlp_residual", ::onnx::TensorProto::FLOAT, {});
  g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  check_same(m);
}

TEST_CASE("node_inference: undefined outputs, Constant data read before its node") {
  auto m = base_model();
  auto& g = *m.mutable_graph();
  // y = Reshape(a, shape), the shape a Constant listed after the Reshape
  // (its data is known before any node is inferred) and an initializer.
  node(g, "Reshape", {"a", "shape"}, {"y"});
  auto& c = node(g, "Constant", {}, {"shape"});
  auto& attr = *c.add_attribute();
  attr.set_name("value");
  attr.set_type(::onnx::AttributeProto::TENSOR);
  *attr.mutable_t() = int64s("", {6, 4});
  *g.add_initializer() = int64s("shape2", {4, -1});
  node(g, "Reshape", {"a", "shape2"}, {"z"});
  g.add_output()->set_name("z");
  // declared [4, ?]: refined
  value(g, "z", ::onnx::TensorProto::FLOAT, {4})
      .mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim();
  check_same(m);
  const auto inferred = sp::shapes::node_inference::make(m);
  REQUIRE(inferred->find("y") != nullptr);
  CHECK(inferred->find("y")->tensor_type().shape().dim_size() == 2);
  CHECK(inferred->find("y")->tensor_type().shape().dim(0).dim_value() == 6);
  CHECK(inferred->find("nothing") == nullptr);
}

TEST_CASE("node_inference: unknown operators and inference errors skip a node") {
  auto m = base_model();
  auto& g = *m.mutable_graph();
  auto* o = m.add_opset_import();
  o->set_domain("custom");
  o->set_version(1);
  node(g, "Mystery", {"a"}, {"b"}, "custom");
  node(g, "Relu", {"b"}, {"c"});        // input type unknown
  node(g, "MatMul", {"a", "a"}, {"d"}); // 4 against 3: an inference error
  node(g, "Relu", {"a"}, {"y"});
  check_same(m);
  const auto inferred = sp::shapes::node_inference::make(m);
  CHECK(inferred->find("b") == nullptr);
  CHECK(inferred->find("d") == nullptr);
  CHECK(inferred->find("y") != nullptr);
}

TEST_CASE("node_inference: the default domain imported as \"\" or \"ai.onnx\", or not at all") {
  // Schemas of the default domain are found once per op type, in the
  // opset imported as "" or else as "ai.onnx"; a node naming "ai.onnx"
  // needs that import, as a node of any domain.
  for (const std::string imported : {"", "ai.onnx", "custom"}) {
    for (const std::string domain : {"", "ai.onnx"}) {
      CAPTURE(imported);
      CAPTURE(domain);
      auto m = base_model();
      m.mutable_opset_import(0)->set_domain(imported);
      auto& g = *m.mutable_graph();
      node(g, "Relu", {"a"}, {"b"}, domain);
      node(g, "Relu", {"b"}, {"y"});
      check_same(m);
      const auto inferred = sp::shapes::node_inference::make(m);
      // libonnx's registry has ONNX's operators under "" alone.
      const bool known = domain.empty() && imported != "custom";
      CHECK((inferred->find("b") != nullptr) == known);
    }
  }
}

TEST_CASE("node_inference: what ends inference keeps what came before") {
  SUBCASE("a domain without an opset import") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    node(g, "Relu", {"a"}, {"b"});
    node(g, "Mystery", {"b"}, {"c"}, "nowhere");
    node(g, "Relu", {"b"}, {"y"});
    check_same(m);
    const auto inferred = sp::shapes::node_inference::make(m);
    CHECK(inferred->find("b") != nullptr);
    CHECK(inferred->find("y") != nullptr); // the undefined output, as declared: empty
    CHECK(!inferred->find("y")->has_tensor_type());
  }
  SUBCASE("a declared type inference contradicts") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    value(g, "b", ::onnx::TensorProto::INT64, {2, 3, 4});
    node(g, "Relu", {"a"}, {"b"});
    node(g, "Relu", {"a"}, {"y"});
    check_same(m);
  }
  SUBCASE("an inference function reading an input the node does not have") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    node(g, "Reshape", {"a"}, {"r"}); // libonnx's context throws, not an inference error
    node(g, "Relu", {"a"}, {"y"});
    check_same(m);
  }
  SUBCASE("an initializer its declared input contradicts") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    value(g, "w", ::onnx::TensorProto::INT64, {3}, true);
    *g.add_initializer() = int64s("w", {1, 2});
    node(g, "Relu", {"a"}, {"y"});
    check_same(m);
  }
}

TEST_CASE("node_inference: ir_version 3 initializers, fresh symbols past declared ones") {
  SUBCASE("ir_version 3: an initializer not listed as an input has no type to read") {
    auto m = base_model();
    m.set_ir_version(3);
    auto& g = *m.mutable_graph();
    *g.add_initializer() = int64s("shape", {6, 4});
    node(g, "Reshape", {"a", "shape"}, {"y"});
    node(g, "Add", {"shape", "shape"}, {"twice"});
    check_same(m);
    CHECK(sp::shapes::node_inference::make(m)->find("twice") == nullptr);
  }
  SUBCASE("NonZero's unknown dimension gets a symbol no input has") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    auto& in = *g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    in.mutable_dim(0)->set_dim_param("unk__0");
    node(g, "NonZero", {"a"}, {"nz"});
    node(g, "NonZero", {"nz"}, {"y"});
    check_same(m);
    const auto inferred = sp::shapes::node_inference::make(m);
    REQUIRE(inferred->find("nz") != nullptr);
    CHECK(inferred->find("nz")->tensor_type().shape().dim(1).dim_param() == "unk__1");
  }
}

TEST_CASE("node_inference's memo: a node asking what an earlier one asked gets its answer") {
  // Each model below repeats nodes whose answers must differ, or must not be
  // shared, though much of what they ask is the same; InferShapes, which
  // infers every node, is the reference.
  SUBCASE("equal nodes share one type; a later merge into one name copies it") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    auto& x = *g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    x.mutable_dim(0)->set_dim_param("N");
    value(g, "z", ::onnx::TensorProto::FLOAT, {5, 3, 4}, true);
    node(g, "Relu", {"x"}, {"b"});
    node(g, "Relu", {"x"}, {"c"});
    node(g, "Relu", {"z"}, {"b"}); // b again: [5, 3, 4] merged into [N, 3, 4]
    node(g, "Relu", {"x"}, {"e"});
    node(g, "Relu", {"x"}, {"y"}); // declared without a type: given a copy
    check_same(m);
    const auto inferred = sp::shapes::node_inference::make(m);
    REQUIRE(inferred->find("c") != nullptr);
    CHECK(inferred->find("c") == inferred->find("e")); // one answer, shared
    CHECK(inferred->find("c") != inferred->find("y"));
    CHECK(inferred->find("c")->tensor_type().shape().dim(0).dim_param() == "N");
    CHECK(inferred->find("b")->tensor_type().shape().dim(0).dim_value() == 5);
  }
  SUBCASE("declared, undefined and contradicted outputs of answered nodes") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    node(g, "Relu", {"x"}, {"b"});
    node(g, "Relu", {"x"}, {"c"}); // declared [2, ?, 4]: refined
    value(g, "c", ::onnx::TensorProto::FLOAT, {2})
        .mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->add_dim();
    g.mutable_value_info(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->add_dim()
        ->set_dim_value(4);
    g.add_value_info()->set_name("d"); // undefined: the answer copied into it
    node(g, "Relu", {"x"}, {"d"});
    value(g, "e", ::onnx::TensorProto::INT64, {2, 3, 4}); // contradicted: inference ends
    node(g, "Relu", {"x"}, {"e"});
    node(g, "Relu", {"x"}, {"y"});
    check_same(m);
  }
  SUBCASE("inputs' data: Reshape by different and equal shapes of one type") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    *g.add_initializer() = int64s("s1", {6, 4});
    *g.add_initializer() = int64s("s2", {4, 6});
    *g.add_initializer() = int64s("s3", {6, 4});
    *g.add_initializer() = int64s("s4", {4, -1});
    int k = 0;
    for (const char* shape : {"s1", "s2", "s3", "s4", "s1", "s4"}) {
      node(g, "Reshape", {"x", shape}, {"r" + std::to_string(k++)});
    }
    node(g, "Reshape", {"x", "a"}, {"y"}); // no data: rank only
    check_same(m);
    const auto inferred = sp::shapes::node_inference::make(m);
    REQUIRE(inferred->find("r1") != nullptr);
    CHECK(inferred->find("r1")->tensor_type().shape().dim(0).dim_value() == 4);
  }
  SUBCASE("attributes: the same op and inputs, other values") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    const auto perm = [](::onnx::NodeProto& n, std::vector<std::int64_t> p) {
      auto& a = *n.add_attribute();
      a.set_name("perm");
      a.set_type(::onnx::AttributeProto::INTS);
      for (const auto i : p) {
        a.add_ints(i);
      }
    };
    perm(node(g, "Transpose", {"x"}, {"t0"}), {0, 2, 1});
    perm(node(g, "Transpose", {"x"}, {"t1"}), {2, 1, 0});
    perm(node(g, "Transpose", {"x"}, {"t2"}), {0, 2, 1});
    node(g, "Transpose", {"x"}, {"t3"}); // no perm: reversed
    const auto alpha = [](::onnx::NodeProto& n, const std::string& name, float f) {
      auto& a = *n.add_attribute();
      a.set_name(name);
      a.set_type(::onnx::AttributeProto::FLOAT);
      a.set_f(f);
    };
    alpha(node(g, "LeakyRelu", {"x"}, {"l0"}), "alpha", 0.5F);
    alpha(node(g, "LeakyRelu", {"x"}, {"l1"}), "alpha", 0.25F);
    alpha(node(g, "LeakyRelu", {"x"}, {"l2"}), "beta", 0.5F); // an attribute it does not take
    auto& cast = node(g, "Cast", {"x"}, {"c0"});
    auto& to = *cast.add_attribute();
    to.set_name("to");
    to.set_type(::onnx::AttributeProto::INT);
    to.set_i(::onnx::TensorProto::INT64);
    auto cast2 = cast;
    cast2.set_output(0, "c1");
    cast2.mutable_attribute(0)->set_i(::onnx::TensorProto::DOUBLE);
    *g.add_node() = cast2;
    node(g, "Relu", {"x"}, {"y"});
    check_same(m);
    const auto inferred = sp::shapes::node_inference::make(m);
    CHECK(inferred->find("t1")->tensor_type().shape().dim(0).dim_value() == 4);
    CHECK(inferred->find("c1")->tensor_type().elem_type() == ::onnx::TensorProto::DOUBLE);
  }
  SUBCASE("symbolic dimensions: other symbols; fresh symbols named each time") {
    auto m = base_model();
    auto& g = *m.mutable_graph();
    auto& x = *g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    x.mutable_dim(0)->set_dim_param("N");
    auto& w = value(g, "w", ::onnx::TensorProto::FLOAT, {2, 3, 4}, true);
    w.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("M");
    node(g, "Relu", {"x"}, {"r0"});
    node(g, "Relu", {"w"}, {"r1"});
    for (int k = 0; k < 3; ++k) { // an unknown dimension: unk__0, unk__1, unk__2
      node(g, "NonZero", {"x"}, {"nz" + std::to_string(k)});
    }
    node(g, "MatMul", {"x", "x"}, {"mm0"}); // 4 against 3 twice: both inference errors
    node(g, "MatMul", {"x", "x"}, {"mm1"});
    node(g, "Relu", {"x"}, {"y"});
    check_same(m);
    const auto inferred = sp::shapes::node_inference::make(m);
    CHECK(inferred->find("r1")->tensor_type().shape().dim(0).dim_param() == "M");
    CHECK(inferred->find("nz2")->tensor_type().shape().dim(1).dim_param() == "unk__2");
    CHECK(inferred->find("mm1") == nullptr);
  }
}

TEST_CASE("node_inference's memo: data asked for depending on other data") {
  // An operator whose inference reads input 1's data only when input 0's
  // first value is 1: the inputs whose data an answer rests on grow as
  // nodes ask, and an answer is only given under the data it read.
  static const bool registered = [] {
    ::onnx::OpSchema schema;
    schema.SetName("ShardpointDataDependent")
        .SetDomain("")
        .SinceVersion(1)
        .Input(0, "which", "", "tensor(int64)")
        .Input(1, "size", "", "tensor(int64)")
        .Output(0, "y", "", "tensor(float)")
        .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
          const auto* which = ctx.getInputData(0);
          if (which == nullptr || which->int64_data_size() == 0) {
            return;
          }
          std::int64_t size = which->int64_data(0);
          if (size == 1) {
            const auto* data = ctx.getInputData(1);
            if (data == nullptr || data->int64_data_size() == 0) {
              return;
            }
            size = data->int64_data(0);
          }
          auto& t = *ctx.getOutputType(0)->mutable_tensor_type();
          t.set_elem_type(::onnx::TensorProto::FLOAT);
          t.mutable_shape()->add_dim()->set_dim_value(size);
        });
    ::onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema);
    return true;
  }();
  REQUIRE(registered);
  auto m = base_model();
  auto& g = *m.mutable_graph();
  *g.add_initializer() = int64s("two", {2});
  *g.add_initializer() = int64s("one", {1});
  *g.add_initializer() = int64s("seven", {7});
  *g.add_initializer() = int64s("nine", {9});
  const std::vector<std::pair<std::string, std::string>> asked = {
      {"two", "seven"}, {"one", "seven"}, {"one", "nine"}, {"one", "seven"},
      {"two", "nine"},  {"two", "seven"}, {"one", "nine"}};
  for (std::size_t k = 0; k < asked.size(); ++k) {
    node(g, "ShardpointDataDependent", {asked[k].first, asked[k].second},
         {"d" + std::to_string(k)});
  }
  check_same(m);
  const auto inferred = sp::shapes::node_inference::make(m);
  const std::vector<std::int64_t> sizes = {2, 7, 9, 7, 2, 2, 9};
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    CAPTURE(k);
    const auto* type = inferred->find("d" + std::to_string(k));
    REQUIRE(type != nullptr);
    CHECK(type->tensor_type().shape().dim(0).dim_value() == sizes[k]);
  }
}

TEST_CASE("node_inference: subgraphs, functions and sparse initializers are left to InferShapes") {
  auto m = base_model();
  CHECK(sp::shapes::node_inference::make(m));
  auto with_if = m;
  onnx_test::add_if(*with_if.mutable_graph(), "if", "x", "y");
  CHECK(!sp::shapes::node_inference::make(with_if));
  auto with_function = m;
  with_function.add_functions()->set_name("f");
  CHECK(!sp::shapes::node_inference::make(with_function));
  auto with_sparse = m;
  with_sparse.mutable_graph()->add_sparse_initializer();
  CHECK(!sp::shapes::node_inference::make(with_sparse));
}

TEST_CASE("shape inference out of memory says so, not that inference stopped on the model") {
  // A trial's split under `ulimit -v` said a tensor "ONNX shape inference
  // finds no type for" -- the model blamed for a std::bad_alloc that
  // inference had taken for an inference error. An operator whose
  // inference function runs out of memory, in both passes:
  static const bool registered = [] {
    ::onnx::OpSchema schema;
    schema.SetName("ShardpointOutOfMemory")
        .SetDomain("")
        .SinceVersion(1)
        .Input(0, "x", "", "T")
        .Output(0, "y", "", "T")
        .TypeConstraint("T", {"tensor(float)"}, "")
        .TypeAndShapeInferenceFunction([](::onnx::InferenceContext&) { throw std::bad_alloc(); });
    ::onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema);
    return true;
  }();
  REQUIRE(registered);
  auto m = base_model();
  node(*m.mutable_graph(), "ShardpointOutOfMemory", {"a"}, {"y"});
  CHECK_THROWS_AS(sp::shapes::node_inference::make(m), std::bad_alloc);
  auto with_if = m; // (InferShapes')
  onnx_test::add_if(*with_if.mutable_graph(), "if", "x", "z");
  for (auto* model : {&m, &with_if}) {
    CHECK_THROWS_AS(sp::shapes::inferred_shapes{*model}, std::bad_alloc);
  }
}

TEST_CASE("inferred_shapes: types by node position, by node or by InferShapes") {
  // Node by node: the inputs and outputs interned before inference; by
  // InferShapes (a subgraph): looked up by name. Empty optional inputs too.
  auto m = base_model();
  auto& g = *m.mutable_graph();
  node(g, "Clip", {"a", "", "x"}, {"c"});
  node(g, "Add", {"c", "nowhere"}, {"d", ""});
  auto with_if = m;
  onnx_test::add_if(*with_if.mutable_graph(), "if", "x", "y");
  for (auto* model : {&m, &with_if}) {
    const bool plain = model == &m;
    CAPTURE(plain);
    CHECK(sp::shapes::inferred_shapes::leaves_untouched(*model, false) == plain);
    CHECK(!sp::shapes::inferred_shapes::leaves_untouched(*model, true));
    const sp::shapes::inferred_shapes types(*model);
    CHECK(by_position_differs(model->graph(), types) == 0);
    REQUIRE(types.output_type(1, 0) != nullptr); // c: Clip's type, x's
    CHECK(types.output_type(1, 0)->tensor_type().shape().dim_size() == 3);
  }
}

TEST_CASE("inferred_shapes: work handed to it runs, beside or before, its error first") {
  auto m = base_model();
  auto with_if = m;
  onnx_test::add_if(*with_if.mutable_graph(), "if", "x", "y");
  for (auto* model : {&m, &with_if}) {
    CAPTURE(model == &m);
    const std::string before = model->SerializeAsString();
    bool ran = false;
    {
      const sp::shapes::inferred_shapes types(*model, false, [&] { ran = true; });
      CHECK(ran);
      CHECK(types.find("a") != nullptr);
    }
    CHECK(model->SerializeAsString() == before);
    CHECK_THROWS_WITH_AS(
        sp::shapes::inferred_shapes(*model, false,
                                    [] { throw shardpoint::bad_input_error("the weights"); }),
        "the weights", shardpoint::bad_input_error);
    CHECK(model->SerializeAsString() == before);
  }
}

namespace {

// Every figure measure_nodes gives, equal.
void check_same_measures(const sp::node_weights& a, const sp::node_weights& b) {
  CHECK(a.cost == b.cost);
  CHECK(a.parameter_bytes == b.parameter_bytes);
  CHECK(a.output_bytes == b.output_bytes);
  CHECK(a.initializer_bytes == b.initializer_bytes);
  CHECK(a.held_bytes == b.held_bytes);
  CHECK(a.guessed.cost_nodes == b.guessed.cost_nodes);
  CHECK(a.guessed.bytes_nodes == b.guessed.bytes_nodes);
  CHECK(a.guessed.body_nodes == b.guessed.body_nodes);
  CHECK(a.guessed.symbols == b.guessed.symbols);
  CHECK(a.unsized_weights == b.unsized_weights);
  CHECK(a.made_from_shapes.nodes == b.made_from_shapes.nodes);
  CHECK(a.made_from_shapes.bytes == b.made_from_shapes.bytes);
  CHECK(a.made_from_shapes.unsized == b.made_from_shapes.unsized);
}

// Whether `model`'s nodes are views the measures run on, never parsing
// them: views, none holding a subgraph (shapes::inferable_views).
bool measurable_on_views(const sp::loaded_model& model) {
  return model.node_views() != nullptr && !model.node_views()->subgraphs;
}

} // namespace

TEST_CASE("measure_nodes: output bytes found by node position, the weights beside inference") {
  std::size_t views_measured = 0;
  std::size_t parsed_measured = 0; // of them, with nodes the views parsed (Constants)
  // Held to a reference by name: per tensor a node other than its producer
  // reads, its type found by name, its bytes added to its producer's.
  // Split's second output read, of another size than its first.
  auto split = base_model();
  auto& g = *split.mutable_graph();
  *g.add_initializer() = int64s("sizes", {1, 3});
  node(g, "Split", {"a", "sizes"}, {"s0", "s1"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto axis;
    axis.set_name("axis");
    axis.set_type(::onnx::AttributeProto::INT);
    axis.set_i(2);
    return axis;
  }());
  node(g, "Relu", {"s1"}, {"y"});
  // What a view is parsed for: a Gemm's transA, Constants' values (read,
  // and held by a Constant no node reads), a ConstantOfShape of an
  // initializer's shape. Every node a view (those holding a tensor parsed
  // as they are read).
  auto parsed_for = base_model();
  {
    auto& h = *parsed_for.mutable_graph();
    const auto attribute =
        [](::onnx::NodeProto& n, const std::string& name,
           ::onnx::AttributeProto::AttributeType type) -> ::onnx::AttributeProto& {
      auto& a = *n.add_attribute();
      a.set_name(name);
      a.set_type(type);
      return a;
    };
    value(h, "m", ::onnx::TensorProto::FLOAT, {5, 2}, true);
    *h.add_initializer() = int64s("w_shape", {5, 3});
    node(h, "ConstantOfShape", {"w_shape"}, {"w"});
    attribute(node(h, "Gemm", {"m", "w"}, {"mw"}), "transA", ::onnx::AttributeProto::INT).set_i(1);
    attribute(node(h, "Constant", {}, {"two"}), "value_float", ::onnx::AttributeProto::FLOAT)
        .set_f(2);
    node(h, "Mul", {"mw", "two"}, {"mw2"});
    auto& unread =
        attribute(node(h, "Constant", {}, {"unread"}), "value_ints", ::onnx::AttributeProto::INTS);
    unread.add_ints(1);
    unread.add_ints(2);
    // Constants holding tensors (the views parse them): one read, one not.
    auto& bias =
        *attribute(node(h, "Constant", {}, {"bias"}), "value", ::onnx::AttributeProto::TENSOR)
             .mutable_t();
    bias.set_data_type(::onnx::TensorProto::FLOAT);
    bias.add_dims(3);
    bias.set_raw_data(std::string(12, '\0'));
    attribute(node(h, "Constant", {}, {"held"}), "value", ::onnx::AttributeProto::TENSOR)
        .mutable_t()
        ->CopyFrom(bias);
    node(h, "Add", {"mw2", "bias"}, {"mwb"});
    node(h, "Relu", {"mwb"}, {"y"});
  }
  std::vector<::onnx::ModelProto> models{split, parsed_for, sp::synth_decoder(1200, 8, 5),
                                         sp::synth_resnet50()};
  if (!onnx_test::models_dir().empty()) {
    for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
      if (entry.path().extension() == ".onnx") {
        models.push_back(sp::load_model(entry.path()));
      }
    }
  }
  for (auto& m : models) {
    CAPTURE(m.graph().name());
    const auto nodes = sp::build_graph(m.graph());
    const std::string before = m.SerializeAsString();
    const auto w = sp::measure_nodes(m, nodes, sp::cost_model::flops);
    CHECK(m.SerializeAsString() == before);
    // The node graph built beside inference: the same measures.
    std::optional<sp::node_graph> built;
    const auto beside = sp::measure_nodes(
        m,
        [&]() -> const sp::node_graph& {
          if (!built) {
            built.emplace(sp::build_graph(m.graph()));
          }
          return *built;
        },
        sp::cost_model::flops);
    CHECK(m.SerializeAsString() == before);
    REQUIRE(built);
    CHECK(built->tensors == nodes.tensors);
    check_same_measures(beside, w);
    // A loaded model read with its nodes as views (and initializers
    // parsed): the same measures, every cost model, no node parsed where
    // the nodes are views and none holds a subgraph.
    const std::string bytes = m.SerializeAsString();
    for (const auto how : {sp::cost_model::flops, sp::cost_model::params, sp::cost_model::unit}) {
      auto loaded = sp::parse_graph(bytes, "<bytes>", sp::node_reading::views_with_initializers);
      const bool as_views = measurable_on_views(loaded);
      views_measured += as_views && how == sp::cost_model::flops ? 1 : 0;
      parsed_measured +=
          as_views && how == sp::cost_model::flops && !loaded.node_views()->parsed.empty() ? 1 : 0;
      std::optional<sp::node_graph> graph;
      const auto measured = sp::measure_nodes(
          loaded,
          [&]() -> const sp::node_graph& {
            if (!graph) {
              graph.emplace(sp::build_graph(loaded));
            }
            return *graph;
          },
          how);
      CHECK((loaded.node_views() != nullptr) == as_views);
      const auto parsed = sp::measure_nodes(m, nodes, how);
      check_same_measures(measured, parsed);
      // estimate_costs likewise.
      sp::guesses on_views;
      sp::guesses on_protos;
      CHECK(sp::estimate_costs(loaded, how, &on_views) == sp::estimate_costs(m, how, &on_protos));
      CHECK(on_views.cost_nodes == on_protos.cost_nodes);
      CHECK(on_views.symbols == on_protos.symbols);
      CHECK((loaded.node_views() != nullptr) == as_views);
    }
    // activation_bytes on the views: the same bytes, notes and guesses at
    // micro-batches of 1 and 3 (the skeleton's inputs take the batch and
    // are given back), with and without `guessed`.
    for (const std::int64_t micro_batch : {1, 3}) {
      auto loaded = sp::parse_graph(bytes, "<bytes>", sp::node_reading::views_with_initializers);
      const bool as_views = measurable_on_views(loaded);
      const auto skeleton_before = loaded.proto_without_nodes().SerializeAsString();
      const auto graph = sp::build_graph(loaded);
      for (const bool with_guesses : {false, true}) {
        std::vector<std::string> notes_views;
        std::vector<std::string> notes_protos;
        sp::guesses g_views;
        sp::guesses g_protos;
        const auto a = sp::activation_bytes(loaded, graph, micro_batch, notes_views, nullptr,
                                            with_guesses ? &g_views : nullptr);
        const auto b = sp::activation_bytes(m, nodes, micro_batch, notes_protos, nullptr,
                                            with_guesses ? &g_protos : nullptr);
        CHECK(a == b);
        CHECK(notes_views == notes_protos);
        CHECK(g_views.bytes_nodes == g_protos.bytes_nodes);
        CHECK(g_views.unsized_outputs == g_protos.unsized_outputs);
        CHECK(g_views.body_nodes == g_protos.body_nodes);
        CHECK(g_views.symbols == g_protos.symbols);
        CHECK(g_views.batch == g_protos.batch);
        CHECK(g_views.batch_symbols == g_protos.batch_symbols);
      }
      CHECK((loaded.node_views() != nullptr) == as_views);
      if (as_views) { // (else proto() may have parsed the nodes into it)
        CHECK(loaded.proto_without_nodes().SerializeAsString() == skeleton_before);
      }
    }
    // make_report on the views: the same report (its crossings' sizes by
    // name), `also` run once either way.
    {
      auto loaded = sp::parse_graph(bytes, "<bytes>", sp::node_reading::views_with_initializers);
      const bool as_views = measurable_on_views(loaded);
      const auto graph = sp::build_graph(loaded);
      const auto count = static_cast<std::size_t>(m.graph().node_size());
      std::vector<int> devices(count);
      for (std::size_t v = 0; v < count; ++v) {
        devices[v] = v < count / 2 ? 0 : 1; // crossings at the middle
      }
      const shardpoint::sharding_result halves(count, devices, {});
      int ran_views = 0;
      int ran_protos = 0;
      const auto a = sp::make_report(loaded, graph, halves, {}, nullptr, [&] { ++ran_views; });
      const auto b = sp::make_report(m, nodes, halves, {}, nullptr, [&] { ++ran_protos; });
      CHECK(shardpoint::io::to_json(a) == shardpoint::io::to_json(b));
      CHECK(ran_views == 1);
      CHECK(ran_protos == 1);
      CHECK((loaded.node_views() != nullptr) == as_views);
    }
    const auto n = static_cast<std::size_t>(m.graph().node_size());
    std::vector<std::int64_t> want(n, 0);
    const sp::shapes::inferred_shapes types(m);
    std::set<std::uint32_t> read;
    for (std::size_t v = 0; v < n; ++v) {
      for (const auto t : nodes.reads(v)) {
        if (nodes.producer[t] != v) {
          read.insert(t);
        }
      }
    }
    for (const auto t : read) {
      const auto p = nodes.producer[t];
      if (p == sp::node_graph::no_producer) {
        continue;
      }
      if (const auto* type = types.find(nodes.tensors[t])) {
        if (const auto b = sp::shapes::value_bytes(*type, nodes.tensors[t])) {
          want[p] += b->bytes;
        }
      }
    }
    CHECK(w.output_bytes == want);
    if (&m == &models.front()) { // Split: s1, [2, 3, 3] floats
      CHECK(w.output_bytes[1] == 2 * 3 * 3 * 4);
    }
    CHECK(std::count_if(want.begin(), want.end(), [](auto b) { return b > 0; }) > 0);
    CHECK(views_measured > 0); // (the first model's nodes are plain)
    // The weights (found beside inference) as found alone.
    const auto weights = sp::shapes::weights_of(m.graph(), nodes);
    CHECK(w.initializer_bytes == weights.tensor_bytes());
    for (std::size_t v = 0; v < n; ++v) {
      REQUIRE(w.held_bytes[v] == weights.held_bytes(v));
    }
  }
  CHECK(parsed_measured > 0); // (the second model's Constants holding tensors)
}

TEST_CASE("measure_nodes: a node graph built beside inference, its error first") {
  auto m = base_model();
  node(*m.mutable_graph(), "Relu", {"x"}, {"a"}); // a second writer of "a"
  auto with_if = m;
  onnx_test::add_if(*with_if.mutable_graph(), "if", "x", "y");
  sp::input_sizes no_such_input;
  no_such_input.shapes.emplace_back("nothing", std::vector<std::int64_t>{2, 3, 4});
  sp::input_sizes sized;
  sized.shapes.emplace_back("x", std::vector<std::int64_t>{2, 3, 4});
  for (auto* model : {&m, &with_if}) {
    CAPTURE(model == &m);
    const std::string before = model->SerializeAsString();
    for (const auto* sizes :
         std::initializer_list<const sp::input_sizes*>{nullptr, &no_such_input}) {
      CAPTURE(sizes != nullptr);
      // The graph's error, beside inference or before it, and before the
      // sizes' own error.
      CHECK_THROWS_WITH_AS(sp::measure_nodes(
                               *model,
                               [&]() -> const sp::node_graph& {
                                 static sp::node_graph none;
                                 none = sp::build_graph(model->graph());
                                 return none;
                               },
                               sp::cost_model::flops, sizes),
                           doctest::Contains("is written by both"), shardpoint::bad_input_error);
      CHECK(model->SerializeAsString() == before);
    }
  }
  // A graph that builds: the sizes' error. Where inference writes to the
  // model (an If; sizes given), the graph is built before it, on the model
  // as it was.
  auto ok = base_model();
  onnx_test::add_if(*ok.mutable_graph(), "if", "x", "y");
  std::optional<sp::node_graph> built;
  const auto graph_of = [&]() -> const sp::node_graph& {
    if (!built) {
      CHECK(ok.graph().value_info_size() == 0);
      built.emplace(sp::build_graph(ok.graph()));
    }
    return *built;
  };
  CHECK_THROWS_AS(sp::measure_nodes(ok, graph_of, sp::cost_model::flops, &no_such_input),
                  shardpoint::bad_parameter_error);
  for (const auto* sizes : std::initializer_list<const sp::input_sizes*>{nullptr, &sized}) {
    built.reset();
    const auto w = sp::measure_nodes(ok, graph_of, sp::cost_model::flops, sizes);
    CHECK(built);
    CHECK(w.cost.size() == static_cast<std::size_t>(ok.graph().node_size()));
    CHECK(ok.graph().value_info_size() == 0);
  }
}

TEST_CASE("weights_of: many nodes, Constants and subgraphs on both sides of every cut") {
  // A chain of Relu nodes long enough to be looked at in chunks side by
  // side (2 x 16384 nodes on two cores or more), with, at and around every
  // place a cut can fall: Constants read by the next node (weights of their
  // readers) or by none (held by the Constant), nodes holding a subgraph
  // with an initializer, and nodes reading an initializer. Held to a
  // reference that walks the model by name.
  constexpr int n = 5 * 16384 + 7;
  std::set<int> special;
  for (int parts = 2; parts <= 8; ++parts) {
    for (int k = 1; k < parts; ++k) {
      for (int d = -2; d <= 2; ++d) {
        special.insert((n + parts - 1) / parts * k + d);
      }
    }
  }
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto& g = *m.mutable_graph();
  value(g, "x", ::onnx::TensorProto::FLOAT, {4}, true);
  const auto floats = [](::onnx::TensorProto& t, const std::string& name, int count) {
    t.set_name(name);
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(count);
    for (int i = 0; i < count; ++i) {
      t.add_float_data(1.0F);
    }
  };
  std::map<std::string, std::int64_t> tensor_bytes; // the reference's
  std::map<int, std::int64_t> held_bytes;
  std::string last = "x";
  for (int v = 0; v < n; ++v) {
    const std::string out = "t" + std::to_string(v);
    const int kind = special.count(v) != 0 ? v % 4 : -1;
    if (kind == 0 || kind == 1) { // a Constant, read by the next node when 0
      auto& c = node(g, "Constant", {}, {out});
      auto& a = *c.add_attribute();
      a.set_name("value");
      a.set_type(::onnx::AttributeProto::TENSOR);
      floats(*a.mutable_t(), "", v % 7 + 1);
      if (kind == 0) {
        tensor_bytes[out] = 4 * (v % 7 + 1);
        node(g, "Add", {last, out}, {out + "_sum"});
        ++v;
        last = out + "_sum";
      } else {
        held_bytes[v] = 4 * (v % 7 + 1);
      }
      continue;
    }
    if (kind == 2) { // a subgraph holding an initializer
      auto& loop = node(g, "Relu", {last}, {out});
      auto& a = *loop.add_attribute();
      a.set_name("body");
      a.set_type(::onnx::AttributeProto::GRAPH);
      floats(*a.mutable_g()->add_initializer(), "inner", v % 5 + 1);
      held_bytes[v] = 4 * (v % 5 + 1);
    } else if (kind == 3) { // reads an initializer
      floats(*g.add_initializer(), "w" + std::to_string(v), v % 3 + 1);
      tensor_bytes["w" + std::to_string(v)] = 4 * (v % 3 + 1);
      node(g, "Add", {last, "w" + std::to_string(v)}, {out});
    } else {
      node(g, "Relu", {last}, {out});
    }
    last = out;
  }
  g.add_output()->set_name(last);
  const auto nodes = sp::build_graph(g);
  const auto weights = sp::shapes::weights_of(g, nodes);
  REQUIRE(weights.tensors.size() == nodes.tensors.size());
  std::size_t found = 0;
  for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
    const auto it = tensor_bytes.find(nodes.tensors[t]);
    CAPTURE(nodes.tensors[t]);
    CHECK(weights.tensors[t].bytes == (it != tensor_bytes.end() ? it->second : -1));
    found += it != tensor_bytes.end() ? 1 : 0;
  }
  CHECK(found == tensor_bytes.size());
  for (int v = 0; v < g.node_size(); ++v) {
    const auto it = held_bytes.find(v);
    CAPTURE(v);
    CHECK(weights.held_bytes(static_cast<std::size_t>(v)) ==
          (it != held_bytes.end() ? it->second : 0));
  }
}
