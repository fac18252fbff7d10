// Benchmarking partitions on synthetic graphs: how good is a split?
// Generates a transformer-like DAG with a random labelling and random costs,
// places sharding points evenly by position and by cost, and measures both
// partitions with shardpoint::evaluate.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <shardpoint/shardpoint.hpp>

int main() {
  namespace syn = shardpoint::synthetic;
  auto d = syn::layered_residual(64, 12, /*seed=*/1, syn::labelling::random);
  syn::assign_costs(d, /*seed=*/2, 1, 100, /*heavy=*/0.1, /*heavy_factor=*/20);

  using graph = boost::compressed_sparse_row_graph<boost::directedS>;
  const graph g(boost::edges_are_unsorted_multi_pass, d.edges.begin(), d.edges.end(),
                d.num_vertices);
  const auto cost = boost::make_iterator_property_map(d.cost.begin(), get(boost::vertex_index, g));

  std::printf("%-10s %10s %10s %9s %9s\n", "points by", "bottleneck", "bound", "imbalance",
              "edges cut");
  for (auto by : {syn::spacing::position, syn::spacing::cost}) {
    const auto points = syn::evenly_spaced_points(d, 8, by);
    const auto m = shardpoint::evaluate(g, shardpoint::manual_shard(g, points), cost);
    std::printf("%-10s %10.0f %10.0f %9.3f %9zu\n", by == syn::spacing::cost ? "cost" : "position",
                m.bottleneck, m.lower_bound, m.imbalance, m.edges_cut);
  }
}
