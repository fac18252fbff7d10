// Points whose vertex type does not convert to the graph's.
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> g(3);
  const std::vector<shardpoint::sharding_point<std::string>> points{{"a", 0, 0}};
  (void)shardpoint::manual_shard(g, points);
}
