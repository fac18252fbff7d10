// The seed example: ResNet-50 v1 sharded with the seed's shard.yaml. The
// expectation is derived here from the model's tensors (which nodes lie
// upstream of which point), not from the program's output.
#include <map>
#include <set>

#include "onnx_support.hpp"

namespace sp = shardpoint::onnx;
namespace fs = std::filesystem;

namespace {

// For every node, the indices of the nodes it reaches (itself included),
// from the raw tensor names: a plain forward search per node.
std::vector<std::set<std::size_t>> reachable(const ::onnx::GraphProto& g) {
  std::map<std::string, std::vector<std::size_t>> consumers;
  for (int v = 0; v < g.node_size(); ++v) {
    for (const auto& i : g.node(v).input()) {
      consumers[i].push_back(static_cast<std::size_t>(v));
    }
  }
  std::vector<std::set<std::size_t>> out(static_cast<std::size_t>(g.node_size()));
  for (std::size_t v = 0; v < out.size(); ++v) {
    std::vector<std::size_t> todo{v};
    while (!todo.empty()) {
      const std::size_t x = todo.back();
      todo.pop_back();
      if (!out[v].insert(x).second) {
        continue;
      }
      for (const auto& o : g.node(static_cast<int>(x)).output()) {
        for (std::size_t c : consumers[o]) {
          todo.push_back(c);
        }
      }
    }
  }
  return out;
}

void check_seed_example(::onnx::ModelProto model) {
  auto& g = *model.mutable_graph();
  REQUIRE(g.node_size() == 175);
  sp::assign_names(g, sp::naming::strict);
  const auto entries =
      sp::read_config(fs::path(SHARDPOINT_SOURCE_DIR) / "examples/resnet50/shard.yaml");
  REQUIRE(entries.size() == 3);
  const auto nodes = sp::build_graph(g);
  const auto points = sp::resolve(g, entries);
  const auto result = sp::shard(g, nodes, points);

  // Expected: the device / stage of the first point (in node order, which is
  // topological here) that the node reaches; none reached: 2 + 1 = 3.
  std::map<std::size_t, std::pair<int, int>> at_point;
  for (const auto& p : points) {
    at_point[p.vertex] = {*p.device, *p.stage};
  }
  const auto reach = reachable(g);
  std::map<int, std::size_t> per_device;
  for (std::size_t v = 0; v < reach.size(); ++v) {
    std::pair<int, int> want{3, 3};
    for (const auto& [p, value] : at_point) { // ordered by node index
      if (reach[v].count(p)) {
        want = value;
        break;
      }
    }
    CAPTURE(g.node(static_cast<int>(v)).name());
    CHECK(result.device(v) == want.first);
    CHECK(result.stage(v) == want.second);
    ++per_device[want.first];
  }
  CHECK(per_device.size() == 4); // three points plus the default group
  // Landmarks of the seed example.
  const auto device_of = [&](const std::string& name) {
    for (int v = 0; v < g.node_size(); ++v) {
      if (g.node(v).name() == name) {
        return result.device(static_cast<std::size_t>(v)).value_or(-1);
      }
    }
    return -2;
  };
  CHECK(device_of("resnetv17_conv0_fwd") == 0);
  CHECK(device_of("resnetv17_stage1__plus0") == 0);
  CHECK(device_of("resnetv17_stage1_activation0") == 1);
  CHECK(device_of("resnetv17_stage4_batchnorm2_fwd") == 1);
  CHECK(device_of("resnetv17_stage4__plus0") == 2);
  CHECK(device_of("flatten_473") == 3);
  CHECK(device_of("resnetv17_dense0_fwd") == 3);
  // And it is what PopRT needs with num_ipus 4, batches_per_step 16.
  CHECK(sp::validate(g, nodes, result,
                     {.num_devices = 4, .enable_pipelining = true, .batches_per_step = 16})
            .empty());
}

} // namespace

TEST_CASE("seed example on the generated ResNet-50 v1") {
  check_seed_example(sp::synth_resnet50());
}

TEST_CASE("seed example on the model-zoo replica") {
  SKIP_WITHOUT_MODELS();
  check_seed_example(sp::load_model(onnx_test::models_dir() / "resnet50-v1-7-replica.onnx"));
}

TEST_CASE(
    "the generated ResNet-50 has the replica's names, op types, topology and weights' shapes") {
  SKIP_WITHOUT_MODELS();
  const auto replica = sp::load_model(onnx_test::models_dir() / "resnet50-v1-7-replica.onnx");
  const auto synth = sp::synth_resnet50();
  const auto& a = replica.graph();
  const auto& b = synth.graph();
  REQUIRE(a.node_size() == b.node_size());
  for (int v = 0; v < a.node_size(); ++v) {
    CAPTURE(a.node(v).name());
    CHECK(a.node(v).name() == b.node(v).name());
    CHECK(a.node(v).op_type() == b.node(v).op_type());
    CHECK(std::vector<std::string>(a.node(v).input().begin(), a.node(v).input().end()) ==
          std::vector<std::string>(b.node(v).input().begin(), b.node(v).input().end()));
    CHECK(std::vector<std::string>(a.node(v).output().begin(), a.node(v).output().end()) ==
          std::vector<std::string>(b.node(v).output().begin(), b.node(v).output().end()));
  }
  std::map<std::string, std::vector<std::int64_t>> dims_a;
  std::map<std::string, std::vector<std::int64_t>> dims_b;
  for (const auto& t : a.initializer()) {
    dims_a[t.name()].assign(t.dims().begin(), t.dims().end());
  }
  for (const auto& t : b.initializer()) {
    dims_b[t.name()].assign(t.dims().begin(), t.dims().end());
  }
  CHECK(dims_a == dims_b);
}
