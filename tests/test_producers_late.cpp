// producers_late_positions() against a reference that sorts the vertices by
// a key: a source moves to its first consumer's place, just before it.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "support.hpp"

namespace {

std::vector<std::size_t> reference(std::size_t n, const test::edge_list& edges) {
  std::vector<bool> has_predecessor(n, false);
  std::vector<std::size_t> first(n, n);
  for (const auto& [u, v] : edges) {
    has_predecessor[v] = true;
    first[u] = std::min<std::size_t>(first[u], v);
  }
  // key: (place, 0 for a moved source / 1 for the vertex itself, index)
  std::vector<std::tuple<std::size_t, int, std::size_t>> keys;
  for (std::size_t v = 0; v < n; ++v) {
    const bool moved = !has_predecessor[v] && first[v] < n && first[v] > v;
    keys.emplace_back(moved ? first[v] : v, moved ? 0 : 1, v);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::size_t> position(n);
  for (std::size_t p = 0; p < n; ++p) {
    position[std::get<2>(keys[p])] = p;
  }
  return position;
}

} // namespace

TEST_CASE("a source moves to just before its first consumer") {
  // 0 and 1 are sources read by 3; 2 reads nothing and is read by nobody.
  const test::edge_list edges{{0, 3}, {1, 3}, {3, 4}, {1, 4}};
  const auto g = test::make_graph(5, edges);
  CHECK(shardpoint::producers_late_positions(g) == std::vector<std::size_t>{1, 2, 0, 3, 4});
}

TEST_CASE("random graphs: the reference's order, a permutation, still topological") {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const auto d = shardpoint::synthetic::random_dag(2 + seed % 30, seed % 60, seed);
    const test::edge_list edges(d.edges.begin(), d.edges.end());
    const auto g = test::make_graph(d.num_vertices, edges);
    const auto position = shardpoint::producers_late_positions(g);
    CAPTURE(seed);
    CHECK(position == reference(d.num_vertices, edges));
    std::vector<std::size_t> sorted = position;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> all(d.num_vertices);
    std::iota(all.begin(), all.end(), std::size_t{0});
    CHECK(sorted == all);
    for (const auto& [u, v] : edges) {
      CHECK(position[u] < position[v]);
    }
  }
}
