#include <boost/graph/adjacency_list.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  boost::adjacency_list<boost::listS, boost::listS, boost::bidirectionalS> g;
  const shardpoint::sharding_result r;
  (void)shardpoint::evaluate(g, r);
}
