// Manual sharding of a graph type that is not Boost's (see custom_graph.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <iterator>
#include <vector>

#include <boost/graph/topological_sort.hpp>

#include <shardpoint/shardpoint.hpp>

#include "custom_graph.hpp"

int main() {
  // A two-branch model: 0 -> 1 -> 2 -> 5 and 0 -> 3 -> 4 -> 5 -> 6.
  const mygraph::dag g{{{1, 3}, {2}, {5}, {4}, {5}, {6}, {}}};

  // Boost's own algorithms accept it...
  std::vector<std::uint32_t> reverse_order;
  boost::topological_sort(g, std::back_inserter(reverse_order));
  std::cout << "boost::topological_sort visits " << reverse_order.size() << " vertices\n";

  // ...and so does shardpoint: both branches on device 0, the join on device 1.
  const std::vector<shardpoint::sharding_point<std::uint32_t>> points{
      {2, 0, 0}, {4, 0, 0}, {5, 1, 1}};
  const shardpoint::sharding_result r = shardpoint::manual_shard(g, points);
  for (std::uint32_t v = 0; v < num_vertices(g); ++v) {
    std::cout << "vertex " << v << ": device " << *r.device(v) << ", stage " << *r.stage(v) << '\n';
  }
  const auto problems = shardpoint::validate(
      g, r, {.num_devices = 3, .enable_pipelining = true, .batches_per_step = 6});
  std::cout << (problems.empty() ? "valid for a 3-stage pipeline\n" : "invalid\n");
  return problems.empty() ? 0 : 1;
}
