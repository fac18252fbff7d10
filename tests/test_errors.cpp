// Every error manual_shard raises, with the promised message and type.
#include <doctest/doctest.h>

#include <climits>
#include <set>
#include <string>

#include "support.hpp"

using test::make_graph;
using test::point;
using pts = std::vector<point>;

namespace {

template <class F>
shardpoint::error caught(F&& f) {
  try {
    f();
  } catch (const shardpoint::error& e) {
    return e;
  }
  FAIL("no shardpoint::error thrown");
  return shardpoint::error("unreachable");
}

} // namespace

TEST_CASE("a cycle is reported with a vertex on it") {
  // 4 -> 0 -> 1 -> 2 -> 0, and 2 -> 3 hangs off the cycle.
  const auto g = make_graph(5, {{4, 0}, {0, 1}, {1, 2}, {2, 0}, {2, 3}});
  for (const auto& points : {pts{}, pts{{3, 0, 0}}, pts{{1, 0, std::nullopt}}}) {
    const auto e = caught([&] { shardpoint::manual_shard(g, points); });
    CHECK(dynamic_cast<const shardpoint::error*>(&e) != nullptr);
    REQUIRE(e.vertex().has_value());
    CHECK(std::set<std::size_t>{0, 1, 2}.count(*e.vertex()) == 1);
    CHECK(std::string(e.what()) ==
          "shardpoint: the graph has a cycle through vertex " + std::to_string(*e.vertex()));
  }
  CHECK_THROWS_AS(shardpoint::manual_shard(g, pts{}), shardpoint::cycle_error);
}

TEST_CASE("validate refuses a graph with a cycle, whatever the sharding") {
  // 4 -> 0 -> 1 -> 2 -> 0, and 2 -> 3: no sharding of it is valid.
  const auto g = make_graph(5, {{4, 0}, {0, 1}, {1, 2}, {2, 0}, {2, 3}});
  for (const auto& r : {shardpoint::sharding_result(5, {}, {}),
                        shardpoint::sharding_result(5, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0})}) {
    const auto e = caught([&] { (void)shardpoint::validate(g, r); });
    REQUIRE(e.vertex().has_value());
    CHECK(std::set<std::size_t>{0, 1, 2}.count(*e.vertex()) == 1);
    CHECK_THROWS_AS((void)shardpoint::validate(g, r), shardpoint::cycle_error);
  }
  // Out of index order but acyclic: validated as before.
  const auto dag = make_graph(3, {{2, 1}, {1, 0}});
  CHECK(shardpoint::validate(dag, shardpoint::sharding_result(3, {0, 0, 0}, {})).empty());
}

TEST_CASE("a self-loop is a cycle") {
  const auto g = make_graph(3, {{0, 1}, {1, 1}, {1, 2}});
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts{{2, 0, 0}}),
                       "shardpoint: the graph has a cycle through vertex 1",
                       shardpoint::cycle_error);
}

TEST_CASE("a cycle far from any point is still found, the graph is not a DAG") {
  // Index order topological except for the back edge 9 -> 7.
  test::edge_list edges;
  for (std::size_t i = 0; i + 1 < 10; ++i) {
    edges.emplace_back(i, i + 1);
  }
  edges.emplace_back(9, 7);
  const auto e = caught([&] { shardpoint::manual_shard(make_graph(10, edges), pts{{0, 0, 0}}); });
  REQUIRE(e.vertex().has_value());
  CHECK(*e.vertex() >= 7);
}

TEST_CASE("a point listed twice") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts{{1, 0, 0}, {0, 1, 1}, {1, 2, 2}}),
                       "shardpoint: vertex 1 is listed as a sharding point more than once",
                       shardpoint::duplicate_point_error);
  // Even when one entry carries only the device and the other only the stage.
  CHECK_THROWS_AS(shardpoint::manual_shard(g, pts{{1, 0, std::nullopt}, {1, std::nullopt, 0}}),
                  shardpoint::duplicate_point_error);
}

TEST_CASE("negative or overflowing device and stage") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts{{2, -1, 0}}),
                       "shardpoint: sharding point vertex 2 has negative device -1",
                       shardpoint::invalid_value_error);
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts{{0, 0, -5}}),
                       "shardpoint: sharding point vertex 0 has negative stage -5",
                       shardpoint::invalid_value_error);
  CHECK_THROWS_WITH_AS(
      shardpoint::manual_shard(g, pts{{0, INT_MAX, 0}}),
      "shardpoint: sharding point vertex 0 has too large a device 2147483647 (devices and stages "
      "are at most 65535)",
      shardpoint::invalid_value_error);
  CHECK_THROWS_AS(shardpoint::manual_shard(g, pts{{0, 0, 65536}}), shardpoint::invalid_value_error);
  // The largest id is taken, and the default group after it too.
  const auto r = shardpoint::manual_shard(g, pts{{0, 65535, 65535}});
  CHECK(r.device(2) == 65536);
  CHECK_THROWS_WITH_AS(shardpoint::sharding_result(2, {0, 65537}, {}),
                       "shardpoint: too large a device 65537 for vertex 1 (devices and stages are "
                       "at most 65535)",
                       shardpoint::invalid_value_error);
  const auto e = caught([&] { shardpoint::manual_shard(g, pts{{0, 0, 0}, {2, 1, -1}}); });
  CHECK(e.vertex() == std::optional<std::size_t>{2});
}

TEST_CASE("a vertex outside the graph") {
  const auto g = make_graph(5, {{0, 1}});
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts{{0, 0, 0}, {12, 1, 1}}),
                       "shardpoint: sharding point vertex 12 is outside the graph (5 vertices)",
                       shardpoint::vertex_out_of_range_error);
  CHECK_THROWS_AS(shardpoint::manual_shard(test::graph{}, pts{{0, 0, 0}}),
                  shardpoint::vertex_out_of_range_error);
}

TEST_CASE("an index map that is not one-to-one onto [0, n)") {
  const auto g = make_graph(3, {{0, 1}});
  std::vector<std::size_t> same(3, 0);
  const auto index = get(boost::vertex_index, g);
  CHECK_THROWS_WITH_AS(
      shardpoint::manual_shard(g, pts{}, boost::make_iterator_property_map(same.begin(), index)),
      "shardpoint: the vertex index map gives index 0 to two vertices",
      shardpoint::invalid_index_map_error);
  std::vector<std::size_t> big{0, 1, 7};
  CHECK_THROWS_WITH_AS(
      shardpoint::manual_shard(g, pts{}, boost::make_iterator_property_map(big.begin(), index)),
      "shardpoint: the vertex index map gives index 7 for a graph of 3 vertices",
      shardpoint::invalid_index_map_error);
}

TEST_CASE("messages name the vertex when a name map is given") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}, {2, 1}});
  const std::vector<std::string> names{"input", "conv", "relu"};
  const auto name_map =
      boost::make_iterator_property_map(names.begin(), get(boost::vertex_index, g));
  const auto index = get(boost::vertex_index, g);
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts{{0, -3, 0}}, index, name_map),
                       "shardpoint: sharding point vertex 0 ('input') has negative device -3",
                       shardpoint::invalid_value_error);
  const auto e = caught([&] { shardpoint::manual_shard(g, pts{}, index, name_map); });
  const std::string what = e.what();
  CHECK((what == "shardpoint: the graph has a cycle through vertex 1 ('conv')" ||
         what == "shardpoint: the graph has a cycle through vertex 2 ('relu')"));
}
