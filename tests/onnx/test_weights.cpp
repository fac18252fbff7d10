// shardpoint weights: strategies, per-rank weights and merge. Every rank's
// slice against a reference computed here from the original bytes; split
// then merge gives every initializer back bit for bit, on a generated
// transformer with every element type and storage (raw_data, typed fields,
// external data), T in {1, 2, 4, 8}, with and without replication, over
// several stages, in both formats, and on the shared models; every refusal.
#include <cstring>
#include <map>
#include <set>

#include <sys/stat.h>

#include <shardpoint/onnx/memory.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/synth.hpp>
#include <shardpoint/onnx/weights.hpp>

#include "onnx_support.hpp"
#include "synth_support.hpp" // the synthetic models' deterministic weights

namespace sp = shardpoint::onnx;
namespace fs = std::filesystem;
using onnx_test::q;
using onnx_test::shardpoint_cli;
using onnx_test::temp_dir;

namespace {

// The decoder with its initializers in every element type and storage:
// round robin over (type, storage); values a deterministic pattern. Some go
// to external data (`weights.bin`).
void save_all_dtypes(const fs::path& path, int layers) {
  auto model = sp::synth_decoder(layers);
  using T = ::onnx::TensorProto;
  const std::vector<int> types{T::FLOAT, T::FLOAT16, T::BFLOAT16, T::INT8,  T::INT32,
                               T::INT64, T::DOUBLE,  T::UINT8,    T::INT16, T::BOOL};
  std::string external;
  int k = 0;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    const int type = types[static_cast<std::size_t>(k) % types.size()];
    const int storage = (k / static_cast<int>(types.size()) + k) % 3; // raw, typed, external
    ++k;
    const auto count = sp::element_count(t);
    const auto size = *sp::element_bytes(type);
    std::string bytes(count * size, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(k) * 7) % 251);
    }
    if (type == T::BOOL) {
      for (auto& b : bytes) {
        b = static_cast<char>(b & 1);
      }
    }
    t.clear_float_data();
    t.clear_raw_data();
    t.set_data_type(type);
    if (storage == 1) { // typed field, one value an element (complex types aside)
      for (std::uint64_t e = 0; e < count; ++e) {
        std::uint64_t v = 0;
        std::memcpy(&v, bytes.data() + e * size, size);
        switch (type) {
        case T::FLOAT:
          t.add_float_data(*reinterpret_cast<const float*>(bytes.data() + e * size));
          break;
        case T::DOUBLE:
          t.add_double_data(*reinterpret_cast<const double*>(bytes.data() + e * size));
          break;
        case T::INT64:
          t.add_int64_data(static_cast<std::int64_t>(v));
          break;
        case T::INT8:
        case T::INT16: { // sign-extended, as ONNX writers store them
          const auto bits = static_cast<int>(size * 8);
          t.add_int32_data(static_cast<std::int32_t>(static_cast<std::int64_t>(v << (64 - bits)) >>
                                                     (64 - bits)));
          break;
        }
        default:
          t.add_int32_data(static_cast<std::int32_t>(v));
        }
      }
    } else if (storage == 2) {
      t.set_data_location(T::EXTERNAL);
      for (const auto& [key, value] :
           std::map<std::string, std::string>{{"location", "weights.bin"},
                                              {"offset", std::to_string(external.size())},
                                              {"length", std::to_string(bytes.size())}}) {
        auto* e = t.add_external_data();
        e->set_key(key);
        e->set_value(value);
      }
      external += bytes;
    } else {
      t.set_raw_data(bytes);
    }
  }
  onnx_test::write_file(path.parent_path() / "weights.bin", external);
  sp::save_model(model, path);
}

// The reference slice: every element of the tensor, kept when its part in
// each split dimension is the rank's coordinate there.
std::string reference_slice(const std::string& full, const shardpoint::tensor_layout& l,
                            std::int64_t rank, std::size_t element) {
  std::vector<std::int64_t> coord(l.device_matrix.size());
  std::int64_t rest = rank;
  for (std::size_t k = coord.size(); k-- > 0;) {
    coord[k] = rest % l.device_matrix[k];
    rest /= l.device_matrix[k];
  }
  std::string out;
  const std::size_t total = full.size() / element;
  for (std::size_t flat = 0; flat < total; ++flat) {
    std::size_t f = flat;
    bool mine = true;
    for (std::size_t i = l.shape.size(); i-- > 0;) {
      const auto x = static_cast<std::int64_t>(f % static_cast<std::size_t>(l.shape[i]));
      f /= static_cast<std::size_t>(l.shape[i]);
      const auto m = l.tensor_map[i].front();
      if (m >= 0) {
        const std::size_t k = l.device_matrix.size() - 1 - static_cast<std::size_t>(m);
        mine = mine && x / (l.shape[i] / l.device_matrix[k]) == coord[k];
      }
    }
    if (mine) {
      out.append(full, flat * element, element);
    }
  }
  return out;
}

// strategy -> split -> check every rank -> merge -> check every weight.
void round_trip(const fs::path& model, const temp_dir& dir, int T, int D, const std::string& format,
                const std::string& extra = "") {
  CAPTURE(model);
  CAPTURE(T);
  CAPTURE(D);
  CAPTURE(format);
  const auto strategy = dir / "strategy";
  const auto ranks = dir / "ranks";
  const auto merged = dir / "merged.safetensors";
  auto r =
      shardpoint_cli("weights strategy --input-model " + q(model) + " --tensor-parallel " +
                         std::to_string(T) + " --devices-per-stage " + std::to_string(D) +
                         " --output-dir " + q(strategy) + " --force --replicate-shared " + extra,
                     dir.path());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  r = shardpoint_cli("weights split --input-model " + q(model) + " --strategy-dir " + q(strategy) +
                         " --output-dir " + q(ranks) + " --format " + format + " --force",
                     dir.path());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto original = sp::load_model(model);
  std::map<std::string, std::string> bytes;
  for (const auto& t : original.graph().initializer()) {
    bytes[t.name()] = sp::raw_bytes(t, model.parent_path());
  }
  std::map<std::string, int> types;
  std::map<std::string, std::vector<std::int64_t>> shapes; // protobuf strategies give none
  for (const auto& t : original.graph().initializer()) {
    types[t.name()] = t.data_type();
    shapes[t.name()].assign(t.dims().begin(), t.dims().end());
  }
  const auto strategies = sp::read_strategies(strategy);
  std::size_t checked = 0;
  for (const auto& s : strategies) {
    for (std::int64_t local = 0; local < D; ++local) {
      const std::int64_t rank = s.stage * D + local;
      const fs::path file =
          ranks / ("rank_" + std::to_string(rank)) /
          (format == "ckpt" ? "checkpoint_" + std::to_string(rank) + ".ckpt" : "model.safetensors");
      const auto stored = shardpoint::weights::read_weights(file);
      CHECK(stored.size() == s.parameters.size());
      for (const auto& p : s.parameters) {
        const auto& t = stored.at(p.layout.name);
        CHECK(t.onnx_type == types.at(p.layout.name));
        const auto element = *sp::element_bytes(t.onnx_type);
        auto layout = p.layout;
        layout.shape = shapes.at(p.layout.name);
        CHECK(t.data == reference_slice(bytes.at(p.layout.name), layout, local, element));
        ++checked;
      }
    }
  }
  CHECK(checked > 0);
  r = shardpoint_cli("weights merge --strategy-dir " + q(strategy) + " --ranks-dir " + q(ranks) +
                         " --output " + q(merged) + " --force",
                     dir.path());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto back = shardpoint::weights::read_weights(merged);
  for (const auto& [name, data] : bytes) {
    if (back.count(name)) {
      CHECK(back.at(name).data == data); // bit for bit
      CHECK(back.at(name).onnx_type == types.at(name));
    }
  }
}

} // namespace

namespace {

// x -> Gather(emb) -> Gemm(w1, transB) -> Relu -> Gemm(w2, transB) -> + x:
// a vocab table, a column and a row layer stored transposed, their biases.
::onnx::ModelProto gemm_gather_model() {
  auto m = onnx_test::make_model({{"embed", {"emb", "ids"}, {"e"}, "Gather"},
                                  {"up", {"e", "w1", "b1"}, {"u"}, "Gemm"},
                                  {"act", {"u"}, {"a"}, "Relu"},
                                  {"down", {"a", "w2", "b2"}, {"d"}, "Gemm"},
                                  {"res", {"e", "d"}, {"y"}, "Add"}},
                                 {"y"});
  auto& g = *m.mutable_graph();
  for (auto* n : {g.mutable_node(1), g.mutable_node(3)}) {
    auto* a = n->add_attribute();
    a->set_name("transB");
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(1);
  }
  for (const auto& [name, dims] : std::map<std::string, std::vector<std::int64_t>>{
           {"emb", {16, 4}}, {"w1", {8, 4}}, {"b1", {8}}, {"w2", {4, 8}}, {"b2", {4}}}) {
    sp::synth::add_weight(g, name, dims, 0.5F, 0);
  }
  return m;
}

} // namespace

TEST_CASE("element sizes: every ONNX type by its name; no size for strings and unknown types") {
  using T = ::onnx::TensorProto;
  const std::map<int, std::size_t> sizes{
      {T::FLOAT, 4},  {T::UINT8, 1},  {T::INT8, 1},      {T::UINT16, 2},      {T::INT16, 2},
      {T::INT32, 4},  {T::INT64, 8},  {T::BOOL, 1},      {T::FLOAT16, 2},     {T::DOUBLE, 8},
      {T::UINT32, 4}, {T::UINT64, 8}, {T::COMPLEX64, 8}, {T::COMPLEX128, 16}, {T::BFLOAT16, 2}};
  for (int type = -2; type < 40; ++type) {
    CAPTURE(type);
    const auto it = sizes.find(type);
    if (it == sizes.end()) {
      CHECK_FALSE(sp::element_bytes(type).has_value());
    } else {
      CHECK(sp::element_bytes(type) == it->second);
    }
  }
}

TEST_CASE("a generated transformer, every dtype and storage, T 1..8, replication, stages") {
  temp_dir dir;
  fs::create_directory(dir / "model");
  const auto model = dir / "model" / "decoder.onnx";
  save_all_dtypes(model, 4);
  // Three pipeline stages.
  const auto staged = dir / "model" / "staged.onnx";
  REQUIRE(shardpoint_cli("shard --input-model " + q(model) +
                             " --shard layer0/mlp_residual=0:0 --shard layer2/mlp_residual=1:1 "
                             "--output-model " +
                             q(staged) + " --report none",
                         dir.path())
              .code == 0);
  for (int T : {1, 2, 4, 8}) {
    for (int repeat : {1, 2}) {
      round_trip(staged, dir, T, T * repeat, T % 2 ? "safetensors" : "ckpt");
    }
  }
  round_trip(staged, dir, 4, 4, "safetensors", "--format json");
  // The layout written out and read back gives the same strategy files.
  const auto out = shardpoint_cli("weights strategy --input-model " + q(staged) +
                                      " --tensor-parallel 2 --output-dir " + q(dir / "a") +
                                      " --replicate-shared --layout-out " + q(dir / "layout.yaml"),
                                  dir.path());
  REQUIRE(out.code == 0);
  CHECK(out.err.find("shardpoint: wrote " + (dir / "layout.yaml").string() + "\n") !=
        std::string::npos); // each file written is said
  REQUIRE(shardpoint_cli("weights strategy --input-model " + q(staged) +
                             " --tensor-parallel 2 --output-dir " + q(dir / "b") +
                             " --replicate-shared --layout " + q(dir / "layout.yaml"),
                         dir.path())
              .code == 0);
  for (const char* f : {"stage0.ckpt", "stage1.ckpt", "stage2.ckpt"}) {
    CHECK(onnx_test::read_file(dir / "a" / f) == onnx_test::read_file(dir / "b" / f));
  }
}

TEST_CASE("the decisions printed: Megatron pairs, biases, the rest replicated") {
  temp_dir dir;
  const auto model = dir / "decoder.onnx";
  sp::save_model(sp::synth_decoder(2), model);
  const auto r = shardpoint_cli("weights strategy --input-model " + q(model) +
                                    " --tensor-parallel 4 --output-dir " + q(dir / "s"),
                                dir.path());
  REQUIRE(r.code == 0);
  const auto line = [&](const std::string& name) {
    const auto at = r.out.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  CHECK(line("layer1/q_w").find("column      (1, 4)") != std::string::npos);
  CHECK(line("layer1/q_b").find("column      (4,)") != std::string::npos);
  CHECK(line("layer1/attn_out_w").find("row         (4, 1)") != std::string::npos);
  CHECK(line("layer1/attn_out_b").find("row         (1,)") != std::string::npos);
  CHECK(line("layer1/mlp_up_w").find("column      (1, 4)") != std::string::npos);
  CHECK(line("layer1/mlp_down_w").find("row         (4, 1)") != std::string::npos);
  CHECK(line("layer1/ln_gamma_w").find("replicated") != std::string::npos);
}

TEST_CASE("initializers no node reads: in no strategy file, and said") {
  // A trial's light_resnet50 lost an unread initializer through strategy,
  // split and merge without a word.
  temp_dir dir;
  auto m = sp::synth_decoder(2);
  for (const char* name : {"unused_a", "unused_b"}) {
    auto& t = *m.mutable_graph()->add_initializer();
    t.set_name(name);
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(2);
    t.add_float_data(1);
    t.add_float_data(2);
  }
  const auto model = dir / "decoder.onnx";
  sp::save_model(m, model);
  const auto r = shardpoint_cli("weights strategy --input-model " + q(model) +
                                    " --tensor-parallel 2 --output-dir " + q(dir / "s"),
                                dir.path());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("unused_a") == std::string::npos); // not in the table
  CHECK(r.err.find("shardpoint: warning: 2 initializers of the model are read by no node and "
                   "in no strategy file: weights split and merge leave them out ('unused_a', "
                   "'unused_b')\n") != std::string::npos);
  // Every initializer read: nothing to say.
  sp::save_model(sp::synth_decoder(2), model);
  const auto read = shardpoint_cli("weights strategy --input-model " + q(model) +
                                       " --tensor-parallel 2 --output-dir " + q(dir / "t"),
                                   dir.path());
  REQUIRE(read.code == 0);
  CHECK(read.err.find("read by no node") == std::string::npos);
}

TEST_CASE("Gemm with transB: the transposed tuples; Gather: vocab") {
  temp_dir dir;
  auto m = gemm_gather_model();
  auto& g = *m.mutable_graph();
  for (auto& t : *g.mutable_initializer()) {
    onnx_test::to_float_data(t);
  }
  const auto model = dir / "gemm.onnx";
  sp::save_model(m, model);
  const auto r = shardpoint_cli("weights strategy --input-model " + q(model) +
                                    " --tensor-parallel 2 --output-dir " + q(dir / "s"),
                                dir.path());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("emb                              [16, 4]          0      vocab       (2, 1)") !=
        std::string::npos);
  CHECK(r.out.find("w1                               [8, 4]           0      column      (2, 1)") !=
        std::string::npos);
  CHECK(r.out.find("w2                               [4, 8]           0      row         (1, 2)") !=
        std::string::npos);
  CHECK(r.out.find("b1                               [8]              0      column      (2,)") !=
        std::string::npos);
  round_trip(model, dir, 2, 4, "ckpt");
}

// fuzz_commands found it (tests/fuzz/regressions/fuzz_commands): the walk
// that finds Megatron pairs read a node's first output without asking
// whether it has one, and a node without outputs is valid to the readers.
// Now such a node ends the walk; the weights are replicated.
TEST_CASE("a layer, or a cast after it, without outputs: replicated, no crash") {
  temp_dir dir;
  for (const bool cast_after : {false, true}) {
    CAPTURE(cast_after);
    auto m = cast_after
                 ? onnx_test::make_model({{"mm", {"x", "w"}, {"h"}, "MatMul"},
                                          {"cast", {"h"}, {}, "Cast"},
                                          {"out", {"x"}, {"y"}, "Relu"}},
                                         {"y"})
                 : onnx_test::make_model(
                       {{"mm", {"x", "w"}, {}, "MatMul"}, {"out", {"x"}, {"y"}, "Relu"}}, {"y"});
    auto& t = *m.mutable_graph()->add_initializer();
    t.set_name("w");
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(4);
    t.add_dims(4);
    t.mutable_float_data()->Resize(16, 1.0F);
    const auto model = dir / "no-outputs.onnx";
    sp::save_model(m, model);
    for (const std::string& command :
         {"weights strategy --tensor-parallel 2 --output-dir " + q(dir / "s") + " --force",
          std::string("memory --tensor-parallel 2")}) {
      CAPTURE(command);
      const auto r = shardpoint_cli(command + " --input-model " + q(model), dir.path());
      CHECK(r.code == 0);
      CHECK(r.err.find("internal error") == std::string::npos);
    }
  }
}

// fuzz_commands (2026-11-26): a model holding two initializers of one name
// got a strategy naming the weight twice, which `weights split` then
// refused to read (tests/fuzz/regressions/fuzz_commands/weights-two-weights-one-name).
TEST_CASE("two weights of one name: refused before any strategy is written") {
  temp_dir dir;
  auto m = onnx_test::make_model({{"a", {"x", "w"}, {"h"}, "Add"}, {"b", {"h", "w"}, {"y"}, "Mul"}},
                                 {"y"});
  for (int k = 0; k < 2; ++k) {
    auto& t = *m.mutable_graph()->add_initializer();
    t.set_name("w");
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(4);
    t.mutable_float_data()->Resize(4, static_cast<float>(k));
  }
  const auto model = dir / "twice.onnx";
  sp::save_model(m, model);
  for (const std::string format : {"ckpt", "json"}) {
    const auto before = dir.files();
    const auto r = shardpoint_cli("weights strategy --input-model " + q(model) +
                                      " --tensor-parallel 1 --format " + format + " --output-dir " +
                                      q(dir / "s"),
                                  dir.path());
    CHECK(r.code == 2);
    CHECK(r.err == "shardpoint: error: the model holds two weights named 'w'; ONNX names each "
                   "once, and so must a strategy\n");
    CHECK(dir.files() == before);
  }
}

// fuzz_commands (2026-11-26, under UBSan): an initializer whose dims
// multiply past 2^63 overflowed in the memory planner's weights (`draw`,
// `memory`); every command now names the tensor as the readers do
// (tests/fuzz/regressions/fuzz_commands/memory-weight-dims-beyond-2-62).
TEST_CASE("a weight of more than 2^62 elements: bad input, named") {
  temp_dir dir;
  auto m = onnx_test::make_model({{"mm", {"x", "w"}, {"h"}, "MatMul"}, {"r", {"h"}, {"y"}, "Relu"}},
                                 {"y"});
  auto& t = *m.mutable_graph()->add_initializer();
  t.set_name("w");
  t.set_data_type(::onnx::TensorProto::FLOAT);
  t.add_dims(102846335074560000);
  t.add_dims(5871);
  const auto model = dir / "big.onnx";
  sp::save_model(m, model);
  for (const std::string& command :
       {std::string("memory --tensor-parallel 2"), std::string("memory"),
        "draw --output " + q(dir / "d.html"),
        "weights strategy --tensor-parallel 2 --output-dir " + q(dir / "s")}) {
    CAPTURE(command);
    const auto r = shardpoint_cli(command + " --input-model " + q(model), dir.path());
    CHECK(r.code == 2);
    CHECK(r.err == "shardpoint: error: tensor 'w': its dims [102846335074560000, 5871] are more "
                   "than 2^62 elements\n");
  }
}

TEST_CASE("the shared models split and merge back") {
  SKIP_WITHOUT_MODELS();
  temp_dir dir;
  for (const char* name : {"resnet50-v1-7-replica.onnx", "silero_vad_legacy.onnx"}) {
    const auto model = onnx_test::models_dir() / name;
    round_trip(model, dir, 2, 2, "safetensors");
    round_trip(model, dir, 1, 2, "ckpt");
  }
  // Weights as Constant nodes, no initializer: nothing to cut, said so, and
  // no strategy folder of empty files (MindSpore refuses an empty one).
  const auto constants = onnx_test::models_dir() / "ch_ppocr_mobile_v2.0_cls_infer.onnx";
  const auto r = shardpoint_cli("weights strategy --input-model " + q(constants) +
                                    " --tensor-parallel 2 --output-dir " + q(dir / "s"),
                                dir.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("the model has no initializers to split") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "s"));
}

TEST_CASE("refusals: exit 2, one line, nothing written") {
  temp_dir dir;
  const auto model = dir / "decoder.onnx";
  sp::save_model(sp::synth_decoder(2), model);
  const auto out = dir / "strategy";
  const auto expect = [&](const std::string& args, const std::string& message) {
    const auto before = dir.files();
    const auto r = shardpoint_cli("weights strategy --input-model " + q(model) + " --output-dir " +
                                      q(out) + " " + args,
                                  dir.path());
    CAPTURE(args);
    CHECK(r.code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(dir.files() == before);
  };
  const auto layout = [&](const std::string& text) {
    onnx_test::write_file(dir / "l.yaml", text);
    return "--layout " + q(dir / "l.yaml");
  };
  // Only what weights split reads back (a trial: strategy wrote
  // stage65536.ckpt, and 262144 ranks, that split then refused).
  expect("--tensor-parallel 1 --devices-per-stage 65536 --replicate-shared --shard "
         "layer0/attn_out=0:0",
         "131072 ranks (65536 devices a stage x 2 stages with weights), more than weights split "
         "and merge take (65536)");
  expect("--tensor-parallel 2 --shard " +
             q(sp::load_model(model).graph().node(0).name() + "=65535:65535"),
         "stage 65536 holds weights, but a strategy file's stage is a stage id in 0..65535");
  expect("--tensor-parallel 4 --devices-per-stage 6",
         "devices per stage (6) must be a positive multiple of the tensor-parallel degree (4)");
  expect(layout("layer0/q_w: [4, 1]\n") + " --tensor-parallel 2 --devices-per-stage 6",
         "For layer0/q_w, the shard (4, 1) requires 4 devices, but the device number of this "
         "stage is 6, it can not be divisible by 4");
  expect(layout("layer0/q_w: [3, 1]\n") + " --tensor-parallel 4",
         "For layer0/q_w, the shard (3, 1) requires 3 devices, but the device number of this "
         "stage is 4, it can not be divisible by 3");
  expect(layout("layer0/q_w: [4294967296, 4294967296]\n") + " --tensor-parallel 4",
         "For layer0/q_w, the shard (4294967296, 4294967296) requires more than 2^62 devices, "
         "but the device number of this stage is 4"); // the product is not wrapped
  expect(layout("layer0/q_w: [1, 1, 1]\n") + " --tensor-parallel 4",
         "For layer0/q_w, the shard (1, 1, 1) has 3 entries but the parameter has 2 dimensions");
  expect(layout("no_such_weight: column\n") + " --tensor-parallel 4",
         "l.yaml:1:1: the layout names 'no_such_weight', which is no initializer of the model");
  expect(layout("layer0/q_w: sideways\n") + " --tensor-parallel 4",
         "'sideways' for layer0/q_w is not column, row");
  expect("--tensor-parallel 3", "For layer0/q_w, dimension 1 of shape (8, 8) is 8, not "
                                "divisible by its shard 3");
  // A name MindSpore cannot carry.
  auto m = sp::synth_decoder(1);
  m.mutable_graph()->mutable_initializer(0)->set_name("bad-name");
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    for (auto& i : *n.mutable_input()) {
      if (i == "eps") {
        i = "bad-name";
      }
    }
  }
  const auto dashed = dir / "dashed.onnx";
  sp::save_model(m, dashed);
  const auto r = shardpoint_cli("weights strategy --input-model " + q(dashed) +
                                    " --tensor-parallel 1 --output-dir " + q(out),
                                dir.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("For bad-name, the name contains '-'") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // A weight read by two stages.
  const auto staged = dir / "staged.onnx";
  REQUIRE(shardpoint_cli("shard --input-model " + q(model) +
                             " --shard layer0/mlp_residual=0:0 --output-model " + q(staged) +
                             " --report none",
                         dir.path())
              .code == 0);
  const auto two = shardpoint_cli("weights strategy --input-model " + q(staged) +
                                      " --tensor-parallel 1 --output-dir " + q(out),
                                  dir.path());
  CHECK(two.code == 2);
  CHECK(two.err.find("initializer 'eps' is read by stage 0 (node 'layer0/ln_add_eps') and stage "
                     "1 (node 'layer1/ln_add_eps'); give --replicate-shared to write it to both") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("split and merge refuse what does not fit, and write nothing") {
  temp_dir dir;
  const auto small = dir / "small.onnx";
  const auto large = dir / "large.onnx";
  sp::save_model(sp::synth_decoder(2), small);
  sp::save_model(sp::synth_decoder(3), large);
  const auto run = [&](const std::string& args) { return shardpoint_cli(args, dir.path()); };
  REQUIRE(run("weights strategy --input-model " + q(small) + " --tensor-parallel 2 --output-dir " +
              q(dir / "s"))
              .code == 0);
  REQUIRE(run("weights strategy --input-model " + q(large) + " --tensor-parallel 2 --output-dir " +
              q(dir / "s3"))
              .code == 0);
  REQUIRE(run("weights split --input-model " + q(small) + " --strategy-dir " + q(dir / "s") +
              " --output-dir " + q(dir / "r"))
              .code == 0);
  const auto refused = [&](const std::string& args, const std::string& message) {
    const auto before = dir.files();
    const auto r = run(args);
    CAPTURE(args);
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(dir.files() == before);
  };
  // No strategy folder; a strategy of another model.
  refused("weights split --input-model " + q(small) + " --strategy-dir " + q(dir / "none") +
              " --output-dir " + q(dir / "r2"),
          "no such strategy folder");
  refused("weights split --input-model " + q(small) + " --strategy-dir " + q(dir / "s3") +
              " --output-dir " + q(dir / "r2"),
          "the strategy of stage 0 names 'layer2/ln_gamma_w', which the model does not hold");
  // A layout refused only when it is placed, in MindSpore's own words,
  // names the strategy file it is in (a trial's "For layer0/q_w, field 1
  // ..." said which weight, not which of the stages' files).
  REQUIRE(run("weights strategy --input-model " + q(small) +
              " --tensor-parallel 2 --format json --output-dir " + q(dir / "sj"))
              .code == 0);
  {
    const auto file = dir / "sj" / "stage0.json";
    auto j = nlohmann::json::parse(onnx_test::read_file(file));
    j["parallel_layout_item"]["layer0/q_w"]["field"] = 1;
    onnx_test::write_file(file, j.dump());
    refused("weights split --input-model " + q(small) + " --strategy-dir " + q(dir / "sj") +
                " --output-dir " + q(dir / "r2"),
            q(file) + ": For layer0/q_w, field 1 (MindSpore's interleave of field rows) is not "
                      "something shardpoint slices");
    refused("weights merge --strategy-dir " + q(dir / "sj") + " --ranks-dir " + q(dir / "r") +
                " --output " + q(dir / "m2.safetensors"),
            q(file) + ": For layer0/q_w, field 1");
  }
  // Weights that are a device or a folder are said to be one (both were
  // "no such weights file": an adversarial trial).
  refused("weights split --from-weights /dev/zero --strategy-dir " + q(dir / "s") +
              " --output-dir " + q(dir / "r2"),
          "'/dev/zero': the weights file is a device, not a regular file");
  refused("weights split --from-weights " + q(dir / "s") + " --strategy-dir " + q(dir / "s") +
              " --output-dir " + q(dir / "r2"),
          "': is a directory, not a weights file");
  // An existing output is not overwritten without --force.
  refused("weights split --input-model " + q(small) + " --strategy-dir " + q(dir / "s") +
              " --output-dir " + q(dir / "r"),
          "the output folder exists and is not empty (--force replaces a folder shardpoint "
          "wrote)");
  // Two rank files swapped merged into a model with 21 of 67 weights wrong
  // and exit 0; the manifest's fingerprints tell. A file changed in place
  // (trained further) is merged as it is.
  const auto rank0 = dir / "r" / "rank_0" / "checkpoint_0.ckpt";
  const auto rank1 = dir / "r" / "rank_1" / "checkpoint_1.ckpt";
  const auto kept0 = onnx_test::read_file(rank0);
  const auto kept = onnx_test::read_file(rank1);
  REQUIRE(kept0 != kept);
  const auto merge = "weights merge --strategy-dir " + q(dir / "s") + " --ranks-dir " +
                     q(dir / "r") + " --output " + q(dir / "m.safetensors");
  onnx_test::write_file(rank0, kept);
  onnx_test::write_file(rank1, kept0);
  refused(merge, "checkpoint_0.ckpt': holds what shardpoint wrote as "
                 "'rank_1/checkpoint_1.ckpt' (rank files swapped or copied?)");
  onnx_test::write_file(rank1, kept);
  refused(merge, "checkpoint_0.ckpt': holds what shardpoint wrote as 'rank_1/checkpoint_1.ckpt'");
  // A bit of the last weight of both ranks (a replicated weight stays equal).
  auto trained0 = kept0, trained1 = kept;
  trained0.back() = static_cast<char>(trained0.back() ^ 0x40);
  trained1.back() = static_cast<char>(trained1.back() ^ 0x40);
  onnx_test::write_file(rank0, trained0);
  onnx_test::write_file(rank1, trained1);
  REQUIRE(run(merge).code == 0);
  const auto merged_trained = onnx_test::read_file(dir / "m.safetensors");
  fs::remove(dir / "m.safetensors");
  onnx_test::write_file(rank0, kept0);
  onnx_test::write_file(rank1, kept);
  REQUIRE(run(merge).code == 0);
  CHECK(onnx_test::read_file(dir / "m.safetensors") != merged_trained);
  fs::remove(dir / "m.safetensors");
  // A rank or strategy file that is a FIFO, or a link out of its folder,
  // is refused: neither passed over nor followed (an adversarial trial).
  REQUIRE(::mkfifo((dir / "r" / "rank_0" / "zzz.ckpt").c_str(), 0600) == 0);
  refused(merge, "zzz.ckpt': the rank file is a FIFO, not a regular file");
  fs::remove(dir / "r" / "rank_0" / "zzz.ckpt");
  fs::rename(rank1, dir / "outside.ckpt");
  fs::create_symlink(dir / "outside.ckpt", rank1);
  refused(merge, "checkpoint_1.ckpt': leads out of the folder '" + (dir / "r").string() +
                     "' through a symbolic link");
  fs::remove(rank1);
  fs::rename(dir / "outside.ckpt", rank1);
  fs::path strategy_file;
  for (const auto& e : fs::directory_iterator(dir / "s")) {
    strategy_file = e.path().extension() == ".ckpt" ? e.path() : strategy_file;
  }
  REQUIRE_FALSE(strategy_file.empty());
  fs::rename(strategy_file, dir / "outside.ckpt");
  fs::create_symlink(dir / "outside.ckpt", strategy_file);
  refused(merge,
          "': leads out of the folder '" + (dir / "s").string() + "' through a symbolic link");
  fs::remove(strategy_file);
  fs::rename(dir / "outside.ckpt", strategy_file);
  REQUIRE(run(merge).code == 0);
  fs::remove(dir / "m.safetensors");
  // Ranks of another strategy: the slices do not have the shapes this one
  // gives them.
  REQUIRE(run("weights strategy --input-model " + q(small) + " --tensor-parallel 1 --output-dir " +
              q(dir / "s1"))
              .code == 0);
  refused("weights merge --strategy-dir " + q(dir / "s1") + " --ranks-dir " + q(dir / "r") +
              " --output " + q(dir / "m.safetensors"),
          "rank_1': no stage of the strategies (1 devices a stage, stages 0) has this rank; "
          "ranks cut by another strategy?");
  // The same with the whole shapes in the strategy (JSON's tensor_shape).
  REQUIRE(run("weights strategy --input-model " + q(small) +
              " --tensor-parallel 1 --devices-per-stage 2 --format json --output-dir " +
              q(dir / "s1j"))
              .code == 0);
  refused("weights merge --strategy-dir " + q(dir / "s1j") + " --ranks-dir " + q(dir / "r") +
              " --output " + q(dir / "m.safetensors"),
          "checkpoint_0.ckpt': tensor 'layer0/attn_out_w' has shape (4, 8); rank 0's slice of "
          "it is (8, 8)");
  // Replicas (4 devices a stage, T = 2): rank 2 and 3 hold what 0 and 1 do;
  // a replica changed is named, not merged silently in or out.
  REQUIRE(run("weights strategy --input-model " + q(small) +
              " --tensor-parallel 2 --devices-per-stage 4 --output-dir " + q(dir / "s4"))
              .code == 0);
  REQUIRE(run("weights split --format safetensors --input-model " + q(small) + " --strategy-dir " +
              q(dir / "s4") + " --output-dir " + q(dir / "r4"))
              .code == 0);
  const auto merge4 = "weights merge --strategy-dir " + q(dir / "s4") + " --ranks-dir " +
                      q(dir / "r4") + " --output " + q(dir / "m.safetensors");
  REQUIRE(run(merge4).code == 0);
  fs::remove(dir / "m.safetensors");
  const auto replica = dir / "r4" / "rank_2" / "model.safetensors";
  auto changed = onnx_test::read_file(replica);
  changed.back() = static_cast<char>(changed.back() ^ 0x40);
  onnx_test::write_file(replica, changed);
  refused(merge4, "model.safetensors': tensor 'layer1/mlp_down_b' of rank 2 differs from its "
                  "replica in rank 0; replicas of one slice must hold the same values");
  // A rank's file missing, then cut short.
  fs::remove(rank1);
  refused("weights merge --strategy-dir " + q(dir / "s") + " --ranks-dir " + q(dir / "r") +
              " --output " + q(dir / "m.safetensors"),
          "rank_1': no *.ckpt or *.safetensors file for rank 1");
  onnx_test::write_file(rank1, kept.substr(0, kept.size() / 2));
  refused("weights merge --strategy-dir " + q(dir / "s") + " --ranks-dir " + q(dir / "r") +
              " --output " + q(dir / "m.safetensors"),
          "checkpoint_1.ckpt': not a MindSpore file");
  // Two stages: one stage's strategy file missing, or emptied, wrote the
  // ranks of the other and exited 0.
  REQUIRE(run("weights strategy --input-model " + q(small) +
              " --shard layer0/mlp_residual=0:0 --replicate-shared --tensor-parallel 2 "
              "--output-dir " +
              q(dir / "two"))
              .code == 0);
  const auto split_two = "weights split --input-model " + q(small) + " --strategy-dir " +
                         q(dir / "two") + " --output-dir " + q(dir / "r2");
  REQUIRE(run(split_two).code == 0);
  fs::remove_all(dir / "r2");
  const auto two0 = onnx_test::read_file(dir / "two" / "stage0.ckpt");
  fs::remove(dir / "two" / "stage0.ckpt");
  refused(split_two, "two/stage0.ckpt': missing, though shardpoint wrote it into this strategy "
                     "folder (its manifest lists it)");
  fs::remove(dir / "two" / ".shardpoint-manifest.json"); // a folder written by hand
  refused(split_two, "weight 'layer0/ln_gamma_w', read by node 'layer0/ln_gamma', is in no "
                     "strategy file (the folder has stages 1; is a strategy file missing?)");
  onnx_test::write_file(dir / "two" / "stage0.ckpt", two0);
  fs::remove(dir / "two" / "stage1.ckpt");
  refused(split_two, "weight 'layer1/ln_gamma_w', read by node 'layer1/ln_gamma', is in no "
                     "strategy file (the folder has stages 0; is a strategy file missing?)");
  onnx_test::write_file(dir / "two" / "stage1.ckpt", ""); // no parameters: no stage at all
  refused(split_two, "weight 'layer1/ln_gamma_w', read by node 'layer1/ln_gamma', is in no "
                     "strategy file (the folder has stages 0; is a strategy file missing?)");
  // A strategy file cut short.
  const auto stage0 = dir / "s" / "stage0.ckpt";
  onnx_test::write_file(stage0, onnx_test::read_file(stage0).substr(0, 50));
  refused("weights split --input-model " + q(small) + " --strategy-dir " + q(dir / "s") +
              " --output-dir " + q(dir / "r2"),
          "stage0.ckpt': not a MindSpore file");
}

TEST_CASE("strategy files whose layouts do not add up are refused, not overflowed") {
  // Found by fuzz_config: a dev_matrix whose product overflows int64.
  const auto read = [](const std::string& layout, const std::string& shard) {
    const std::string text =
        R"({"current_stage": 0, "parallel_strategy_item": {"w": {"stage": 0, "parallel_strategy": [)" +
        shard + R"(]}}, "parallel_layout_item": {"w": )" + layout + "}}";
    try {
      (void)shardpoint::weights::parse_strategy(text, "s.json", true);
    } catch (const shardpoint::bad_input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string ok = R"({"dev_matrix": [2, 2], "tensor_map": [0], "tensor_shape": [8]})";
  CHECK(read(ok, "[2]") == "accepted");
  CHECK(read(R"({"dev_matrix": [4611686018427387904, 4], "tensor_map": [0], "tensor_shape": [8]})",
             "[2]") == "'s.json': parameter 'w': its dev_matrix is not a list of positive counts "
                       "whose product is below 2^31");
  // The shard tuple of an item is not read (MindSpore's items may name
  // operators); the map gives the parts.
  CHECK(read(ok, "[3]") == "accepted");
  CHECK(read(R"({"dev_matrix": [2, 2], "tensor_map": [[1, 1]], "tensor_shape": [8]})", "[2]") ==
        "'s.json': parameter 'w': its tensor_map uses an axis of its dev_matrix twice");
  CHECK(read(R"({"dev_matrix": [2, 2], "tensor_map": [0], "tensor_shape": [8, 2]})", "[2]") ==
        "'s.json': parameter 'w': its tensor_shape has 2 dimensions and its tensor_map 1");
  CHECK(read(R"({"dev_matrix": [2, 2], "tensor_map": [2], "tensor_shape": [8]})", "[2]") ==
        "'s.json': parameter 'w': tensor_map entry 2 names no dimension of its dev_matrix");
  // A stage is a stage id, as everywhere (a trial wrote rank_2000000000/).
  for (const char* stage : {"65535", "65536"}) {
    const std::string text =
        std::string(R"({"current_stage": 0, "parallel_strategy_item": {"w": {"stage": )") + stage +
        R"(, "parallel_strategy": [[2]]}}, "parallel_layout_item": {"w": )" + ok + "}}";
    if (std::string(stage) == "65535") {
      CHECK(shardpoint::weights::parse_strategy(text, "s.json", true).stage == 65535);
    } else {
      CHECK_THROWS_WITH(shardpoint::weights::parse_strategy(text, "s.json", true),
                        "'s.json': parallel_strategy_item 'w' has stage 65536, not a stage id in "
                        "0..65535");
    }
  }
}

TEST_CASE("a re-shard never writes over what it reads") {
  temp_dir dir;
  const auto model = dir / "m.onnx";
  sp::save_model(sp::synth_decoder(2), model);
  const auto run = [&](const std::string& args) { return shardpoint_cli(args, dir.path()); };
  REQUIRE(run("weights strategy --input-model " + q(model) + " --tensor-parallel 2 --output-dir " +
              q(dir / "s2"))
              .code == 0);
  REQUIRE(run("weights strategy --input-model " + q(model) + " --tensor-parallel 1 --output-dir " +
              q(dir / "s1"))
              .code == 0);
  REQUIRE(run("weights split --input-model " + q(model) + " --strategy-dir " + q(dir / "s2") +
              " --output-dir " + q(dir / "r2"))
              .code == 0);
  REQUIRE(run("weights merge --strategy-dir " + q(dir / "s2") + " --ranks-dir " + q(dir / "r2") +
              " --output " + q(dir / "w.safetensors"))
              .code == 0);
  const auto before = dir.files();
  for (const std::string& args :
       {"weights split --from-ranks " + q(dir / "r2") + " --from-strategy-dir " + q(dir / "s2") +
            " --strategy-dir " + q(dir / "s1") + " --output-dir " + q(dir / "r2") + " --force",
        "weights split --from-ranks " + q(dir / "r2") + " --from-strategy-dir " + q(dir / "s2") +
            " --strategy-dir " + q(dir / "s1") + " --output-dir " + q(dir / "s2") + " --force",
        "weights split --from-weights " + q(dir / "r2" / "rank_0" / "checkpoint_0.ckpt") +
            " --strategy-dir " + q(dir / "s1") + " --output-dir " + q(dir / "r2") + " --force",
        "weights split --from-weights " + q(dir / "w.safetensors") + " --strategy-dir " +
            q(dir / "s1") + " --output-dir " + q(dir.path()) + " --force"}) {
    CAPTURE(args);
    const auto r = run(args);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(dir.files() == before);
  }
  // The same re-shard into a folder of its own: T = 2 to T = 1, bit for bit.
  REQUIRE(run("weights split --from-weights " + q(dir / "w.safetensors") + " --strategy-dir " +
              q(dir / "s1") + " --output-dir " + q(dir / "r1"))
              .code == 0);
  const auto whole = shardpoint::weights::read_weights(dir / "w.safetensors");
  const auto rank0 = shardpoint::weights::read_weights(dir / "r1" / "rank_0" / "checkpoint_0.ckpt");
  CHECK(rank0.size() == whole.size());
  for (const auto& [name, t] : whole) {
    CHECK(rank0.at(name).data == t.data);
  }
}

TEST_CASE("rank folders as MindSpore leaves them: renamed files, extra tensors, .ckpt merges") {
  temp_dir dir;
  const auto model = dir / "m.onnx";
  sp::save_model(sp::synth_decoder(2), model);
  const auto run = [&](const std::string& args) { return shardpoint_cli(args, dir.path()); };
  REQUIRE(run("weights strategy --input-model " + q(model) + " --tensor-parallel 2 --output-dir " +
              q(dir / "s"))
              .code == 0);
  REQUIRE(run("weights split --input-model " + q(model) + " --strategy-dir " + q(dir / "s") +
              " --output-dir " + q(dir / "r"))
              .code == 0);
  const auto original =
      shardpoint::weights::read_weights(dir / "r" / "rank_0" / "checkpoint_0.ckpt");
  // Renamed as ModelCheckpoint names them, split's manifest kept: merged as
  // before; swapped across ranks after the rename: still refused.
  for (int r = 0; r < 2; ++r) {
    const auto folder = dir / "r" / ("rank_" + std::to_string(r));
    fs::rename(folder / ("checkpoint_" + std::to_string(r) + ".ckpt"), folder / "CKP-1_4.ckpt");
  }
  const auto merge = [&](const std::string& output) {
    return run("weights merge --strategy-dir " + q(dir / "s") + " --ranks-dir " + q(dir / "r") +
               " --output " + q(dir / output));
  };
  REQUIRE(merge("a.safetensors").code == 0);
  const auto r0 = dir / "r" / "rank_0" / "CKP-1_4.ckpt";
  const auto r1 = dir / "r" / "rank_1" / "CKP-1_4.ckpt";
  const auto bytes0 = onnx_test::read_file(r0);
  const auto bytes1 = onnx_test::read_file(r1);
  onnx_test::write_file(r0, bytes1);
  onnx_test::write_file(r1, bytes0);
  auto r = merge("b.safetensors");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("CKP-1_4.ckpt': holds what shardpoint wrote as "
                           "'rank_1/checkpoint_1.ckpt' (rank files swapped or copied?)") !=
                    std::string::npos,
                r.err);
  onnx_test::write_file(r0, bytes0);
  onnx_test::write_file(r1, bytes1);
  // A tensor no strategy lists (a training step's counter): left out, named.
  std::vector<shardpoint::weights::tensor_source> tensors;
  const std::string step(8, '\1');
  for (const auto& entry : original) { // not a structured binding: the lambda captures it
    const auto& t = entry.second;
    tensors.push_back({entry.first, t.shape, t.onnx_type, t.data.size(),
                       [&t](const auto& sink) { sink(t.data.data(), t.data.size()); }});
  }
  tensors.push_back({"global_step", {1}, 7, 8, [&](const auto& sink) { sink(step.data(), 8); }});
  fs::remove(dir / "r" / ".shardpoint-manifest.json"); // the folder is the user's now
  shardpoint::weights::write_checkpoint(r0, tensors);
  r = merge("c.ckpt");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.find("warning: 1 tensor(s) of the source are in no strategy file and left out of '" +
                   (dir / "c.ckpt").string() + "': 'global_step'") != std::string::npos);
  // The .ckpt output is a MindSpore checkpoint holding what the .safetensors holds.
  const auto as_ckpt = shardpoint::weights::read_weights(dir / "c.ckpt");
  const auto as_st = shardpoint::weights::read_weights(dir / "a.safetensors");
  CHECK(as_ckpt.size() == as_st.size());
  for (const auto& [name, t] : as_st) {
    CHECK(as_ckpt.at(name).data == t.data);
    CHECK(as_ckpt.at(name).shape == t.shape);
  }
  r = run("weights split --from-ranks " + q(dir / "r") + " --from-strategy-dir " + q(dir / "s") +
          " --strategy-dir " + q(dir / "s") + " --output-dir " + q(dir / "again"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.find("left out of the ranks: 'global_step'") != std::string::npos);
  // Whole weights are a .safetensors or a .ckpt; a model is --input-model.
  r = run("weights split --from-weights " + q(model) + " --strategy-dir " + q(dir / "s") +
          " --output-dir " + q(dir / "x"));
  CHECK(r.code == 2);
  CHECK(r.err.find("m.onnx': neither safetensors nor a MindSpore checkpoint") != std::string::npos);
  // Told by their bytes, not their names: merged safetensors named .bin.
  fs::copy_file(dir / "a.safetensors", dir / "a.bin");
  r = run("weights split --from-weights " + q(dir / "a.bin") + " --strategy-dir " + q(dir / "s") +
          " --output-dir " + q(dir / "from-bin"));
  CHECK_MESSAGE(r.code == 0, r.err);
  // An output that is a hard link to a file the command reads.
  fs::create_hard_link(r1, dir / "hard.ckpt");
  r = run("weights merge --strategy-dir " + q(dir / "s") + " --ranks-dir " + q(dir / "r") +
          " --force --output " + q(dir / "hard.ckpt"));
  CHECK(r.code == 2);
  CHECK(r.err.find("(a hard link)") != std::string::npos);
  CHECK(onnx_test::read_file(r1) == bytes1);
  // The read file itself, in the folder read: it lies inside, no link.
  r = run("weights merge --strategy-dir " + q(dir / "s") + " --ranks-dir " + q(dir / "r") +
          " --force --output " + q(r1));
  CHECK(r.code == 2);
  CHECK(r.err.find("lies inside") != std::string::npos);
  CHECK(r.err.find("(a hard link)") == std::string::npos);
  CHECK(onnx_test::read_file(r1) == bytes1);
}

namespace {

// A safetensors file of `header` (JSON) and `data_bytes` zero bytes.
std::string safetensors_bytes(const std::string& header, std::size_t data_bytes) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return out + header + std::string(data_bytes, '\0');
}

} // namespace

TEST_CASE("weight files whose shapes and bytes disagree are refused, naming the tensor") {
  temp_dir dir;
  const auto file = dir / "w.safetensors";
  const auto read = [&](const std::string& header, std::size_t bytes) {
    onnx_test::write_file(file, safetensors_bytes(header, bytes));
    return shardpoint::weights::read_weights(file);
  };
  const auto tensor = [](const std::string& shape, std::size_t bytes) {
    return R"({"w": {"dtype": "F32", "shape": [)" + shape + R"(], "data_offsets": [0, )" +
           std::to_string(bytes) + "]}}";
  };
  CHECK(read(tensor("8,8", 256), 256).at("w").shape == std::vector<std::int64_t>{8, 8});
  CHECK(read(tensor("0,8", 0), 0).at("w").data.empty());
  const std::string named = "'" + file.string() + "': tensor 'w' ";
  // Fewer or more bytes than the shape needs: slices would be cut past the
  // end (exit 4 in split) or silently wrong (a merge of the wrong shape).
  CHECK_THROWS_WITH_AS(read(tensor("4,8", 256), 256),
                       (named + "holds 256 bytes; its shape [4,8] needs 128").c_str(),
                       shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(read(tensor("16,8", 256), 256),
                       (named + "holds 256 bytes; its shape [16,8] needs 512").c_str(),
                       shardpoint::bad_input_error);
  // Shapes no tensor has: negative, overflowing, fractional.
  CHECK_THROWS_WITH_AS(read(tensor("-1,8", 256), 256),
                       (named + "has a negative dimension (-1)").c_str(),
                       shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(read(tensor("2147483648,2147483648", 256), 256),
                       (named + "has more bytes than a file can hold").c_str(),
                       shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(read(tensor("4294967296,4294967296,2", 256), 256),
                       (named + "has more elements than a file can hold").c_str(),
                       shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(read(tensor("18446744073709551624,8", 256), 256),
                       (named + "has a dimension beyond 2^63").c_str(),
                       shardpoint::bad_input_error);
  // A dimension 0 makes no elements, however large the others.
  CHECK_THROWS_WITH_AS(read(tensor("1099511627776,1099511627776,0", 256), 256),
                       (named + "holds 256 bytes; its shape [1099511627776,1099511627776,0] "
                                "needs 0")
                           .c_str(),
                       shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(
      read(R"({"w": {"dtype": "F32", "shape": 64, "data_offsets": [0, 256]}})", 256),
      (named + "has a shape that is not a list").c_str(), shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(read(tensor("8.5,8", 256), 256),
                       (named + "has a dimension that is not a whole number").c_str(),
                       shardpoint::bad_input_error);
  // Offsets past the data, and ones that wrap past 2^64 when added to the
  // header's end (they were once added, and wrapped inside the file).
  CHECK_THROWS_WITH_AS(read(tensor("8,8", 256), 100),
                       (named + "has data offsets [0, 256], not a range within the 100 bytes "
                                "of data after the header")
                           .c_str(),
                       shardpoint::bad_input_error);
  const std::string wrap =
      R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [18446744073709551615, )"
      R"(18446744073709551615]}})";
  CHECK_THROWS_WITH_AS(read(wrap, 0),
                       (named + "has data offsets [18446744073709551615, 18446744073709551615], "
                                "not a range within the 0 bytes of data after the header")
                           .c_str(),
                       shardpoint::bad_input_error);
  // A key given twice: refused, not the last one kept.
  CHECK_THROWS_WITH_AS(
      read(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
          4),
      doctest::Contains("key 'w' appears twice in one object"), shardpoint::bad_input_error);

  // A MindSpore checkpoint the same: dims against the content.
  const auto ckpt = dir / "w.ckpt";
  const std::string content(256, '\0');
  const auto checkpoint = [&](std::vector<std::int64_t> shape) {
    shardpoint::weights::write_checkpoint(
        ckpt, {{"w", std::move(shape), 1, content.size(),
                [&](const auto& sink) { sink(content.data(), content.size()); }}});
    return shardpoint::weights::read_weights(ckpt);
  };
  CHECK(checkpoint({8, 8}).at("w").data.size() == 256);
  const std::string in_ckpt = "'" + ckpt.string() + "': tensor 'w' ";
  CHECK_THROWS_WITH_AS(checkpoint({4, 8}),
                       (in_ckpt + "holds 256 bytes; its shape [4,8] needs 128").c_str(),
                       shardpoint::bad_input_error);
  CHECK_THROWS_WITH_AS(checkpoint({-1, 8}), (in_ckpt + "has a negative dimension (-1)").c_str(),
                       shardpoint::bad_input_error);

  // Through the command line: exit 2, one line, nothing written (it was an
  // abort with a temporary folder left, or exit 4).
  const auto model = dir / "d.onnx";
  sp::save_model(sp::synth_decoder(1), model);
  REQUIRE(shardpoint_cli("weights strategy --input-model " + q(model) +
                             " --tensor-parallel 2 --output-dir " + q(dir / "s"),
                         dir.path())
              .code == 0);
  onnx_test::write_file(file, safetensors_bytes(tensor("-1,8", 256), 256));
  onnx_test::expect_failure(dir,
                            "weights split --from-weights " + q(file) + " --strategy-dir " +
                                q(dir / "s") + " --output-dir " + q(dir / "r"),
                            2, "tensor 'w' has a negative dimension (-1)");
}

TEST_CASE("a strategy giving more ranks than shardpoint writes is refused before any is written") {
  // A new user's trial: a 63-byte strategy file of dev_matrix [100000] had
  // split writing a folder a rank past a minute (2^31 were accepted).
  temp_dir dir;
  const auto weights = dir / "w.safetensors";
  onnx_test::write_file(
      weights,
      safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}})", 32));
  const auto strategy = [&](const std::string& folder, int devices) {
    fs::create_directories(dir / folder);
    onnx_test::write_file(
        dir / folder / "stage0.json",
        R"({"current_stage": 0, "parallel_layout_item": {"w": {"dev_matrix": [)" +
            std::to_string(devices) +
            R"(], "tensor_map": [-1], "tensor_shape": [8]}}, "parallel_strategy_item": {"w": )"
            R"({"stage": 0, "parallel_strategy": [[1]]}}})");
  };
  strategy("s4", 4);
  const auto r = shardpoint_cli("weights split --from-weights " + q(weights) + " --strategy-dir " +
                                    q(dir / "s4") + " --output-dir " + q(dir / "r4"),
                                dir.path());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(fs::exists(dir / "r4" / "rank_3"));
  strategy("big", shardpoint::onnx::most_ranks + 1);
  onnx_test::expect_failure(dir,
                            "weights split --from-weights " + q(weights) + " --strategy-dir " +
                                q(dir / "big") + " --output-dir " + q(dir / "r"),
                            2,
                            "the strategies give 65537 ranks (65537 devices a stage x 1 stages), "
                            "more than shardpoint splits or merges (65536)");
}

namespace {

// Everything a decision says, and everything parameter_uses_of makes of the
// decisions, as text: equal texts, equal results.
std::string decided_text(const std::vector<sp::weight_decision>& decisions,
                         const shardpoint::parameter_uses& uses) {
  std::string out;
  const auto list = [&](const auto& xs) {
    for (const auto x : xs) {
      out += std::to_string(x) + ",";
    }
    out += ";";
  };
  for (const auto& d : decisions) {
    out += d.name + " " + std::to_string(d.onnx_type) + " " +
           shardpoint::io::to_string(d.choice.how) + " " + d.choice.reason + " " + d.choice.where +
           " ";
    list(d.shape);
    list(d.stages);
    list(d.shard);
    list(d.choice.shard);
    out += "\n";
  }
  for (const auto& t : uses.tensors) {
    out += std::to_string(t.elements) + " " + std::to_string(t.tensor_parallel_parts) + " " +
           std::to_string(t.stored_element_bytes) + " " + std::to_string(t.trainable) + " " +
           std::to_string(t.row_parallel) + "\n";
  }
  for (const auto& used : uses.used) {
    list(used);
  }
  return out;
}

} // namespace

TEST_CASE("weight decisions and parameter uses on node views are the parsed ones") {
  std::vector<::onnx::ModelProto> models{sp::synth_decoder(3, 8, 5), sp::synth_decoder(40, 16, 7)};
  models.push_back(gemm_gather_model()); // (a view's transB parsed for it)
  if (!onnx_test::models_dir().empty()) {
    for (const auto& entry : fs::directory_iterator(onnx_test::models_dir())) {
      if (entry.path().extension() == ".onnx") {
        models.push_back(sp::load_model(entry.path()));
      }
    }
  }
  int on_views = 0;
  for (const auto& m : models) {
    CAPTURE(m.graph().name());
    const std::string bytes = m.SerializeAsString();
    const auto parsed_graph = sp::build_graph(m.graph());
    const std::size_t n = static_cast<std::size_t>(m.graph().node_size());
    std::vector<int> stages(n);
    for (std::size_t v = 0; v < n; ++v) {
      stages[v] = v < n / 2 ? 0 : 1;
    }
    const shardpoint::sharding_result two(n, stages, stages);
    for (const int T : {1, 2}) {
      for (const bool divisible : {false, true}) {
        CAPTURE(T);
        CAPTURE(divisible);
        sp::weight_options options{T, std::nullopt, true};
        options.divisible = divisible;
        const auto loaded =
            sp::parse_graph(bytes, "<bytes>", sp::node_reading::views_with_initializers);
        const bool as_views = loaded.node_views() != nullptr;
        on_views += as_views && T == 2 && divisible ? 1 : 0;
        const auto graph = sp::build_graph(loaded);
        std::string views_text;
        std::string parsed_text;
        try {
          const auto d = sp::decide(loaded, graph, two, options, nullptr);
          views_text = decided_text(d, sp::parameter_uses_of(loaded, graph, d));
        } catch (const shardpoint::error& e) {
          views_text = e.what();
        }
        try {
          const auto d = sp::decide(m.graph(), parsed_graph, two, options, nullptr);
          parsed_text = decided_text(d, sp::parameter_uses_of(m.graph(), parsed_graph, d));
        } catch (const shardpoint::error& e) {
          parsed_text = e.what();
        }
        CHECK(views_text == parsed_text);
        CHECK((loaded.node_views() != nullptr) == as_views); // nothing parsed them
      }
    }
    // The initializers' names (what `weights strategy` lists unread) read
    // either way, nothing parsed.
    std::vector<std::string_view> names;
    for (const auto& t : m.graph().initializer()) {
      names.emplace_back(t.name());
    }
    for (const auto how : {sp::node_reading::parsed, sp::node_reading::views,
                           sp::node_reading::views_with_initializers}) {
      const auto loaded = sp::parse_graph(bytes, "<bytes>", how);
      const bool as_views = loaded.node_views() != nullptr;
      CHECK(sp::initializer_names(loaded) == names);
      CHECK((loaded.node_views() != nullptr) == as_views);
    }
  }
  CHECK(on_views >= 3); // the decoders and the Gemm model
}
