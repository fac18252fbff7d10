// topological_order / is_topologically_labelled against a literal reference:
// repeatedly take the smallest-index vertex whose predecessors are all taken.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "support.hpp"

using test::make_graph;

namespace {

std::vector<std::uint32_t> reference_order(std::size_t n, const test::edge_list& edges) {
  std::vector<std::uint32_t> order;
  std::vector<bool> taken(n, false);
  while (order.size() < n) {
    std::size_t pick = n;
    for (std::size_t v = 0; v < n && pick == n; ++v) {
      if (taken[v]) {
        continue;
      }
      bool ready = true;
      for (auto [a, b] : edges) {
        ready = ready && !(b == v && !taken[a]);
      }
      if (ready) {
        pick = v;
      }
    }
    if (pick == n) {
      return {}; // a cycle
    }
    taken[pick] = true;
    order.push_back(static_cast<std::uint32_t>(pick));
  }
  return order;
}

} // namespace

TEST_CASE("the lexicographically smallest topological order, on random DAGs") {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const auto how = seed % 2 ? shardpoint::synthetic::labelling::random
                              : shardpoint::synthetic::labelling::topological;
    const auto d = shardpoint::synthetic::random_dag(2 + seed % 12, seed % 29, seed, how);
    test::edge_list edges(d.edges.begin(), d.edges.end());
    const auto g = make_graph(d.num_vertices, edges);
    CAPTURE(seed);
    CHECK(shardpoint::topological_order(g) == reference_order(d.num_vertices, edges));
    bool forward = true;
    for (auto [u, v] : edges) {
      forward = forward && u < v;
    }
    CHECK(shardpoint::is_topologically_labelled(g) == forward);
  }
}

TEST_CASE("a cycle is named, through an index and name map too") {
  const auto g = make_graph(4, {{0, 1}, {1, 2}, {2, 1}, {2, 3}});
  CHECK_FALSE(shardpoint::is_topologically_labelled(g));
  try {
    (void)shardpoint::topological_order(g);
    FAIL("no cycle_error");
  } catch (const shardpoint::cycle_error& e) {
    REQUIRE(e.vertex().has_value());
    CHECK(std::set<std::size_t>{1, 2}.count(*e.vertex()) == 1);
    CHECK(e.category() == shardpoint::error_category::bad_input);
  }
  const std::vector<std::string> names{"a", "b", "c", "d"};
  const auto index = get(boost::vertex_index, g);
  const auto view =
      shardpoint::indexed(g, index, boost::make_iterator_property_map(names.begin(), index));
  try {
    (void)shardpoint::topological_order(view);
    FAIL("no cycle_error");
  } catch (const shardpoint::cycle_error& e) {
    const std::string what = e.what();
    CHECK((what == "shardpoint: the graph has a cycle through vertex 1 ('b')" ||
           what == "shardpoint: the graph has a cycle through vertex 2 ('c')"));
  }
}
