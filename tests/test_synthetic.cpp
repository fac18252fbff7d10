// The generators' positions and costs, and evenly spaced points.
#include <doctest/doctest.h>

#include "support.hpp"

namespace syn = shardpoint::synthetic;

TEST_CASE("positions are a topological order, under either labelling") {
  for (auto how : {syn::labelling::topological, syn::labelling::random}) {
    for (const auto& d : {syn::layered_residual(20, 7, 1, how), syn::random_dag(300, 900, 2, how),
                          syn::fan(5, 6, 3, how)}) {
      REQUIRE(d.position.size() == d.num_vertices);
      std::vector<bool> seen(d.num_vertices, false);
      for (auto p : d.position) {
        REQUIRE(p < d.num_vertices);
        CHECK_FALSE(seen[p]);
        seen[p] = true;
      }
      for (auto [u, v] : d.edges) {
        CHECK(d.position[u] < d.position[v]);
      }
      if (how == syn::labelling::topological) {
        for (std::size_t v = 0; v < d.num_vertices; ++v) {
          CHECK(d.position[v] == v);
        }
      }
    }
  }
}

TEST_CASE("costs: integral, in range, deterministic") {
  auto d = syn::random_dag(1000, 0, 5);
  syn::assign_costs(d, 9, 3, 7);
  REQUIRE(d.cost.size() == 1000);
  for (double c : d.cost) {
    CHECK(c >= 3);
    CHECK(c <= 7);
    CHECK(c == static_cast<double>(static_cast<long long>(c)));
  }
  auto e = syn::random_dag(1000, 0, 5);
  syn::assign_costs(e, 9, 3, 7);
  CHECK(d.cost == e.cost);
  syn::assign_costs(e, 9, 1, 1, 0.5, 10);
  const auto heavy = std::count(e.cost.begin(), e.cost.end(), 10.0);
  CHECK(heavy > 400);
  CHECK(heavy < 600);
  CHECK_THROWS_AS(syn::assign_costs(e, 1, 5, 4), shardpoint::bad_parameter_error);
}

TEST_CASE("evenly spaced points split a chain evenly, by position or by cost") {
  auto chain = syn::random_dag(10, 0, 1);
  for (std::uint32_t v = 0; v + 1 < 10; ++v) {
    chain.edges.emplace_back(v, v + 1);
  }
  const auto g = test::make_graph(10, test::edge_list(chain.edges.begin(), chain.edges.end()));
  CHECK(syn::evenly_spaced_points(chain, 1).empty());
  for (int s = 2; s <= 10; ++s) {
    const auto points = syn::evenly_spaced_points(chain, s);
    CHECK(points.size() == static_cast<std::size_t>(s - 1));
    const auto m = shardpoint::evaluate(g, shardpoint::manual_shard(g, points));
    REQUIRE(m.stages.size() == static_cast<std::size_t>(s));
    for (const auto& x : m.stages) {
      CHECK(x.vertices >= 10 / static_cast<std::size_t>(s));
      CHECK(x.vertices <= (10 + static_cast<std::size_t>(s) - 1) / static_cast<std::size_t>(s));
    }
  }
  chain.cost = {1, 1, 1, 1, 1, 1, 1, 1, 1, 9}; // total 18
  const auto by_cost = syn::evenly_spaced_points(chain, 2, syn::spacing::cost);
  REQUIRE(by_cost.size() == 1);
  CHECK(by_cost[0].vertex == 8); // 9 | 9
  CHECK_THROWS_AS(syn::evenly_spaced_points(chain, 11), shardpoint::bad_parameter_error);
  CHECK_THROWS_AS(syn::evenly_spaced_points(syn::random_dag(5, 0, 1), 2, syn::spacing::cost),
                  shardpoint::bad_parameter_error);
}

TEST_CASE("on a random labelling the points are the vertices at those positions") {
  auto d = syn::layered_residual(8, 5, 3, syn::labelling::random);
  const auto points = syn::evenly_spaced_points(d, 4);
  REQUIRE(points.size() == 3);
  CHECK(d.position[points[0].vertex] == 9); // 41 vertices: 10 | 10 | 10 | 11
  CHECK(d.position[points[1].vertex] == 19);
  CHECK(d.position[points[2].vertex] == 29);
}
