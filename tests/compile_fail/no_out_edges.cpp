// A type with vertices() but no out_edges(): not an IncidenceGraph.
#include <cstddef>
#include <utility>
#include <vector>

#include <shardpoint/shardpoint.hpp>

namespace mine {
struct graph {
  std::vector<int> v{0, 1, 2};
};
inline std::pair<std::vector<int>::const_iterator, std::vector<int>::const_iterator>
vertices(const graph& g) {
  return {g.v.begin(), g.v.end()};
}
inline std::size_t num_vertices(const graph& g) {
  return g.v.size();
}
} // namespace mine

int main() {
  const mine::graph g;
  const std::vector<shardpoint::sharding_point<int>> points{{1, 0, 0}};
  (void)shardpoint::manual_shard(g, points);
}
