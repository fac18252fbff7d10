// A listS graph has no internal vertex_index: manual_shard must say to give
// one, not fail inside Boost's property lookup.
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  boost::adjacency_list<boost::listS, boost::listS, boost::directedS> g;
  const auto v = add_vertex(g);
  const std::vector<shardpoint::sharding_point<decltype(v)>> points{{v, 0, 0}};
  (void)shardpoint::manual_shard(g, points);
}
