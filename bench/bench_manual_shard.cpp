// manual_shard with 8 points against one boost::topological_sort of the same
// graph, on layered residual DAGs (transformer-like) from 10^4 to 10^7
// vertices, under a topological and a random labelling.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <climits>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>

#include <shardpoint/shardpoint.hpp>

#include "bench_main.hpp"

namespace {

using csr = boost::compressed_sparse_row_graph<boost::directedS>;
namespace syn = shardpoint::synthetic;

struct fixture {
  std::unique_ptr<csr> graph;
  std::size_t edges = 0;
  std::vector<shardpoint::sharding_point<std::size_t>> points;
};

// Built once per (size, labelling) and kept: building is not measured.
const fixture& get(std::int64_t vertices, bool random_labels) {
  static std::map<std::pair<std::int64_t, bool>, fixture> cache;
  auto& f = cache[{vertices, random_labels}];
  if (!f.graph) {
    constexpr std::size_t width = 29; // as a synthesised decoder layer
    const auto layers = static_cast<std::size_t>(vertices) / width;
    const auto g = syn::layered_residual(
        layers, width, 42, random_labels ? syn::labelling::random : syn::labelling::topological);
    f.graph = std::make_unique<csr>(boost::edges_are_unsorted_multi_pass, g.edges.begin(),
                                    g.edges.end(), g.num_vertices);
    f.edges = g.edges.size();
    // 8 points at layer ends spread over the stack, in vertex-label terms
    // found from an unlabelled copy: layer l's add is vertex (l + 1) * width.
    const auto topo = syn::layered_residual(layers, width, 42, syn::labelling::topological);
    for (int k = 1; k <= 8; ++k) {
      const std::size_t layer = layers * static_cast<std::size_t>(k) / 9;
      const std::size_t position = (layer + 1) * width;
      // Where that vertex went under the labelling: the target of its chain edge.
      std::size_t label = position;
      if (random_labels) {
        for (std::size_t e = 0; e < topo.edges.size(); ++e) {
          if (topo.edges[e].second == position) {
            label = g.edges[e].second;
            break;
          }
        }
      }
      f.points.push_back({label, k - 1, k - 1});
    }
  }
  return f;
}

void counters(benchmark::State& state, const fixture& f) {
  state.counters["vertices"] = static_cast<double>(num_vertices(*f.graph));
  state.counters["edges"] = static_cast<double>(f.edges);
  state.counters["ns_per_edge"] = benchmark::Counter(static_cast<double>(f.edges) * 1e-9,
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void manual_shard(benchmark::State& state) {
  const auto& f = get(state.range(0), state.range(1) != 0);
  for (auto _ : state) {
    auto r = shardpoint::manual_shard(*f.graph, f.points);
    benchmark::DoNotOptimize(r);
  }
  counters(state, f);
}

void topological_sort(benchmark::State& state) {
  const auto& f = get(state.range(0), state.range(1) != 0);
  std::vector<csr::vertex_descriptor> order;
  for (auto _ : state) {
    order.clear();
    order.reserve(num_vertices(*f.graph));
    boost::topological_sort(*f.graph, std::back_inserter(order));
    benchmark::DoNotOptimize(order.data());
  }
  counters(state, f);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t v : {10'000, 100'000, 1'000'000, 4'000'000, 10'000'000}) {
    for (int random : {0, 1}) {
      b->Args({v, random});
    }
  }
  b->ArgNames({"vertices", "random_labels"})->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK(manual_shard)->Apply(sizes);
BENCHMARK(topological_sort)->Apply(sizes);

SHARDPOINT_BENCHMARK_MAIN()
