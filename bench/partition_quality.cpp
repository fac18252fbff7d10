// How close each split gets to the lower bound: shardpoint's balanced_shard
// against the splits DeepSpeed (uniform, parameters) and PiPPy (greedy
// equal cost) would give, on synthetic graphs and on real models with flops
// costs, for 2 to 64 stages; and balanced_shard's time against one
// manual_shard of the same graph. Prints a Markdown table.
//
//   partition_quality [MODELS_DIR]
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <shardpoint/onnx/adapter.hpp>
#include <shardpoint/shardpoint.hpp>

namespace {

namespace fs = std::filesystem;
namespace syn = shardpoint::synthetic;
using csr = boost::compressed_sparse_row_graph<boost::directedS>;
using clock_type = std::chrono::steady_clock;

struct problem {
  std::string name;
  std::unique_ptr<csr> graph;
  std::vector<double> cost;
  std::vector<double> params; // what DeepSpeed's "parameters" balances
};

template <class F>
double seconds(F&& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void run(const problem& p) {
  const auto index = get(boost::vertex_index, *p.graph);
  const auto cost = boost::make_iterator_property_map(p.cost.begin(), index);
  const auto params = boost::make_iterator_property_map(p.params.begin(), index);
  const std::size_t n = num_vertices(*p.graph);
  for (int S : {2, 4, 8, 16, 64}) {
    if (static_cast<std::size_t>(S) > n) {
      continue;
    }
    shardpoint::balanced_sharding best;
    const double t_balanced =
        seconds([&] { best = shardpoint::balanced_shard(*p.graph, cost, {.stages = S}); });
    const double t_manual = seconds([&] {
      auto r = shardpoint::manual_shard(*p.graph, best.points);
      (void)r;
    });
    const auto ratio = [&](const shardpoint::sharding_result& r) {
      return shardpoint::evaluate(*p.graph, r, cost).bottleneck / best.lower_bound;
    };
    const double uniform = ratio(shardpoint::baselines::uniform(*p.graph, S));
    const double by_params = ratio(shardpoint::baselines::by_weight(*p.graph, params, S));
    const double greedy = ratio(shardpoint::baselines::greedy_threshold(*p.graph, cost, S));
    const double ours = best.bottleneck / best.lower_bound;
    double total = 0;
    double largest = 0;
    for (double c : p.cost) {
      total += c;
      largest = std::max(largest, c);
    }
    const char* proven = best.exact ? "all splits" : best.exact_intervals ? "intervals" : "-";
    std::printf("| %s | %zu | %d | %.3f | **%.3f** | %.3f | %.3f | %.3f | %s | %s | %.1f ms "
                "(%.1fx) |\n",
                p.name.c_str(), n, S, largest / (total / S), ours, uniform, by_params, greedy,
                ours <= std::min({uniform, by_params, greedy}) + 1e-12 ? "yes" : "NO", proven,
                1e3 * t_balanced, t_balanced / std::max(t_manual, 1e-9));
    std::fflush(stdout);
  }
}

problem synthetic(const std::string& name, syn::dag d, std::uint64_t seed) {
  syn::assign_costs(d, seed, 1, 100, 0.1, 20);
  problem p{name,
            std::make_unique<csr>(boost::edges_are_unsorted_multi_pass, d.edges.begin(),
                                  d.edges.end(), d.num_vertices),
            d.cost,
            {}};
  syn::splitmix64 rng(seed + 1);
  for (std::size_t v = 0; v < d.num_vertices; ++v) {
    p.params.push_back(rng.below(4) == 0 ? static_cast<double>(rng.below(1000)) : 0.0);
  }
  return p;
}

problem model(const fs::path& path) {
  namespace sp = shardpoint::onnx;
  auto file = sp::read_model(path);
  auto& graph = *file.proto().mutable_graph();
  sp::assign_names(graph, sp::naming::rename_empty);
  const auto nodes = sp::build_graph(graph);
  const auto w = sp::measure_nodes(file.proto(), nodes, sp::cost_model::flops);
  problem p{path.stem().string(), std::make_unique<csr>(nodes.graph), {}, {}};
  p.cost.assign(w.cost.begin(), w.cost.end());
  p.params.assign(w.parameter_bytes.begin(), w.parameter_bytes.end());
  return p;
}

} // namespace

int main(int argc, char** argv) {
  std::printf("| graph | vertices | S | largest vertex / (total / S) | shardpoint | uniform "
              "(DeepSpeed) | parameters (DeepSpeed) | equal cost greedy (PiPPy) | best | optimal "
              "among | balanced_shard time (x manual_shard) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|\n");
  run(synthetic("layered transformer", syn::layered_residual(400, 29, 1), 1));
  run(synthetic("random DAG", syn::random_dag(10'000, 30'000, 2), 2));
  run(synthetic("wide fan", syn::fan(64, 100, 3), 3));
  run(synthetic("layered, 10^6", syn::layered_residual(34'483, 29, 4), 4));
  if (argc > 1) {
    std::vector<fs::path> models;
    for (const auto& e : fs::directory_iterator(argv[1])) {
      if (e.path().extension() == ".onnx") {
        models.push_back(e.path());
      }
    }
    std::sort(models.begin(), models.end());
    for (const auto& m : models) {
      run(model(m));
    }
  }
  std::printf("\nEach figure is bottleneck / lower bound (max(total / S, largest vertex)); "
              "lower is better, 1 is a perfect split. No split into intervals needs more than "
              "1 + largest vertex / (total / S) of it.\n");
}
