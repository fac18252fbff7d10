// balanced_shard asks for the same thing in the same words.
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  boost::adjacency_list<boost::listS, boost::listS, boost::directedS> g;
  (void)shardpoint::balanced_shard(g, shardpoint::constant_weight{1}, {.stages = 1});
}
