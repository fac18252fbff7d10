// balanced_shard's speed: the default call (compute costs, a memory cap,
// S = 64) against one manual_shard of the same graph at 10^6 and 10^7
// vertices; the exact algorithm with communication and the search beyond
// intervals, by size, to find the largest graph each handles in 10 s.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <shardpoint/shardpoint.hpp>

#include "bench_main.hpp"

namespace {

using csr = boost::compressed_sparse_row_graph<boost::directedS>;
namespace syn = shardpoint::synthetic;

struct fixture {
  std::unique_ptr<csr> graph;
  std::vector<double> cost, memory, bytes;
  std::vector<shardpoint::sharding_point<std::size_t>> points; // 63, for manual_shard
  double cap = 0;
};

// Transformer-like layers of 29 vertices (topological labelling), or a wide
// fan (kind 1), with random costs, memory and output sizes; built once.
const fixture& get(std::int64_t vertices, int kind = 0) {
  static std::map<std::pair<std::int64_t, int>, fixture> cache;
  auto& f = cache[{vertices, kind}];
  if (!f.graph) {
    auto d = kind == 0 ? syn::layered_residual(static_cast<std::size_t>(vertices) / 29, 29, 7)
                       : syn::fan(16, static_cast<std::size_t>(vertices) / 17, 7);
    syn::assign_costs(d, 1, 1, 100, 0.1, 20);
    f.graph = std::make_unique<csr>(boost::edges_are_unsorted_multi_pass, d.edges.begin(),
                                    d.edges.end(), d.num_vertices);
    f.cost = d.cost;
    syn::splitmix64 rng(3);
    double total = 0;
    for (std::size_t v = 0; v < d.num_vertices; ++v) {
      f.memory.push_back(static_cast<double>(rng.below(1000)));
      f.bytes.push_back(static_cast<double>(rng.below(64)));
      total += f.memory.back();
    }
    f.cap = 1.5 * total / 64;
    f.points = syn::evenly_spaced_points(d, 64, syn::spacing::cost);
  }
  return f;
}

auto map(const fixture& f, const std::vector<double>& v) {
  return boost::make_iterator_property_map(v.begin(), get(boost::vertex_index, *f.graph));
}

void manual_shard(benchmark::State& state) {
  const auto& f = get(state.range(0));
  for (auto _ : state) {
    auto r = shardpoint::manual_shard(*f.graph, f.points);
    benchmark::DoNotOptimize(r);
  }
}

// The default call: compute costs, memory capped, 64 stages.
void balanced_shard(benchmark::State& state) {
  const auto& f = get(state.range(0));
  shardpoint::balanced_sharding b;
  for (auto _ : state) {
    b = shardpoint::balanced_shard(*f.graph, map(f, f.cost), map(f, f.memory),
                                   {.stages = 64, .memory_capacity = f.cap});
    benchmark::DoNotOptimize(b);
  }
  state.counters["bottleneck_over_bound"] = b.bottleneck / b.lower_bound;
}

// With communication: exact up to exact_limit, which is raised here so that
// the exact algorithm itself is timed at every size.
void balanced_communication(benchmark::State& state) {
  const auto& f = get(state.range(0));
  const bool exact = state.range(1) != 0;
  shardpoint::balanced_sharding b;
  for (auto _ : state) {
    b = shardpoint::balanced_shard(*f.graph, map(f, f.cost), map(f, f.memory), map(f, f.bytes),
                                   {.stages = static_cast<int>(state.range(2)),
                                    .communication_weight = 0.5,
                                    .search_budget = 0,
                                    .exact_limit = exact ? SIZE_MAX : 0});
    benchmark::DoNotOptimize(b);
  }
  state.counters["bottleneck_over_bound"] = b.bottleneck / b.lower_bound;
}

// The search beyond intervals (refinement) on wide fans, with the budget it
// needs for the graph.
void balanced_search(benchmark::State& state) {
  const auto& f = get(state.range(0), 1);
  shardpoint::balanced_sharding b;
  for (auto _ : state) {
    b = shardpoint::balanced_shard(
        *f.graph, map(f, f.cost), map(f, f.memory), map(f, f.bytes),
        {.stages = 16,
         .communication_weight = 0.5,
         .search_budget = 64 * static_cast<std::size_t>(state.range(0))});
    benchmark::DoNotOptimize(b);
  }
  state.counters["bottleneck_over_bound"] = b.bottleneck / b.lower_bound;
}

} // namespace

BENCHMARK(manual_shard)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(balanced_shard)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(balanced_communication)
    ->ArgsProduct({{20'000, 100'000, 300'000, 1'000'000}, {1}, {8, 64}})
    ->Args({1'000'000, 0, 64})
    ->Args({10'000'000, 0, 64})
    ->ArgNames({"vertices", "exact", "stages"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(balanced_search)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->ArgNames({"vertices"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

SHARDPOINT_BENCHMARK_MAIN()
