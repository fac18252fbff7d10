// Every model in ../shared/models shards and round-trips; subgraph reads
// make edges; names; configs in every format.
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include <sys/stat.h>

#include <onnx/checker.h>

#include <shardpoint/io/report.hpp>

#include "onnx_support.hpp"

namespace sp = shardpoint::onnx;
namespace fs = std::filesystem;
using onnx_test::q;
using onnx_test::temp_dir;

namespace {

void strip(::onnx::ModelProto& m, const std::vector<std::size_t>& renamed) {
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    auto* attrs = n.mutable_attribute();
    attrs->erase(std::remove_if(attrs->begin(), attrs->end(),
                                [](const auto& a) {
                                  return a.name() == sp::ipu_attribute ||
                                         a.name() == sp::stage_attribute;
                                }),
                 attrs->end());
  }
  for (std::size_t v : renamed) {
    m.mutable_graph()->mutable_node(static_cast<int>(v))->clear_name();
  }
}

} // namespace

TEST_CASE("every shared model shards, passes the checker and round-trips") {
  SKIP_WITHOUT_MODELS();
  temp_dir dir;
  std::size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() != ".onnx") {
      continue;
    }
    ++seen;
    CAPTURE(entry.path().filename().string());
    const auto original = sp::load_model(entry.path());
    auto model = original;
    auto& g = *model.mutable_graph();
    const auto renamed = sp::assign_names(g, sp::naming::rename_empty);
    const auto nodes = sp::build_graph(g);
    // A point halfway through the node list, and one at the end.
    const auto half = static_cast<std::size_t>(g.node_size() / 2);
    const auto last = static_cast<std::size_t>(g.node_size() - 1);
    std::vector<shardpoint::sharding_point<std::size_t>> points{{half, 0, 0}};
    if (last != half) {
      points.push_back({last, 1, 1});
    }
    const auto result = sp::shard(g, nodes, points);
    sp::annotate(g, result);
    // The report and the cost estimate run shape inference on the model
    // itself; what they leave behind would show in the round trip below.
    sp::make_report(model, nodes, result, {});
    sp::estimate_costs(model, sp::cost_model::flops);
    const fs::path out = dir / entry.path().filename().string();
    sp::save_model(model, out);

    auto written = sp::load_model(out);
    CHECK_NOTHROW(::onnx::checker::check_model(written));
    for (const auto& n : written.graph().node()) {
      int ipu = 0;
      int stage = 0;
      for (const auto& a : n.attribute()) {
        ipu += a.name() == sp::ipu_attribute && a.type() == ::onnx::AttributeProto::INT;
        stage += a.name() == sp::stage_attribute && a.type() == ::onnx::AttributeProto::INT;
      }
      CHECK(ipu == 1);
      CHECK(stage == 1);
      CHECK_FALSE(n.name().empty());
    }
    CHECK(sp::read_annotations(written.graph()) == result);
    strip(written, renamed);
    ::onnx::ModelProto round_trip;
    REQUIRE(round_trip.ParseFromString(original.SerializeAsString()));
    CHECK(written.SerializeAsString() == round_trip.SerializeAsString());
  }
  CHECK(seen >= 8);
}

TEST_CASE("read_model: the arena-backed model equals load_model's and survives a move") {
  temp_dir dir;
  const auto original = sp::synth_decoder(2);
  sp::save_model(original, dir / "m.onnx");
  auto file = sp::read_model(dir / "m.onnx");
  CHECK(file.proto().SerializeAsString() == sp::load_model(dir / "m.onnx").SerializeAsString());
  sp::loaded_model moved = std::move(file);
  auto& g = *moved.proto().mutable_graph();
  sp::annotate(g, sp::shard(g, sp::build_graph(g), {{28, 0, 0}}));
  sp::save_model(moved.proto(), dir / "out.onnx");
  CHECK(sp::read_annotations(sp::load_model(dir / "out.onnx").graph()).device(57) == 1);
  moved = sp::read_model(dir / "m.onnx"); // move-assign frees the old arena
  CHECK_FALSE(sp::read_annotations(moved.proto().graph()).has_devices()); // a fresh read
  // A FIFO is refused, never opened: with no writer, reading it would block
  // forever (the input policy, io/inputs.hpp).
  const fs::path fifo = dir / "fifo.onnx";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  using reader = sp::loaded_model (*)(const fs::path&);
  for (const reader read : {reader(sp::read_model), reader(sp::read_graph)}) {
    CHECK_THROWS_WITH_AS(read(fifo),
                         ("'" + fifo.string() +
                          "': the file is a FIFO, not a regular file; shardpoint reads only "
                          "regular files")
                             .c_str(),
                         sp::input_error);
  }
  CHECK_THROWS_WITH_AS(sp::read_model(dir / "missing.onnx"),
                       ("'" + (dir / "missing.onnx").string() + "': no such file").c_str(),
                       sp::input_error);
}

TEST_CASE("sharding twice replaces the attributes, never duplicates them") {
  auto m = onnx_test::make_model({{"a", {"x"}, {"ya"}}, {"b", {"ya"}, {"yb"}}}, {"yb"});
  auto& g = *m.mutable_graph();
  const auto nodes = sp::build_graph(g);
  sp::annotate(g, sp::shard(g, nodes, {{0, 0, 0}}));
  sp::annotate(g, sp::shard(g, nodes, {{1, 5, std::nullopt}}));
  CHECK(g.node(0).attribute_size() == 1); // the stale __pipeline_stage is gone
  CHECK(g.node(0).attribute(0).i() == 5);
  CHECK(sp::read_annotations(g) == shardpoint::sharding_result(2, {5, 5}, {}));
  // A model that holds one twice says two things: refused, not read as the
  // last (it was taken as stage 1, then "stages must be numbered 0..1
  // without gaps": an adversarial trial).
  for (const char* name : {sp::ipu_attribute, sp::stage_attribute}) {
    auto twice = m;
    auto& node = *twice.mutable_graph()->mutable_node(0);
    for (const int value : {0, 1}) {
      auto& a = *node.add_attribute();
      a.set_name(name);
      a.set_type(::onnx::AttributeProto::INT);
      a.set_i(value);
    }
    CHECK_THROWS_WITH_AS(sp::read_annotations(twice.graph()),
                         ("node 0 'a': attribute " + std::string(name) + " appears twice").c_str(),
                         shardpoint::bad_input_error);
  }
  // One that is no INT in range says what it is (a trial: "not an INT" read
  // the same for a FLOAT, a -1 and a missing type).
  const std::string range = ", not an INT in 0.." + std::to_string(shardpoint::max_group_id + 1);
  const std::vector<std::pair<std::function<void(::onnx::AttributeProto&)>, std::string>> bad = {
      {[](auto& a) { a.set_type(::onnx::AttributeProto::FLOAT); }, "of type FLOAT"},
      {[](auto& a) { a.clear_type(); }, "of type UNDEFINED"},
      {[](auto& a) { a.set_i(-1); }, "-1"},
      {[](auto& a) { a.set_i(shardpoint::max_group_id + 2); },
       std::to_string(shardpoint::max_group_id + 2)}};
  for (const auto& [edit, found] : bad) {
    auto wrong = m;
    auto& node = *wrong.mutable_graph()->mutable_node(1);
    sp::annotate(node, 1, std::nullopt);
    edit(*node.mutable_attribute(0));
    CHECK_THROWS_WITH_AS(
        sp::read_annotations(wrong.graph()),
        ("node 1 'b': attribute " + std::string(sp::ipu_attribute) + " is " + found + range)
            .c_str(),
        shardpoint::bad_input_error);
  }
}

TEST_CASE("silero_vad_legacy: reads from inside If subgraphs create edges") {
  SKIP_WITHOUT_MODELS();
  const auto model = sp::load_model(onnx_test::models_dir() / "silero_vad_legacy.onnx");
  const auto& g = model.graph();
  int if_node = -1;
  for (int v = 0; v < g.node_size(); ++v) {
    if (g.node(v).op_type() == "If") {
      if_node = v;
    }
  }
  REQUIRE(if_node >= 0);
  const auto nodes = sp::build_graph(g);
  // Outer tensors read inside the If's branches that are not its inputs.
  std::set<std::string> direct(g.node(if_node).input().begin(), g.node(if_node).input().end());
  std::vector<std::string> through_subgraphs;
  for (const auto& t : nodes.read_names(static_cast<std::size_t>(if_node))) {
    if (!direct.count(t)) {
      through_subgraphs.push_back(t);
    }
  }
  REQUIRE_FALSE(through_subgraphs.empty());
  // Each such tensor that a top-level node writes gives an edge into the If.
  std::size_t edges_found = 0;
  for (int u = 0; u < g.node_size(); ++u) {
    for (const auto& o : g.node(u).output()) {
      if (std::find(through_subgraphs.begin(), through_subgraphs.end(), o) !=
          through_subgraphs.end()) {
        bool edge = false;
        for (auto [e, end] = out_edges(static_cast<std::size_t>(u), nodes.graph); e != end; ++e) {
          edge = edge || target(*e, nodes.graph) == static_cast<std::size_t>(if_node);
        }
        CHECK(edge);
        ++edges_found;
      }
    }
  }
  // Sharding at the If puts the producers of what its branches read upstream of it.
  const auto result = sp::shard(g, nodes, {{static_cast<std::size_t>(if_node), 0, 0}});
  for (int u = 0; u < g.node_size(); ++u) {
    for (const auto& o : g.node(u).output()) {
      if (std::find(through_subgraphs.begin(), through_subgraphs.end(), o) !=
          through_subgraphs.end()) {
        CHECK(result.device(static_cast<std::size_t>(u)) == 0);
      }
    }
  }
  MESSAGE("If node ", if_node, " reads ", through_subgraphs.size(),
          " outer tensors through its subgraphs; ", edges_found, " come from top-level nodes");
}

TEST_CASE("subgraph reads, nested, with shadowing, in a model built here") {
  // n0 writes t0 and t1; If n1 reads t0 inside its branch, and a nested If
  // inside reads t1; the branch defines its own "t2" which shadows nothing
  // outside. n2 writes t2 at top level but the If does not read it.
  auto m = onnx_test::make_model(
      {{"n0", {"x"}, {"t0"}}, {"n0b", {"x"}, {"t1"}}, {"n2", {"x"}, {"t2"}}}, {"t2"});
  auto& g = *m.mutable_graph();
  auto& bg = onnx_test::add_if(g, "if", "x", "y");
  auto& local = *bg.add_node();
  local.set_op_type("Relu");
  local.add_input("t0");
  local.add_output("t2"); // local name, same as a top-level tensor
  auto& use = *bg.add_node();
  use.set_op_type("Relu");
  use.add_input("t2"); // reads the local t2, not n2's
  use.add_output("y_then");
  auto& nested = *bg.add_node();
  nested.set_op_type("If");
  auto& deep = *onnx_test::add_branch(nested, "else_branch").add_node();
  deep.set_op_type("Relu");
  deep.add_input("t1");
  deep.add_output("z");
  const auto nodes = sp::build_graph(g);
  CHECK(nodes.read_names(3) == std::vector<std::string>{"t0", "t1", "x"});
  std::vector<std::size_t> sources;
  for (std::size_t u = 0; u < 3; ++u) {
    for (auto [e, end] = out_edges(u, nodes.graph); e != end; ++e) {
      if (target(*e, nodes.graph) == 3) {
        sources.push_back(u);
      }
    }
  }
  CHECK(sources == std::vector<std::size_t>{0, 1});
}

TEST_CASE("a name read first inside a subgraph is one tensor to every later reader") {
  // The If's branch is the first to read a weight of a long (heap-held)
  // name and a graph input; top-level nodes read both after it. Found by
  // fuzz_commands: the name's key outlived the copy it viewed (a
  // use-after-free under ASan, and two ids for one tensor without it).
  const std::string weight = "a.weight.whose.name.is.longer.than.small.strings";
  auto m = onnx_test::make_model({}, {"out"});
  auto& g = *m.mutable_graph();
  auto& inside = *onnx_test::add_if(g, "if", "x", "branch_out").add_node();
  inside.set_op_type("Add");
  inside.add_input(weight);
  inside.add_input("x_is_also_read_from_the_branch_first");
  inside.add_output("sum");
  for (int k = 0; k < 40; ++k) { // readers after it, with names of their own between
    auto& n = *g.add_node();
    n.set_name("reader" + std::to_string(k));
    n.set_op_type("Add");
    n.add_input(k % 2 == 0 ? weight : "x_is_also_read_from_the_branch_first");
    n.add_input("branch_out");
    n.add_output(k == 39 ? "out" : "tensor_of_a_longer_name_number_" + std::to_string(k));
  }
  const auto nodes = sp::build_graph(g);
  const std::set<std::string> distinct(nodes.tensors.begin(), nodes.tensors.end());
  CHECK(distinct.size() == nodes.tensors.size());
  CHECK(std::count(nodes.tensors.begin(), nodes.tensors.end(), weight) == 1);
  for (std::size_t v = 1; v < nodes.read_offsets.size() - 1; ++v) {
    const auto names = nodes.read_names(v);
    CHECK(std::count(names.begin(), names.end(), "branch_out") == 1);
  }
}

TEST_CASE("node lists that are not topologically ordered are sharded correctly") {
  // b reads a's output but comes first in the file.
  auto m = onnx_test::make_model(
      {{"b", {"ya"}, {"yb"}}, {"a", {"x"}, {"ya"}}, {"c", {"yb"}, {"yc"}}}, {"yc"});
  const auto& g = m.graph();
  const auto result = sp::shard(g, sp::build_graph(g), {{0, 0, 0}});
  CHECK(result.device(0) == 0);
  CHECK(result.device(1) == 0); // a is upstream of b
  CHECK(result.device(2) == 1);
}

TEST_CASE("names: deterministic names for unnamed nodes; strict mode refuses") {
  auto m = onnx_test::make_model(
      {{"", {"x"}, {"y0"}, "Relu"}, {"Relu_0", {"y0"}, {"y1"}}, {"", {"y1"}, {"y2"}, "Sigmoid"}},
      {"y2"});
  auto strict = m;
  CHECK_THROWS_WITH_AS(sp::assign_names(*strict.mutable_graph(), sp::naming::strict),
                       "--only_manual_sharding needs every node named, but 2 are not: nodes 0 "
                       "(Relu), 2 (Sigmoid)",
                       sp::input_error);
  const auto renamed = sp::assign_names(*m.mutable_graph(), sp::naming::rename_empty);
  CHECK(renamed == std::vector<std::size_t>{0, 2});
  CHECK(m.graph().node(0).name() == "Relu_0_1"); // Relu_0 was taken
  CHECK(m.graph().node(2).name() == "Sigmoid_2");

  auto dup = onnx_test::make_model({{"a", {"x"}, {"y0"}}, {"a", {"y0"}, {"y1"}}}, {"y1"});
  CHECK_THROWS_WITH_AS(sp::assign_names(*dup.mutable_graph(), sp::naming::rename_empty),
                       "node names must be unique, but 1 are not: 'a' (nodes 0, 1)",
                       sp::input_error);
}

TEST_CASE("the three config formats give the same points") {
  temp_dir dir;
  onnx_test::write_file(dir / "list.yaml",
                        "- {node: a, device: 0, stage: 0}\n- node: c\n  device: 1\n  stage: 1\n");
  onnx_test::write_file(dir / "map.yaml",
                        "sharding_info:\n  a: 0\n  c: 1\npipelining_info:\n  a: 0\n  c: 1\n");
  onnx_test::write_file(
      dir / "map.json",
      R"({"sharding_info": {"a": 0, "c": 1}, "pipelining_info": {"a": 0, "c": 1}})");
  auto m = onnx_test::make_model(
      {{"a", {"x"}, {"ya"}}, {"b", {"ya"}, {"yb"}}, {"c", {"yb"}, {"yc"}}}, {"yc"});
  const auto& g = m.graph();
  const std::vector<shardpoint::sharding_point<std::size_t>> want{{0, 0, 0}, {2, 1, 1}};
  CHECK(sp::resolve(g, sp::read_config(dir / "list.yaml")) == want);
  CHECK(sp::resolve(g, sp::read_config(dir / "map.yaml")) == want);
  CHECK(sp::resolve(g, sp::read_config(dir / "map.json")) == want);
  CHECK(sp::resolve(g, {sp::parse_shard_flag("a=0:0"), sp::parse_shard_flag("c=1:1")}) == want);
  const auto only_device = sp::parse_shard_flag("c=3");
  CHECK(only_device.device == 3);
  CHECK_FALSE(only_device.stage.has_value());
}

TEST_CASE("weights in external data files are never opened, and their references are kept") {
  temp_dir dir;
  auto m = onnx_test::make_model({{"a", {"x", "w"}, {"ya"}, "Add"}, {"b", {"ya"}, {"yb"}}}, {"yb"});
  auto& w = *m.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(::onnx::TensorProto::FLOAT);
  w.add_dims(1);
  w.add_dims(4);
  w.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = w.add_external_data();
  location->set_key("location");
  location->set_value("weights-that-do-not-exist.bin"); // opening it would fail
  const fs::path in = dir / "external.onnx";
  sp::save_model(m, in);
  const auto r = onnx_test::shardpoint_cli("shard --input-model '" + in.string() +
                                               "' --shard a=0:0 --output-model '" +
                                               (dir / "out.onnx").string() + "'",
                                           dir.path());
  CHECK(r.code == 0);
  CHECK(r.out.find("  16 B (16 bytes)") != std::string::npos); // its size comes from dims
  const auto out = sp::load_model(dir / "out.onnx");
  REQUIRE(out.graph().initializer_size() == 1);
  CHECK(out.graph().initializer(0).data_location() == ::onnx::TensorProto::EXTERNAL);
  CHECK(out.graph().initializer(0).external_data(0).value() == "weights-that-do-not-exist.bin");
  // Never opened, but a location the ONNX checker refuses is refused by
  // every command, not copied into its output.
  fs::create_directory(dir / "outside");
  onnx_test::write_file(dir / "outside" / "w.bin", std::string(16, '\0'));
  fs::create_directory(dir / "m");
  fs::create_symlink("../outside/w.bin", dir / "m" / "escape.bin");
  for (const auto& [where, why] : std::vector<std::pair<std::string, std::string>>{
           {"/etc/passwd", "is absolute"},
           {"../outside/w.bin", "holds '..'"},
           {"escape.bin", "leaves the model's folder through a symbolic link"}}) {
    location->set_value(where);
    sp::save_model(m, dir / "m" / "bad.onnx");
    // The same location held by a Constant's value (its node read as a
    // view where the command reads views, and parsed beside it).
    auto held = m;
    held.mutable_graph()->mutable_initializer()->Clear();
    auto& constant = *held.mutable_graph()->add_node();
    constant.set_op_type("Constant");
    constant.add_output("w");
    auto& value = *constant.add_attribute();
    value.set_name("value");
    value.set_type(::onnx::AttributeProto::TENSOR);
    *value.mutable_t() = w;
    std::rotate(held.mutable_graph()->mutable_node()->rbegin(),
                held.mutable_graph()->mutable_node()->rbegin() + 1,
                held.mutable_graph()->mutable_node()->rend()); // (first: it writes `w`)
    sp::save_model(held, dir / "m" / "held.onnx");
    for (const auto* bad_model : {"bad.onnx", "held.onnx"}) {
      for (const std::string& command :
           {"shard --shard a=0:0 --output-model " + q(dir / "o.onnx"), std::string("inspect"),
            std::string("suggest --stages 2"),
            std::string("strip --output-model ") + q(dir / "o.onnx")}) {
        const bool positional = command == "inspect";
        const auto bad = onnx_test::shardpoint_cli(
            command + (positional ? " " : " --input-model ") + q(dir / "m" / bad_model),
            dir.path());
        CAPTURE(command);
        CAPTURE(bad_model);
        CAPTURE(bad.err);
        CHECK(bad.code == 2);
        CHECK(bad.err.find("tensor 'w': its external data location '" + where + "' " + why) !=
              std::string::npos);
        CHECK_FALSE(fs::exists(dir / "o.onnx"));
      }
    }
  }
}

TEST_CASE("synth decoder: 29 nodes a layer, a valid model, sizes for every cut") {
  auto m = sp::synth_decoder(6);
  CHECK(m.graph().node_size() == 6 * 29);
  CHECK_NOTHROW(::onnx::checker::check_model(m));
  auto& g = *m.mutable_graph();
  CHECK(sp::assign_names(g, sp::naming::strict).empty());
  const auto nodes = sp::build_graph(g);
  const auto points = sp::resolve(g, {sp::parse_shard_flag("layer1/mlp_residual=0:0"),
                                      sp::parse_shard_flag("layer3/mlp_residual=1:1")});
  const auto result = sp::shard(g, nodes, points);
  const auto r = sp::make_report(m, nodes, result, {});
  REQUIRE(r.groups.size() == 3);
  CHECK(r.groups[0].nodes == 2 * 29);
  CHECK(r.groups[1].nodes == 2 * 29);
  CHECK(r.groups[2].nodes == 2 * 29);
  // The residual stream crosses each cut: [1, 16, 8] floats.
  REQUIRE(r.crossings.size() == 2);
  CHECK(r.crossings[0].name == "layer1/mlp_residual");
  CHECK(r.crossings[0].bytes == 16 * 8 * 4);
  CHECK_THROWS_AS(sp::synth_decoder(0), sp::input_error);
}

TEST_CASE("the report: the same groups and crossings, weights found beside inference or before") {
  // Node by node, the groups are found beside shape inference; with a
  // model-local function, InferShapes changes the model as it runs and
  // they are found before it. The same model otherwise: the same report.
  auto plain = sp::synth_decoder(4);
  auto with_function = plain;
  with_function.add_functions()->set_name("unused");
  std::vector<std::string> reports;
  for (auto* m : {&plain, &with_function}) {
    auto& g = *m->mutable_graph();
    const auto nodes = sp::build_graph(g);
    const auto result = sp::shard(g, nodes, {{28, 0, 0}, {57, 1, 1}, {86, 2, 2}});
    const auto r = sp::make_report(*m, nodes, result, {});
    REQUIRE(r.groups.size() == 4);
    CHECK(r.groups[0].nodes == 29);
    CHECK(r.groups[3].nodes == 29);
    CHECK(r.groups[1].parameter_bytes > 0);
    REQUIRE(r.crossings.size() == 3);
    CHECK(r.crossings[2].bytes == 16 * 8 * 4);
    reports.push_back(shardpoint::io::to_json(r));
  }
  CHECK(reports[0] == reports[1]);
}

TEST_CASE("the report: other work beside its shape inference, or after it on the model as given") {
  // `also` (shard writes the model with it) runs on another thread beside
  // inference node by node; through InferShapes, before it, on this
  // thread; with sizes given (written into the model while the report is
  // made), after the report. It always sees the model as given.
  auto plain = sp::synth_decoder(3);
  auto* tokens = plain.mutable_graph()->mutable_input(0);
  tokens->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
      "batch");
  auto with_function = plain;
  with_function.add_functions()->set_name("unused");
  sp::input_sizes sized;
  sized.dims.push_back({"batch", 4});
  const struct {
    ::onnx::ModelProto* model;
    const sp::input_sizes* sizes;
    bool beside;
  } runs[] = {{&plain, nullptr, true}, {&with_function, nullptr, false}, {&plain, &sized, false}};
  for (const auto& run : runs) {
    CAPTURE(run.model == &plain);
    CAPTURE(run.sizes != nullptr);
    auto& m = *run.model;
    const std::string before = m.SerializeAsString();
    const auto nodes = sp::build_graph(m.graph());
    const auto result = sp::shard(m.graph(), nodes, {{28, 0, 0}, {57, 1, 1}});
    std::string seen;
    std::thread::id on;
    const auto r = sp::make_report(m, nodes, result, {}, run.sizes, [&] {
      seen = m.SerializeAsString();
      on = std::this_thread::get_id();
    });
    CHECK(seen == before);
    CHECK((on != std::this_thread::get_id()) == run.beside);
    REQUIRE(r.crossings.size() == 2);
    CHECK(r.crossings[0].bytes == (run.sizes ? 4 : 1) * 16 * 8 * 4);
    // Its error comes through, and the model is as given.
    CHECK_THROWS_WITH_AS(sp::make_report(m, nodes, result, {}, run.sizes,
                                         [] { throw sp::input_error("cannot write"); }),
                         "cannot write", sp::input_error);
    CHECK(m.SerializeAsString() == before);
  }
  // Nothing crosses: no inference, `also` runs all the same.
  const auto nodes = sp::build_graph(plain.graph());
  bool ran = false;
  sp::make_report(plain, nodes, sp::shard(plain.graph(), nodes, {}), {}, nullptr,
                  [&] { ran = true; });
  CHECK(ran);
}

TEST_CASE("the report's shape inference returns the model exactly as it was") {
  auto m = sp::synth_decoder(3);
  auto& g = *m.mutable_graph();
  // A value_info without a shape, which inference refines in place, and a
  // graph output without one.
  auto* vi = g.add_value_info();
  vi->set_name("layer0/mlp_residual");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  const std::string before = m.SerializeAsString();
  const auto nodes = sp::build_graph(g);
  const auto result = sp::shard(g, nodes, {{28, 0, 0}, {57, 1, 1}});
  const auto r = sp::make_report(m, nodes, result, {});
  REQUIRE(r.crossings.size() == 2);
  CHECK(r.crossings[0].name == "layer0/mlp_residual");
  CHECK(r.crossings[0].bytes == 16 * 8 * 4); // found through the refined value_info
  CHECK(m.SerializeAsString() == before);
  CHECK(sp::estimate_costs(m, sp::cost_model::flops).size() == 3 * 29);
  CHECK(m.SerializeAsString() == before);
}

TEST_CASE("cost estimates: unit, and flops from op type and inferred shapes") {
  auto m = sp::synth_resnet50();
  const auto unit = sp::estimate_costs(m, sp::cost_model::unit);
  CHECK(unit == std::vector<std::int64_t>(175, 1));
  const auto flops = sp::estimate_costs(m, sp::cost_model::flops);
  // conv0: 2 x (64 x 112 x 112 outputs) x (3 x 7 x 7) = 236.03 MFLOP -> 237.
  CHECK(flops.front() == 237);
  // dense0: 2 x 1000 outputs x K = 2048 = 4.1 MFLOP -> 5.
  CHECK(flops.back() == 5);
  // ResNet-50 is about 4.1 GMACs: 8.2 GFLOP, a little more with rounding up.
  const auto total = std::accumulate(flops.begin(), flops.end(), std::int64_t{0});
  CHECK(total > 7'500);
  CHECK(total < 9'000);
}

TEST_CASE("tensor ids: first-seen order and producers, against a map, on many-output graphs") {
  // Nodes of up to 40 outputs each (the name table is sized by node count,
  // so these make it grow many times) reading random earlier tensors.
  std::mt19937 rng(20261126);
  for (int round = 0; round < 20; ++round) {
    const int n = std::uniform_int_distribution<int>(1, 60)(rng);
    std::vector<onnx_test::node_spec> specs;
    std::vector<std::string> written{"x"};
    for (int v = 0; v < n; ++v) {
      onnx_test::node_spec s{"n" + std::to_string(v), {}, {}};
      for (int k = std::uniform_int_distribution<int>(0, 3)(rng); k > 0; --k) {
        s.inputs.push_back(
            written[std::uniform_int_distribution<std::size_t>(0, written.size() - 1)(rng)]);
      }
      for (int k = std::uniform_int_distribution<int>(1, 40)(rng); k > 0; --k) {
        s.outputs.push_back("t" + std::to_string(v) + "_" + std::to_string(k));
      }
      written.insert(written.end(), s.outputs.begin(), s.outputs.end());
      specs.push_back(s);
    }
    const auto m = onnx_test::make_model(specs, {written.back()});
    const auto nodes = sp::build_graph(m.graph());
    // The reference: outputs first (node order), then inputs as read.
    std::map<std::string, std::size_t> id;
    std::vector<std::string> order;
    std::vector<std::size_t> producer;
    const auto see = [&](const std::string& t, std::size_t by) {
      if (id.emplace(t, order.size()).second) {
        order.push_back(t);
        producer.push_back(by);
      }
    };
    for (int v = 0; v < n; ++v) {
      for (const auto& o : specs[static_cast<std::size_t>(v)].outputs) {
        see(o, static_cast<std::size_t>(v));
      }
    }
    for (const auto& s : specs) {
      for (const auto& i : s.inputs) {
        see(i, sp::node_graph::no_producer);
      }
    }
    CHECK(nodes.tensors == order);
    CHECK(nodes.producer == producer);
    for (int v = 0; v < n; ++v) {
      std::set<std::string> reads(specs[static_cast<std::size_t>(v)].inputs.begin(),
                                  specs[static_cast<std::size_t>(v)].inputs.end());
      CHECK(nodes.read_names(static_cast<std::size_t>(v)) ==
            std::vector<std::string>(reads.begin(), reads.end()));
    }
  }
}

TEST_CASE("rule (f) in ONNX terms: graph inputs and initializers read on several devices") {
  // a = x + w, b = a + u, c = b + x, d = c + u, e = d + w; u is an
  // initializer also listed as a graph input (a graph input, then).
  auto m = onnx_test::make_model({{"n0", {"x", "w"}, {"a"}, "Add"},
                                  {"n1", {"a", "u"}, {"b"}, "Add"},
                                  {"n2", {"b", "x"}, {"c"}, "Add"},
                                  {"n3", {"c", "u"}, {"d"}, "Add"},
                                  {"n4", {"d", "w"}, {"e"}, "Add"}},
                                 {"e"});
  auto& g = *m.mutable_graph();
  for (const char* name : {"w", "u"}) {
    auto& t = *g.add_initializer();
    t.set_name(name);
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(4);
    t.set_raw_data(std::string(16, '\0'));
  }
  *g.add_input() = g.input(0);
  g.mutable_input(1)->set_name("u");
  const auto nodes = sp::build_graph(g);
  // The reference: per tensor no node writes, the devices reading it.
  const auto expected = [&](const shardpoint::sharding_result& r) {
    std::map<std::string, std::pair<std::set<int>, std::size_t>> readers;
    for (std::size_t v = 0; v < r.size(); ++v) {
      for (const auto& i : g.node(static_cast<int>(v)).input()) {
        if (r.device(v) && (i == "x" || i == "w" || i == "u")) {
          readers.try_emplace(i, std::set<int>{}, v).first->second.first.insert(*r.device(v));
        }
      }
    }
    std::set<std::pair<std::string, std::size_t>> out; // message, first reader
    for (const auto& [name, reader] : readers) {
      if (reader.first.size() > 1) {
        std::string devices;
        for (const int d : reader.first) {
          devices += (devices.empty() ? "" : ", ") + std::to_string(d);
        }
        out.emplace((name == "w" ? "initializer '" : "graph input '") + name + "' feeds devices " +
                        devices + "; its data is copied to each of them",
                    reader.second);
      }
    }
    return out;
  };
  const auto found = [&](const shardpoint::sharding_result& r) {
    std::set<std::pair<std::string, std::size_t>> out;
    for (const auto& d : sp::validate(g, nodes, r, {})) {
      if (d.rule == shardpoint::rule::input_on_several_devices) {
        REQUIRE(d.vertices.size() == 1);
        out.emplace(d.message, d.vertices[0]);
      }
    }
    return out;
  };
  const shardpoint::sharding_result split(5, {0, 0, 1, 1, 2}, {});
  CHECK(found(split) == expected(split));
  CHECK(found(split).size() == 3);
  const shardpoint::sharding_result one(5, {0, 0, 0, 0, 0}, {});
  CHECK(found(one).empty());
  // Every assignment of 5 nodes to 3 devices (some unset), against the reference.
  std::vector<int> devices(5, -1);
  for (int code = 0; code < 4 * 4 * 4 * 4 * 4; ++code) {
    for (int v = 0, c = code; v < 5; ++v, c /= 4) {
      devices[static_cast<std::size_t>(v)] = c % 4 - 1;
    }
    const shardpoint::sharding_result r(5, devices, {});
    CAPTURE(code);
    CHECK(found(r) == expected(r));
  }
}

TEST_CASE("many nodes, hashed and checked in chunks side by side: the references' results") {
  // Enough nodes for build_graph, assign_names, the structure check and the
  // external-data scan to cut them into chunks on a machine of two cores
  // or more (2 x 16384 nodes); the nodes that matter sit on both sides of
  // every place a cut can fall (a half, a third, ... of the nodes).
  constexpr int n = 5 * 16384 + 7;
  std::mt19937 rng(20261127);
  std::set<int> special;
  for (int parts = 2; parts <= 8; ++parts) {
    for (int k = 1; k < parts; ++k) {
      for (int d = -2; d <= 2; ++d) {
        special.insert((n + parts - 1) / parts * k + d);
      }
    }
  }
  std::vector<onnx_test::node_spec> specs;
  std::vector<std::string> written{"x"};
  for (int v = 0; v < n; ++v) {
    const bool at_cut = special.count(v) != 0;
    onnx_test::node_spec s{at_cut && v % 2 == 0 ? "" : "n" + std::to_string(v), {}, {}};
    s.op = at_cut && v % 2 == 0 ? "Relu" : "Identity";
    for (int k = std::uniform_int_distribution<int>(0, 2)(rng); k > 0; --k) {
      s.inputs.push_back(
          written[std::uniform_int_distribution<std::size_t>(0, written.size() - 1)(rng)]);
    }
    if (at_cut) {
      s.inputs.insert(s.inputs.begin(), ""); // an omitted optional input
    }
    s.outputs.push_back("t" + std::to_string(v));
    if (at_cut) {
      s.outputs.emplace_back(""); // an omitted optional output
    }
    written.push_back(s.outputs.front());
    specs.push_back(s);
  }
  auto m = onnx_test::make_model(specs, {"t" + std::to_string(n - 1)});
  auto& g = *m.mutable_graph();
  // A node with a subgraph at a cut: it reads a tensor from inside only.
  const int with_branch = *special.begin();
  auto& branch = onnx_test::add_branch(*g.mutable_node(with_branch), "body");
  auto& inside = *branch.add_node();
  inside.set_op_type("Relu");
  inside.add_input("t3");
  inside.add_output("inner");

  SUBCASE("tensor ids, producers and reads: a map's, in first-seen order") {
    const auto nodes = sp::build_graph(g);
    std::map<std::string, std::size_t> id;
    std::vector<std::string> order;
    std::vector<std::size_t> producer;
    const auto see = [&](const std::string& t, std::size_t by) {
      if (!t.empty() && id.emplace(t, order.size()).second) {
        order.push_back(t);
        producer.push_back(by);
      }
    };
    for (int v = 0; v < n; ++v) {
      for (const auto& o : specs[static_cast<std::size_t>(v)].outputs) {
        see(o, static_cast<std::size_t>(v));
      }
    }
    for (int v = 0; v < n; ++v) {
      const auto& inputs = specs[static_cast<std::size_t>(v)].inputs;
      for (const auto& i : inputs) {
        see(i, sp::node_graph::no_producer);
      }
    }
    CHECK(nodes.tensors == order);
    CHECK(nodes.producer == producer);
    for (int v = 0; v < n; ++v) {
      const auto& inputs = specs[static_cast<std::size_t>(v)].inputs;
      std::set<std::string> reads(inputs.begin(), inputs.end());
      reads.erase("");
      if (v == with_branch) {
        reads.insert("t3"); // what its subgraph reads from outside
      }
      REQUIRE(nodes.read_names(static_cast<std::size_t>(v)) ==
              std::vector<std::string>(reads.begin(), reads.end()));
    }
  }
  SUBCASE("a tensor written on both sides of a cut names both nodes, the first first") {
    const int second = *special.rbegin();
    g.mutable_node(second)->set_output(0, "t1");
    CHECK_THROWS_WITH_AS(sp::build_graph(g),
                         ("tensor 't1' is written by both node 1 'n1' and " +
                          sp::node_label(g, static_cast<std::size_t>(second)))
                             .c_str(),
                         sp::input_error);
  }
  SUBCASE("names: every unnamed node renamed in order; duplicates across cuts listed") {
    auto copy = m;
    std::vector<std::size_t> unnamed;
    for (int v = 0; v < n; ++v) {
      if (specs[static_cast<std::size_t>(v)].name.empty()) {
        unnamed.push_back(static_cast<std::size_t>(v));
      }
    }
    CHECK(sp::assign_names(*copy.mutable_graph(), sp::naming::rename_empty) == unnamed);
    for (const std::size_t v : unnamed) {
      CHECK(copy.graph().node(static_cast<int>(v)).name() == "Relu_" + std::to_string(v));
    }
    const auto last = static_cast<int>(*special.rbegin());
    g.mutable_node(last)->set_name("n1");
    g.mutable_node(last - 1)->set_name("n3");
    CHECK_THROWS_WITH_AS(sp::assign_names(g, sp::naming::rename_empty),
                         ("node names must be unique, but 2 are not: 'n1' (nodes 1, " +
                          std::to_string(last) + "), 'n3' (nodes 3, " + std::to_string(last - 1) +
                          ")")
                             .c_str(),
                         sp::input_error);
  }
  SUBCASE("a graph output written at the end is found; one written by none is named") {
    CHECK_NOTHROW(sp::parse_graph(m.SerializeAsString()));
    g.mutable_output(0)->set_name("written_by_none");
    CHECK_THROWS_WITH_AS(sp::parse_graph(m.SerializeAsString(), "big"),
                         "'big': graph output 'written_by_none' is produced by no node",
                         sp::input_error);
  }
  SUBCASE("external data named by initializers and nodes' tensors on both sides, in order") {
    const auto external = [](::onnx::TensorProto& t, const std::string& location) {
      t.set_data_type(::onnx::TensorProto::FLOAT);
      t.set_data_location(::onnx::TensorProto::EXTERNAL);
      auto* kv = t.add_external_data();
      kv->set_key("location");
      kv->set_value(location);
    };
    std::vector<std::string> expected; // the initializers' first, then the nodes'
    for (int k = 0; k < n; ++k) {      // every 1000th initializer external, one location twice
      auto& t = *g.add_initializer();
      t.set_name("w" + std::to_string(k));
      if (k % 1000 == 0) {
        const std::string location = "init" + std::to_string(k == 3000 ? 0 : k) + ".bin";
        external(t, location);
        if (k != 3000) {
          expected.push_back(location);
        }
      }
    }
    for (const int v : special) {
      if (v % 3 == 0) {
        auto& a = *g.mutable_node(v)->add_attribute();
        a.set_name("value");
        a.set_type(::onnx::AttributeProto::TENSOR);
        external(*a.mutable_t(), "node" + std::to_string(v) + ".bin");
        expected.push_back("node" + std::to_string(v) + ".bin");
      }
    }
    CHECK(sp::external_locations(g) == expected);
    // The same of the model loaded, its nodes read as views or not (a view
    // holding a tensor is parsed, and its locations found there).
    // Sparse tensors' values and indices name locations too.
    auto& sparse = *g.mutable_node(*special.begin())->add_attribute();
    sparse.set_name("sparse_value");
    sparse.set_type(::onnx::AttributeProto::SPARSE_TENSOR);
    external(*sparse.mutable_sparse_tensor()->mutable_values(), "values.bin");
    external(*sparse.mutable_sparse_tensor()->mutable_indices(), "indices.bin");
    // (The first node naming any: after its own value, where it has one.)
    auto first = std::find_if(expected.begin(), expected.end(),
                              [](const std::string& l) { return l.starts_with("node"); });
    const bool before = *special.begin() % 3 == 0;
    first = expected.insert(first + (before ? 1 : 0), "values.bin");
    expected.insert(first + 1, "indices.bin");
    CHECK(sp::external_locations(g) == expected);
    const std::string bytes = m.SerializeAsString();
    for (const auto how : {sp::node_reading::parsed, sp::node_reading::views,
                           sp::node_reading::views_with_initializers}) {
      const auto loaded = sp::parse_graph(bytes, "<bytes>", how);
      CHECK((loaded.node_views() != nullptr) == (how != sp::node_reading::parsed));
      CHECK(sp::external_locations(loaded) == expected);
      CHECK((loaded.node_views() != nullptr) == (how != sp::node_reading::parsed));
    }
  }
}
