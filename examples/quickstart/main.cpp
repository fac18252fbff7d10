#include <iostream>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  // A chain of 6 operations: edge u -> v means v consumes what u produces.
  using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  graph g(6);
  for (int v = 0; v + 1 < 6; ++v) {
    boost::add_edge(v, v + 1, g);
  }

  // Everything up to vertex 1 on device 0 / stage 0, up to 3 on device 1 /
  // stage 1; the rest falls into the default group (device 2, stage 2).
  const std::vector<shardpoint::sharding_point<std::size_t>> points{{1, 0, 0}, {3, 1, 1}};
  const shardpoint::sharding_result r = shardpoint::manual_shard(g, points);

  for (std::size_t v = 0; v < r.size(); ++v) {
    std::cout << "vertex " << v << ": device " << *r.device(v) << ", stage " << *r.stage(v) << '\n';
  }
  for (const auto& d : shardpoint::validate(g, r, {.num_devices = 2})) {
    std::cout << shardpoint::to_string(d.rule) << ": " << d.message << '\n';
  }
}
