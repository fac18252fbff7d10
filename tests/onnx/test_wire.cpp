// The wire-level fast path (src/wire.hpp) against protobuf's whole-model
// parse: the same skeleton graph, the same report, byte-identical output
// after the same sharding on every shared model; equal messages on inputs
// protobuf would not write (unknown fields, fields out of order, unpacked
// data); and, on every truncation and on random corruptions of a model, the
// same verdict and the same error as the whole parse.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include <google/protobuf/util/message_differencer.h>
#include <nlohmann/json.hpp>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/report.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/report.hpp>
#include <shardpoint/onnx/split.hpp>
#include <shardpoint/onnx/synth.hpp>
#include <shardpoint/onnx/tensor_data.hpp>
#include <shardpoint/shardpoint.hpp>

#include "onnx_support.hpp"

namespace sp = shardpoint;
namespace so = shardpoint::onnx;
using onnx_test::temp_dir;
namespace fs = std::filesystem;

namespace {

// Shards `model` by a few points chosen from `seed`, as `shard` does.
sp::sharding_result shard_randomly(::onnx::ModelProto& model, unsigned seed) {
  auto& g = *model.mutable_graph();
  so::assign_names(g, so::naming::rename_empty);
  const auto nodes = so::build_graph(g);
  std::mt19937 rng(seed);
  const auto n = static_cast<std::size_t>(g.node_size());
  std::vector<sp::sharding_point<std::size_t>> points;
  const int k = 1 + static_cast<int>(rng() % 3);
  std::vector<std::size_t> chosen;
  for (int i = 0; i < k; ++i) {
    chosen.push_back(rng() % n);
  }
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    points.push_back({chosen[i], static_cast<int>(i), static_cast<int>(i)});
  }
  auto result = so::shard(g, nodes, points);
  so::annotate(g, result);
  return result;
}

std::string report_json(::onnx::ModelProto& model, const sp::sharding_result& r) {
  const auto nodes = so::build_graph(model.graph());
  return sp::io::to_json(so::make_report(model, nodes, r, {}));
}

bool same_message(const std::string& a, const std::string& b) {
  ::onnx::ModelProto x;
  ::onnx::ModelProto y;
  REQUIRE(x.ParseFromString(a));
  REQUIRE(y.ParseFromString(b));
  return google::protobuf::util::MessageDifferencer::Equals(x, y);
}

// What a read gives: the error message, or the nodes it found.
std::string verdict(const std::function<so::loaded_model()>& read) {
  try {
    const auto m = read();
    std::string nodes = "ok:";
    for (const auto& n : m.proto().graph().node()) {
      nodes += n.SerializeAsString() + "|";
    }
    return nodes;
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

} // namespace

TEST_CASE("every shared model: the fast path reads it, and writes it back byte for byte") {
  SKIP_WITHOUT_MODELS();
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() != ".onnx") {
      continue;
    }
    CAPTURE(entry.path().filename().string());
    const std::string file = onnx_test::read_file(entry.path());
    auto fast = so::read_graph(entry.path());
    CHECK(fast.is_skeleton());
    CHECK(so::serialize_model(fast) == file);
    auto whole = so::read_model(entry.path());
    CHECK_FALSE(whole.is_skeleton());
    // The skeleton is the model without the large data fields.
    CHECK(fast.proto().graph().node_size() == whole.proto().graph().node_size());
    CHECK(fast.proto().graph().initializer_size() == whole.proto().graph().initializer_size());
    if (entry.path().filename() == "resnet50-v1-7-replica.onnx") { // weights as initializers
      CHECK(fast.proto().ByteSizeLong() < file.size() / 100);
    }
    for (unsigned seed = 0; seed < 4; ++seed) {
      CAPTURE(seed);
      auto a = so::read_graph(entry.path());
      auto b = so::read_model(entry.path());
      const auto ra = shard_randomly(a.proto(), seed);
      const auto rb = shard_randomly(b.proto(), seed);
      const std::string fast_out = so::serialize_model(a);
      const std::string whole_out = so::serialize_model(b);
      CHECK(fast_out.size() == whole_out.size());
      CHECK(fast_out == whole_out);
      // To a file, its unchanged runs copied from the input's by the kernel.
      temp_dir dir;
      so::save_model(a, dir / "out.onnx");
      CHECK(onnx_test::read_file(dir / "out.onnx") == whole_out);
      if (seed == 0) { // the report's shape inference sees the same graph
        CHECK(report_json(a.proto(), ra) == report_json(b.proto(), rb));
      }
    }
  }
}

TEST_CASE("split on a skeleton: every stage file byte for byte the whole model's") {
  SKIP_WITHOUT_MODELS();
  // The stage files, by name, with their bytes.
  const auto contents = [](const fs::path& folder) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(folder)) {
      out[e.path().filename().string()] = onnx_test::read_file(e.path());
    }
    return out;
  };
  std::size_t compared = 0;
  std::size_t stripped = 0;
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() != ".onnx") {
      continue;
    }
    for (const bool external : {false, true}) {
      CAPTURE(entry.path().filename().string());
      CAPTURE(external);
      auto a = so::read_graph(entry.path());
      auto b = so::read_model(entry.path());
      const auto ra = shard_randomly(a.proto(), 7);
      const auto rb = shard_randomly(b.proto(), 7);
      const auto na = so::build_graph(a.proto().graph());
      const auto nb = so::build_graph(b.proto().graph());
      so::split_options options;
      options.external_data = external;
      std::optional<sp::io::split_plan> plan;
      try {
        plan = so::plan_split(b.proto().graph(), nb, rb, options);
      } catch (const sp::error&) {
        CHECK_THROWS(so::plan_split(a.proto().graph(), na, ra, options));
        continue;
      }
      temp_dir dir;
      so::write_split(a, na, so::plan_split(a.proto().graph(), na, ra, options), dir / "fast",
                      entry.path(), options);
      so::write_split(b.proto(), nb, *plan, dir / "whole", entry.path(), options);
      const auto fast = contents(dir / "fast");
      // A stage model each, pipeline.json and the manifest; with external
      // data, a data file for each stage holding weights, none empty.
      std::size_t data_files = 0;
      for (const auto& [name, bytes] : fast) {
        if (name.ends_with(".data")) {
          ++data_files;
          CHECK(!bytes.empty());
        }
      }
      CHECK(data_files <= (external ? plan->stages.size() : 0));
      CHECK(fast.size() == plan->stages.size() + data_files + 2);
      CHECK(fast == contents(dir / "whole"));
      ++compared;
      // Stages whose weights were copied as byte ranges of the input.
      stripped += a.proto().ByteSizeLong() * 2 < fs::file_size(entry.path()) ? 1 : 0;
    }
  }
  CHECK(compared >= 4);
  CHECK(stripped >= 2);
}

TEST_CASE("generated decoders and external data: shard and split byte for byte") {
  temp_dir dir;
  // A decoder with large weights (hidden 128: 64 KiB matrices, left in the
  // file), and one whose first weight lives in an external data file.
  std::vector<fs::path> models;
  for (const int hidden : {8, 128}) {
    models.push_back(dir / ("decoder" + std::to_string(hidden) + ".onnx"));
    so::save_model(so::synth_decoder(3, hidden), models.back());
  }
  auto model = so::synth_decoder(2, 128);
  auto& inits = *model.mutable_graph()->mutable_initializer();
  auto& w = *std::max_element(inits.begin(), inits.end(), [](const auto& x, const auto& y) {
    return x.raw_data().size() < y.raw_data().size();
  });
  REQUIRE(w.raw_data().size() > (64u << 10)); // more than the skeleton keeps
  onnx_test::write_file(dir / "w.bin", w.raw_data());
  const auto bytes = w.raw_data().size();
  w.clear_raw_data();
  w.set_data_location(::onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", "w.bin"},
                                   {"length", std::to_string(bytes)}}) {
    auto* e = w.add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  models.push_back(dir / "external.onnx");
  so::save_model(model, models.back());

  for (const auto& path : models) {
    CAPTURE(path.filename().string());
    auto a = so::read_graph(path);
    auto b = so::read_model(path);
    REQUIRE(a.is_skeleton());
    const auto ra = shard_randomly(a.proto(), 3);
    const auto rb = shard_randomly(b.proto(), 3);
    CHECK(so::serialize_model(a) == so::serialize_model(b));
    CHECK(report_json(a.proto(), ra) == report_json(b.proto(), rb));
    // Split by device (the random points give each one device and stage).
    const auto na = so::build_graph(a.proto().graph());
    const auto nb = so::build_graph(b.proto().graph());
    const so::split_options options;
    const auto plan = so::plan_split(b.proto().graph(), nb, rb, options);
    const auto out = dir / ("split-" + path.stem().string());
    fs::create_directory(out);
    so::write_split(a, na, so::plan_split(a.proto().graph(), na, ra, options), out / "fast", path,
                    options);
    so::write_split(b.proto(), nb, plan, out / "whole", path, options);
    for (const auto& stage : plan.stages) {
      CHECK(onnx_test::read_file(out / "fast" / stage.file) ==
            onnx_test::read_file(out / "whole" / stage.file));
    }
  }
}

TEST_CASE("many nodes, parsed in chunks side by side: the whole parse's nodes and verdicts") {
  // Above 2 x 16384 nodes (wire.cpp's nodes_per_thread) the reader parses the
  // nodes in as many chunks as the machine has cores, up to 8, each on its
  // own thread; below, on one.
  const auto model = so::synth_decoder(1500, 8);
  const int n = model.graph().node_size();
  REQUIRE(n > 2 * 16384);
  const std::string bytes = model.SerializeAsString();
  {
    auto a = so::parse_graph(bytes);
    auto b = so::parse_model(bytes);
    REQUIRE(a.is_skeleton());
    REQUIRE(a.proto().graph().node_size() == n);
    for (int v = 0; v < n; v += 97) { // in order, each its own
      REQUIRE(a.proto().graph().node(v).SerializeAsString() ==
              b.proto().graph().node(v).SerializeAsString());
    }
    shard_randomly(a.proto(), 5);
    shard_randomly(b.proto(), 5);
    CHECK(so::serialize_model(a) == so::serialize_model(b));
  }
  // A node protobuf refuses (its name's tag given wire type 7) in the first
  // chunk, the middle and the last: the same error as the whole parse.
  for (const int v : {0, n / 2 + 1, n - 1}) {
    CAPTURE(v);
    const std::string& name = model.graph().node(v).name();
    REQUIRE(name.size() < 128);
    const std::string field = std::string(1, '\x1a') + static_cast<char>(name.size()) + name;
    const auto at = bytes.find(field);
    REQUIRE(at != std::string::npos);
    std::string input = bytes;
    input[at] = '\x1f';
    const std::string fast = verdict([&] { return so::parse_graph(input); });
    CHECK(fast.starts_with("error: "));
    CHECK(fast == verdict([&] { return so::parse_model(input); }));
  }
}

TEST_CASE("annotate on a skeleton: annotate()'s bytes on the whole model, no attributes held") {
  // Nodes of each kind the marks' place depends on: without attributes; with
  // attributes and fields after them (doc_string, domain); with sharding
  // attributes already (replaced); with an unknown field (which protobuf
  // writes last, so this node is given the attributes themselves).
  auto m = onnx_test::make_model(
      {{"a", {"x"}, {"y"}}, {"b", {"y"}, {"z"}}, {"c", {"z"}, {"u"}}, {"d", {"u"}, {"w"}}}, {"w"});
  auto& g = *m.mutable_graph();
  auto* alpha = g.mutable_node(1)->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(::onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5F);
  g.mutable_node(1)->set_doc_string("fields 6 and 7 follow the attributes");
  g.mutable_node(1)->set_domain("");
  so::annotate(*g.mutable_node(2), 7, 9); // stale: replaced
  auto* beta = g.mutable_node(2)->add_attribute();
  beta->set_name("beta");
  beta->set_type(::onnx::AttributeProto::INT);
  beta->set_i(3);
  // Unknown: a field 50, and a field 3 (the name's number) of another wire
  // type, which protobuf writes after the attributes, not before.
  auto* unknown = g.mutable_node(3)->GetReflection()->MutableUnknownFields(g.mutable_node(3));
  unknown->AddFixed32(3, 1);
  unknown->AddVarint(50, 1);
  const std::string bytes = m.SerializeAsString();
  const std::vector<std::pair<std::vector<int>, std::vector<int>>> results = {
      {{0, 0, 1, 1}, {0, 0, 1, 1}}, // both
      {{0, 1, 2, 300}, {}},         // devices only (the stages removed), a 2-byte value
      {{}, {1, 1, 0, 0}},           // stages only
      {{}, {}},                     // neither: every sharding attribute removed
      {{0, -1, 1, -1}, {-1, 0, -1, 1}}};
  for (const auto& result : results) {
    const auto& devices = result.first; // (not a structured binding: clang 14's CAPTURE)
    const auto& stages = result.second;
    CAPTURE(devices.size());
    CAPTURE(stages.size());
    const sp::sharding_result r(4, devices, stages);
    auto a = so::parse_graph(bytes);
    auto b = so::parse_model(bytes);
    REQUIRE(a.is_skeleton());
    so::annotate(a, r);
    so::annotate(*b.proto().mutable_graph(), r);
    CHECK(so::serialize_model(a) == so::serialize_model(b));
    CHECK(so::serialized_size(a) == so::serialize_model(b).size());
    // In memory, only the node with an unknown field holds them.
    for (int v = 0; v < 3; ++v) {
      for (const auto& attribute : a.proto().graph().node(v).attribute()) {
        CHECK_FALSE(so::is_sharding_attribute(attribute));
      }
    }
    temp_dir dir;
    so::save_model(a, dir / "a.onnx");
    CHECK(onnx_test::read_file(dir / "a.onnx") == so::serialize_model(b));
  }
  // Every shared model, sharded as the commands shard it.
  if (onnx_test::models_dir().empty() || !fs::exists(onnx_test::models_dir())) {
    return;
  }
  for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
    if (entry.path().extension() != ".onnx") {
      continue;
    }
    CAPTURE(entry.path().filename().string());
    auto a = so::read_graph(entry.path());
    auto b = so::read_model(entry.path());
    auto& gb = *b.proto().mutable_graph();
    so::assign_names(*a.proto().mutable_graph(), so::naming::rename_empty);
    so::assign_names(gb, so::naming::rename_empty);
    const auto n = static_cast<std::size_t>(gb.node_size());
    const auto r = so::shard(gb, so::build_graph(gb), {{n / 3, 0, 0}, {2 * n / 3, 1, 1}});
    so::annotate(a, r);
    so::annotate(gb, r);
    CHECK(so::serialize_model(a) == so::serialize_model(b));
  }
}

TEST_CASE("save_model writes the rewrite atomically, also over its own input") {
  SKIP_WITHOUT_MODELS();
  temp_dir dir;
  const auto path = dir / "m.onnx";
  fs::copy_file(onnx_test::models_dir() / "light_squeezenet.onnx", path);
  // The copy keeps the shared model's mode (0444): a read-only file is
  // never replaced (test_files), so it is made the user's own.
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  auto m = so::read_graph(path);
  REQUIRE(m.is_skeleton());
  shard_randomly(m.proto(), 1);
  const std::string expected = so::serialize_model(m);
  so::save_model(m, path); // the input stays mapped; the rename replaces it
  CHECK(onnx_test::read_file(path) == expected);
  CHECK(dir.files() == std::vector<std::string>{"m.onnx"});
  // Weights of 256 KiB a matrix: the unchanged runs are copied file to file
  // from the input's descriptor -- the old file, still open, which the
  // rename then replaces.
  const auto heavy = dir / "heavy.onnx";
  so::save_model(so::synth_decoder(2, 256), heavy);
  auto h = so::read_graph(heavy);
  REQUIRE(h.is_skeleton());
  shard_randomly(h.proto(), 2);
  const std::string heavy_expected = so::serialize_model(h);
  REQUIRE(heavy_expected != onnx_test::read_file(heavy));
  so::save_model(h, heavy);
  CHECK(onnx_test::read_file(heavy) == heavy_expected);
  CHECK(dir.files() == std::vector<std::string>{"heavy.onnx", "m.onnx"});
}

TEST_CASE("inputs protobuf would not write: the same message after the same edit") {
  // A model with an initializer, unknown fields at every level, and the
  // graph's fields out of order, built by hand from serialised pieces.
  auto base = onnx_test::make_model({{"a", {"x", "w"}, {"y"}, "Add"}, {"b", {"y"}, {"z"}}}, {"z"});
  auto& w = *base.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(::onnx::TensorProto::FLOAT);
  w.add_dims(1);
  w.add_dims(4);
  w.set_raw_data(std::string(16, '\x01'));
  const auto varint = [](std::uint64_t v) {
    std::string s;
    google::protobuf::io::StringOutputStream out(&s);
    google::protobuf::io::CodedOutputStream(&out).WriteVarint64(v);
    return s;
  };
  const auto unknown = [&](int field) { // a varint field of that number
    return varint(static_cast<std::uint64_t>(field) << 3) + '\x07';
  };
  const auto with_length = [&](int field, const std::string& value) {
    return varint((static_cast<std::uint64_t>(field) << 3) | 2) + varint(value.size()) + value;
  };
  // Graph: outputs first, then an unknown field, then nodes (each with an
  // unknown field), the initializer (big float data, unpacked, then
  // packed, and an unknown field), inputs.
  const auto& g = base.graph();
  std::string graph;
  graph += with_length(12, g.output(0).SerializeAsString());
  graph += unknown(30);
  for (const auto& n : g.node()) {
    graph += with_length(1, n.SerializeAsString() + unknown(31));
  }
  ::onnx::TensorProto big;
  big.set_name("w");
  big.set_data_type(::onnx::TensorProto::FLOAT);
  big.add_dims(1);
  big.add_dims(4);
  std::string tensor = big.SerializeAsString();
  for (int i = 0; i < 4; ++i) { // unpacked float_data: fixed32 fields
    tensor += std::string(1, static_cast<char>((4 << 3) | 5)) + std::string(4, '\x02');
  }
  tensor += unknown(29);
  tensor += with_length(9, std::string((128 << 10), '\x03')); // large raw_data, stripped
  graph += with_length(5, tensor);
  graph += with_length(11, g.input(0).SerializeAsString());
  graph += with_length(2, "reordered");
  std::string model;
  model += unknown(40);
  model += with_length(7, graph);
  ::onnx::ModelProto rest;
  rest.set_ir_version(8);
  rest.add_opset_import()->set_version(13);
  model += rest.SerializeAsString();

  auto fast = so::parse_graph(model);
  REQUIRE(fast.is_skeleton());
  auto whole = so::parse_model(model);
  CHECK(so::serialize_model(fast) == model); // verbatim when nothing changed
  const auto ra = shard_randomly(fast.proto(), 3);
  shard_randomly(whole.proto(), 3);
  const std::string fast_out = so::serialize_model(fast);
  const std::string whole_out = so::serialize_model(whole);
  // Field order and encodings kept: not the same bytes, the same message.
  CHECK(fast_out != whole_out);
  CHECK(same_message(fast_out, whole_out));
  CHECK(fast_out.size() > (128 << 10)); // the stripped data is written back
  CHECK(ra.size() == 2);
}

TEST_CASE("malformed input: every truncation and random corruptions, the same verdict") {
  auto m = onnx_test::make_model({{"a", {"x"}, {"y"}}, {"b", {"y"}, {"z"}}}, {"z"});
  auto& w = *m.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(::onnx::TensorProto::INT64);
  w.add_dims(70000);
  for (int i = 0; i < 70000; ++i) { // packed varints past kept_data_bytes
    w.add_int64_data(i * 997);
  }
  const std::string bytes = m.SerializeAsString();
  const auto agree = [&](const std::string& input) {
    const std::string fast = verdict([&] { return so::parse_graph(input); });
    const std::string whole = verdict([&] { return so::parse_model(input); });
    CHECK(fast == whole);
  };
  agree(bytes);
  // Every cut near the start and the end, and a spread through the middle.
  for (std::size_t cut = 0; cut < bytes.size();
       cut += (cut < 400 || cut + 400 > bytes.size()) ? 1 : 997) {
    agree(bytes.substr(0, cut));
  }
  std::mt19937 rng(16);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string input = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Mostly in the structure (the first and last bytes), some in the data.
      const std::size_t at = rng() % 3 == 0
                                 ? rng() % input.size()
                                 : (rng() % 2 ? rng() % 200 : input.size() - 1 - rng() % 200);
      input[at] = static_cast<char>(rng() % 256);
    }
    agree(input);
  }
}

TEST_CASE("tags and lengths padded past their shortest form: protobuf's verdict") {
  // CodedInputStream reads a varint padded to ten bytes; protobuf's parser
  // takes a tag or a length in at most five. The scan once read the graph's
  // length padded to six bytes and sharded a model that onnx.load refuses.
  auto m = onnx_test::make_model({{"a", {"x"}, {"y"}}, {"b", {"y"}, {"z"}}}, {"z"});
  auto& w = *m.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(::onnx::TensorProto::FLOAT);
  w.add_dims(1 << 15);
  w.set_raw_data(std::string(std::size_t{4} << 15, '\x01'));   // large: its length is walked
  const auto padded = [](std::uint64_t v, std::size_t bytes) { // v in exactly `bytes` bytes
    std::string s;
    for (std::size_t i = 0; i + 1 < bytes; ++i, v >>= 7) {
      s += static_cast<char>((v & 0x7f) | 0x80);
    }
    return s + static_cast<char>(v & 0x7f);
  };
  const auto field = [&](int number, const std::string& value, std::size_t tag_bytes,
                         std::size_t length_bytes) {
    return padded((static_cast<std::uint64_t>(number) << 3) | 2, tag_bytes) +
           padded(value.size(), length_bytes) + value;
  };
  const auto shortest_of = [](std::uint64_t v) {
    return static_cast<std::size_t>(google::protobuf::io::CodedOutputStream::VarintSize64(v));
  };
  // The model rebuilt from its fields, one of them padded: `where` 0 the
  // graph, 1 the first node, 2 the initializer, 3 the initializer's data;
  // its tag to `tag_bytes`, its length to `length_bytes` (0: shortest).
  const auto build = [&](int where, std::size_t tag_bytes, std::size_t length_bytes) {
    const auto& g = m.graph();
    const auto pad = [&](int here, int number, const std::string& value) {
      const std::size_t shortest = shortest_of(value.size());
      return here == where ? field(number, value, tag_bytes, std::max(length_bytes, shortest))
                           : field(number, value, 1, shortest);
    };
    std::string graph;
    for (int i = 0; i < g.node_size(); ++i) {
      graph += pad(i == 0 ? 1 : -1, 1, g.node(i).SerializeAsString());
    }
    ::onnx::TensorProto head = g.initializer(0);
    head.clear_raw_data();
    graph += pad(2, 5, head.SerializeAsString() + pad(3, 9, g.initializer(0).raw_data()));
    for (const auto& in : g.input()) {
      graph += field(11, in.SerializeAsString(), 1, shortest_of(in.ByteSizeLong()));
    }
    for (const auto& out : g.output()) {
      graph += field(12, out.SerializeAsString(), 1, shortest_of(out.ByteSizeLong()));
    }
    ::onnx::ModelProto rest = m;
    rest.clear_graph();
    return rest.SerializeAsString() + pad(0, 7, graph);
  };
  REQUIRE(so::parse_graph(build(-1, 1, 0)).is_skeleton()); // nothing padded: the scan reads it
  int accepted = 0;
  int refused = 0;
  for (int where = 0; where < 4; ++where) {
    for (std::size_t bytes = 2; bytes <= 10; ++bytes) {
      for (const bool on_tag : {true, false}) {
        CAPTURE(where);
        CAPTURE(bytes);
        CAPTURE(on_tag);
        // (a length shorter than its shortest form is not a padding)
        const std::string input = build(where, on_tag ? bytes : 1, on_tag ? 0 : bytes);
        const std::string fast = verdict([&] { return so::parse_graph(input); });
        const std::string whole = verdict([&] { return so::parse_model(input); });
        CHECK(fast == whole);
        (fast.rfind("ok:", 0) == 0 ? accepted : refused) += 1;
      }
    }
  }
  CHECK(accepted > 0); // padded to five bytes: protobuf reads it
  CHECK(refused > 0);  // to six or more: protobuf refuses it
}

TEST_CASE("nesting at protobuf's recursion limit: accepted and refused alike") {
  int accepted = 0;
  int refused = 0;
  for (int depth : {30, 31, 32, 33, 34, 40, 48, 49, 50, 51, 60}) {
    CAPTURE(depth);
    auto m = onnx_test::make_model({{"a", {"x"}, {"y"}}}, {"y"});
    // Nest If subgraphs: each level is a node, an attribute and a graph.
    ::onnx::GraphProto* g = m.mutable_graph();
    for (int i = 0; i < depth; ++i) {
      auto& n = *g->add_node();
      n.set_op_type("If");
      auto& a = *n.add_attribute();
      a.set_name("then_branch");
      a.set_type(::onnx::AttributeProto::GRAPH);
      g = a.mutable_g();
    }
    const std::string bytes = m.SerializePartialAsString();
    const std::string fast = verdict([&] { return so::parse_graph(bytes); });
    const std::string whole = verdict([&] { return so::parse_model(bytes); });
    CHECK(fast == whole);
    (fast.rfind("ok:", 0) == 0 ? accepted : refused) += 1;
  }
  CHECK(accepted > 0); // the limit lies inside the range tried
  CHECK(refused > 0);
}

TEST_CASE("external data whose offset or length is not a byte count: bad input, not a crash") {
  // std::stoull took "-1" and threw std::invalid_argument (exit 4) on "x".
  ::onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(::onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = t.add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  auto* offset = t.add_external_data();
  offset->set_key("offset");
  for (const std::string bad : {"x", "-1", "", "12abc", "99999999999999999999999"}) {
    CAPTURE(bad);
    offset->set_value(bad);
    CHECK_THROWS_AS(so::raw_bytes(t, "."), sp::bad_input_error);
  }
  try {
    offset->set_value("x");
    (void)so::raw_bytes(t, ".");
  } catch (const sp::bad_input_error& e) {
    CHECK(std::string(e.what()).find("external data offset 'x' is not a byte count") !=
          std::string::npos);
  }
}

namespace {

// What `shard` does with a loaded model, through the functions that take
// one (graph.hpp): the points from `seed` by node names of `names` (a
// parse of the same model), then the written bytes and every figure.
struct sharded_through_model {
  std::vector<std::size_t> renamed;
  so::node_graph nodes;
  sp::sharding_result result;
  std::vector<std::string> diagnostics;
  std::string bytes;
  bool views_kept = false; // whether the nodes were never parsed
};

sharded_through_model shard_through_model(so::loaded_model model, const ::onnx::GraphProto& names,
                                          unsigned seed) {
  sharded_through_model out;
  out.renamed = so::assign_names(model, so::naming::rename_empty);
  out.nodes = so::build_graph(model);
  std::mt19937 rng(seed);
  std::set<int> chosen; // named nodes, in order, each once
  for (int i = 0, k = 1 + static_cast<int>(rng() % 3); i < k && names.node_size() > 0; ++i) {
    const int v = static_cast<int>(rng() % static_cast<unsigned>(names.node_size()));
    if (!names.node(v).name().empty()) {
      chosen.insert(v);
    }
  }
  std::vector<so::config_entry> entries;
  for (const int v : chosen) {
    const int i = static_cast<int>(entries.size());
    entries.push_back({names.node(v).name(), i, i, "test"});
  }
  out.result = so::shard(model, out.nodes, so::resolve(model, entries));
  so::annotate(model, out.result);
  for (const auto& d : so::validate(model, out.nodes, out.result, {})) {
    out.diagnostics.push_back(d.message);
  }
  out.bytes = so::serialize_model(model);
  out.views_kept = model.node_views() != nullptr;
  return out;
}

void check_same(const sharded_through_model& views, const sharded_through_model& parsed) {
  CHECK(views.renamed == parsed.renamed);
  CHECK(views.nodes.tensors == parsed.nodes.tensors);
  CHECK(views.nodes.producer == parsed.nodes.producer);
  CHECK(views.nodes.read_offsets == parsed.nodes.read_offsets);
  CHECK(views.nodes.read_ids == parsed.nodes.read_ids);
  CHECK(std::ranges::equal(views.result.devices(), parsed.result.devices()));
  CHECK(std::ranges::equal(views.result.stages(), parsed.result.stages()));
  CHECK(views.diagnostics == parsed.diagnostics);
  CHECK(views.bytes.size() == parsed.bytes.size());
  CHECK(views.bytes == parsed.bytes);
}

// Models for the views against the parse: a decoder, ResNet-50, one with
// an unnamed node, and every shared model; written into `dir`.
std::vector<fs::path> view_test_models(const fs::path& dir) {
  std::vector<fs::path> models;
  models.push_back(dir / "decoder.onnx");
  so::save_model(so::synth_decoder(3, 8), models.back());
  models.push_back(dir / "resnet.onnx");
  so::save_model(so::synth_resnet50(), models.back());
  // A decoder whose second node has no name: it is named, so parsed.
  auto unnamed = so::synth_decoder(2, 8);
  unnamed.mutable_graph()->mutable_node(1)->clear_name();
  models.push_back(dir / "unnamed.onnx");
  so::save_model(unnamed, models.back());
  // Sharded: devices on every node, stages on some (read by the views; a
  // new sharding parses them first, to remove the old attributes).
  auto sharded = so::synth_decoder(2, 8);
  const auto n = static_cast<std::size_t>(sharded.graph().node_size());
  std::vector<int> devices(n, 0);
  std::vector<int> stages(n, sp::sharding_result::unset);
  for (std::size_t v = n / 2; v < n; ++v) {
    devices[v] = 1;
    stages[v] = v % 3 == 0 ? 2 : sp::sharding_result::unset;
  }
  stages[0] = 0;
  so::annotate(*sharded.mutable_graph(), sp::sharding_result(n, devices, stages));
  models.push_back(dir / "sharded.onnx");
  so::save_model(sharded, models.back());
  if (!onnx_test::models_dir().empty()) {
    for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
      if (entry.path().extension() == ".onnx") {
        models.push_back(entry.path());
      }
    }
  }
  return models;
}

} // namespace

TEST_CASE("nodes read as views: shard's every figure and byte as with parsed nodes") {
  temp_dir dir;
  const auto models = view_test_models(dir.path());
  int kept = 0;
  for (const auto& path : models) {
    CAPTURE(path.filename().string());
    const auto whole = so::read_model(path);
    const auto& g = whole.proto().graph();
    const bool named = std::none_of(g.node().begin(), g.node().end(),
                                    [](const auto& node) { return node.name().empty(); });
    // Every node one the scan reads as a view (and at least one): plain,
    // or plain but for a tensor, graph or type, which it parses.
    const bool plain = g.node_size() > 0 &&
                       std::none_of(g.node().begin(), g.node().end(), onnx_test::views_refuse);
    const bool sharded = so::has_annotations(g);
    for (unsigned seed = 0; seed < 3; ++seed) {
      CAPTURE(seed);
      auto views = so::read_graph(path, so::node_reading::views);
      // Read as views exactly when every node is plain.
      CHECK((views.node_views() != nullptr) == plain);
      const auto a = shard_through_model(std::move(views), g, seed);
      const auto b = shard_through_model(so::read_graph(path), g, seed);
      check_same(a, b);
      // Parsed only where a node needed a name, or had sharding attributes
      // the new ones replace.
      CHECK(a.views_kept == (plain && named && !sharded));
      kept += a.views_kept ? 1 : 0;
    }
    // proto() parses the views into the model the parse gives.
    auto views = so::read_graph(path, so::node_reading::views);
    CHECK(same_message(views.proto().SerializeAsString(),
                       so::read_graph(path).proto().SerializeAsString()));
    CHECK(views.node_views() == nullptr);
    // With the initializers parsed: the skeleton holds them as the parse
    // does, beside the same views, and proto() gives the same model.
    auto with = so::read_graph(path, so::node_reading::views_with_initializers);
    REQUIRE((with.node_views() != nullptr) == plain);
    if (plain) {
      const auto parsed = so::read_graph(path);
      ::onnx::GraphProto a = with.proto_without_nodes().graph();
      ::onnx::GraphProto b = parsed.proto().graph();
      b.clear_node();
      CHECK(a.SerializeAsString() == b.SerializeAsString());
    }
    CHECK(same_message(with.proto().SerializeAsString(),
                       so::read_graph(path).proto().SerializeAsString()));
  }
  CHECK(kept >= 6); // the decoder and ResNet-50, at least
  // Bytes in memory, as the Python bindings give them.
  const std::string bytes = so::synth_decoder(2, 8).SerializeAsString();
  auto from_bytes = so::parse_graph(bytes, "<bytes>", so::node_reading::views);
  REQUIRE(from_bytes.node_views() != nullptr);
  CHECK(so::serialize_model(from_bytes) == bytes);
  // Sized as views, parsed, then written: the same bytes.
  auto sized = so::parse_graph(bytes, "<bytes>", so::node_reading::views);
  const std::size_t size = so::serialized_size(sized);
  REQUIRE(sized.node_views() != nullptr);
  (void)sized.proto();
  REQUIRE(sized.node_views() == nullptr);
  std::string out(size, '\0');
  so::serialize_into(sized, out.data(), out.size());
  CHECK(out == bytes);
}

TEST_CASE("for_each_node and inspect on views: what the parsed nodes give, nothing parsed") {
  temp_dir dir;
  auto models = view_test_models(dir.path());
  // Two nodes of one name (listed, not named), and a sharded model (read as
  // views, its attributes from them).
  auto shared = so::synth_decoder(1, 8);
  shared.mutable_graph()->mutable_node(3)->set_name(shared.graph().node(1).name());
  models.push_back(dir / "shared_name.onnx");
  so::save_model(shared, models.back());
  auto sharded = so::synth_decoder(2, 8);
  const auto n = static_cast<std::size_t>(sharded.graph().node_size());
  std::vector<int> devices(n, 0);
  std::fill(devices.begin() + static_cast<std::ptrdiff_t>(n / 2), devices.end(), 1);
  so::annotate(*sharded.mutable_graph(), sp::sharding_result(n, devices, devices));
  models.push_back(dir / "sharded.onnx");
  so::save_model(sharded, models.back());
  using fields =
      std::tuple<std::string, std::string, std::vector<std::string>, std::vector<std::string>>;
  const auto listed = [](const so::loaded_model& m) {
    std::vector<fields> out;
    so::for_each_node(m, [&](std::size_t v, const so::node_fields& n) {
      CHECK(v == out.size());
      out.emplace_back(std::string(n.name), std::string(n.op_type),
                       std::vector<std::string>(n.inputs.begin(), n.inputs.end()),
                       std::vector<std::string>(n.outputs.begin(), n.outputs.end()));
    });
    return out;
  };
  int listed_as_views = 0;
  for (const auto& path : models) {
    CAPTURE(path.filename().string());
    const auto whole = so::read_model(path);
    std::vector<fields> expected;
    for (const auto& n : whole.proto().graph().node()) {
      expected.emplace_back(n.name(), n.op_type(),
                            std::vector<std::string>(n.input().begin(), n.input().end()),
                            std::vector<std::string>(n.output().begin(), n.output().end()));
    }
    const auto views = so::read_graph(path, so::node_reading::views);
    const bool as_views = views.node_views() != nullptr;
    CHECK(listed(views) == expected);
    CHECK(so::has_annotations(views) == so::has_annotations(whole.proto().graph()));
    CHECK((views.node_views() != nullptr) == as_views); // neither parsed them
    listed_as_views += as_views ? 1 : 0;
    // inspect: the listing of the views is the parse's, in every format,
    // with and without a pattern, from a file and from bytes.
    const std::string bytes = whole.proto().SerializeAsString();
    for (const char* format : {"table", "json"}) {
      for (const char* grep : {"", "Conv|MatMul", "^layer0/", "_1$"}) {
        CAPTURE(format);
        CAPTURE(grep);
        sp::app::inspect_options a;
        a.model = path.string();
        a.grep = grep;
        a.report.format = format;
        const std::string parsed = sp::app::inspect_model(a, sp::app::reading::graph);
        if (std::string_view(format) == "json") { // written as nlohmann's dump(2) writes it
          CHECK(nlohmann::json::parse(parsed).dump(2) + "\n" == parsed);
        }
        CHECK(sp::app::inspect_model(a) == parsed);
        a.data = bytes;
        CHECK(sp::app::inspect_model(a) == parsed);
      }
    }
  }
  CHECK(listed_as_views >= 5); // the decoder, ResNet-50, one of one shared name, the sharded
}

TEST_CASE("sharding attributes read from views: read_annotations and validate as parsed") {
  temp_dir dir;
  const auto models = view_test_models(dir.path());
  // Attributes read_annotations() throws on: refused by the views, so
  // parsed, so the same message.
  std::vector<fs::path> refused;
  for (const auto& [what, edit] :
       std::vector<std::pair<std::string, std::function<void(::onnx::AttributeProto&)>>>{
           {"float", [](auto& a) { a.set_type(::onnx::AttributeProto::FLOAT); }},
           {"negative", [](auto& a) { a.set_i(-1); }},
           {"large", [](auto& a) { a.set_i(sp::max_group_id + 2); }},
           {"twice", [](auto&) {}}}) {
    auto model = so::synth_decoder(2, 8);
    auto& node = *model.mutable_graph()->mutable_node(5);
    so::annotate(node, 1, 0);
    edit(*node.mutable_attribute(node.attribute_size() - 1));
    if (what == "twice") {
      *node.add_attribute() = node.attribute(node.attribute_size() - 1);
    }
    refused.push_back(dir / (what + ".onnx"));
    so::save_model(model, refused.back());
  }
  const auto joined = [](const auto& values) {
    std::string out;
    for (const int v : values) {
      out += std::to_string(v) + ",";
    }
    return out;
  };
  const auto read = [&](const fs::path& path, so::node_reading how) {
    try {
      const auto m = so::read_graph(path, how);
      const auto r = so::read_annotations(m);
      return std::to_string(r.size()) + " " + joined(r.devices()) + " / " + joined(r.stages());
    } catch (const so::input_error& e) {
      return std::string(e.what());
    }
  };
  int sharded_views = 0;
  for (const auto& path : models) {
    CAPTURE(path.filename().string());
    const auto views = so::read_graph(path, so::node_reading::views);
    const auto parsed = so::read_model(path);
    if (views.node_views() != nullptr && so::has_annotations(views)) {
      ++sharded_views;
    }
    CHECK(read(path, so::node_reading::views) == read(path, so::node_reading::parsed));
    if (views.node_views() != nullptr) {
      CHECK(so::has_annotations(views) == so::has_annotations(parsed.proto().graph()));
    }
    // validate without a report (on the views) against with one (parsed):
    // the same findings, naming the same nodes.
    sp::app::validate_options a;
    a.model = path.string();
    a.report.format = "json";
    const auto with_report = sp::app::validate_model(a);
    a.report.format = "none";
    const auto without = sp::app::validate_model(a);
    CHECK(without.diagnostics.size() == with_report.diagnostics.size());
    for (std::size_t i = 0; i < without.diagnostics.size(); ++i) {
      CHECK(without.diagnostics[i].message == with_report.diagnostics[i].message);
    }
    CHECK(without.node_names == with_report.node_names);
  }
  CHECK(sharded_views == 1);
  for (const auto& path : refused) {
    CAPTURE(path.filename().string());
    CHECK(so::read_graph(path, so::node_reading::views).node_views() == nullptr);
    const std::string error = read(path, so::node_reading::views);
    CHECK(error == read(path, so::node_reading::parsed));
    CHECK(error.find("attribute __") != std::string::npos);
  }
}

TEST_CASE("nodes read as views: refused names are the parse's, proto() once from any thread") {
  auto model = so::synth_decoder(1, 8);
  model.mutable_graph()->mutable_node(3)->set_name(model.graph().node(1).name());
  const std::string bytes = model.SerializeAsString();
  const auto error = [&](so::node_reading how) {
    auto m = so::parse_graph(bytes, "<bytes>", how);
    try {
      so::assign_names(m, so::naming::rename_empty);
    } catch (const so::input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error(so::node_reading::views).starts_with("node names must be unique"));
  CHECK(error(so::node_reading::views) == error(so::node_reading::parsed));

  // Many nodes (chunks side by side), proto() called from several threads
  // while others build the node graph from the views (which read the
  // initializers' names from the views, never from the graph proto() fills).
  const std::string many = so::synth_decoder(1500, 8).SerializeAsString();
  auto m = so::parse_graph(many, "<bytes>", so::node_reading::views);
  REQUIRE(m.node_views() != nullptr);
  const auto reference = so::parse_model(many);
  // (the initializers read as views too: none parsed yet)
  REQUIRE(m.proto_without_nodes().graph().initializer_size() == 0);
  REQUIRE(reference.proto().graph().initializer_size() > 0);
  const auto reference_graph = so::build_graph(reference.proto().graph());
  std::vector<std::thread> threads;
  std::vector<int> seen(4, 0);
  std::vector<so::node_graph> built(4);
  for (std::size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back(
        [&, t] { seen[t] = m.proto().graph().node_size() + m.proto().graph().initializer_size(); });
    threads.emplace_back([&, t] { built[t] = so::build_graph(m); });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (const int n : seen) {
    CHECK(n ==
          reference.proto().graph().node_size() + reference.proto().graph().initializer_size());
  }
  for (const auto& g : built) {
    CHECK(g.tensors == reference_graph.tensors);
    CHECK(g.read_ids == reference_graph.read_ids);
  }
  CHECK(m.proto().SerializeAsString() == reference.proto().SerializeAsString());
}
