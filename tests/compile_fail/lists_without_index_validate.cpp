// The same requirement, the same message, from validate and evaluate.
#include <boost/graph/adjacency_list.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  boost::adjacency_list<boost::vecS, boost::listS, boost::directedS> g;
  const shardpoint::sharding_result r;
  (void)shardpoint::validate(g, r);
}
