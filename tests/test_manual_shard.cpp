// The manual-sharding procedure on small hand-made graphs.
#include <doctest/doctest.h>

#include <vector>

#include <range/v3/range/conversion.hpp>
#include <range/v3/view/transform.hpp>

#include "support.hpp"

using test::devices_of;
using test::make_graph;
using test::point;
using test::stages_of;
using V = std::vector<int>;

TEST_CASE("chain: each point takes what lies upstream, the rest is the default group") {
  const auto g = make_graph(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, 0, 0}, {3, 1, 1}});
  CHECK(devices_of(r) == V{0, 0, 1, 1, 2, 2});
  CHECK(stages_of(r) == V{0, 0, 1, 1, 2, 2});
  CHECK(r.num_devices() == 3);
  CHECK(r.num_stages() == 3);
}

TEST_CASE("diamond: the second point's walk stops at vertices the first one took") {
  //   0 -> 1 -> 3,  0 -> 2 -> 3
  const auto g = make_graph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{3, 1, 1}, {1, 0, 0}});
  CHECK(devices_of(r) == V{0, 0, 1, 1});
  CHECK(stages_of(r) == V{0, 0, 1, 1});
}

TEST_CASE("two parallel branches onto one device") {
  // 0 -> 1 -> 4 <- 3 <- 2: branches ending in 1 and 3 both go to device 0.
  const auto g = make_graph(5, {{0, 1}, {2, 3}, {1, 4}, {3, 4}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, 0, 0}, {3, 0, 0}, {4, 1, 1}});
  CHECK(devices_of(r) == V{0, 0, 0, 0, 1});
  CHECK(r.num_devices() == 2);
  CHECK((r.vertices_on_device(0) | ranges::to<std::vector>()) ==
        std::vector<std::size_t>{0, 1, 2, 3});
}

TEST_CASE("a point with only a device leaves stages unset everywhere") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{0, 4, std::nullopt}});
  CHECK(devices_of(r) == V{4, 5, 5});
  CHECK_FALSE(r.has_stages());
  CHECK(stages_of(r) == V{-1, -1, -1});
  CHECK(r.num_stages() == 0);
}

TEST_CASE("a point with only a stage leaves devices unset everywhere") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, std::nullopt, 0}});
  CHECK(stages_of(r) == V{0, 0, 1});
  CHECK_FALSE(r.has_devices());
  CHECK(devices_of(r) == V{-1, -1, -1});
}

TEST_CASE("device and stage are computed independently, each from its own points") {
  // 0 -> 1 -> 2 -> 3: device cut after 1, stage cut after 2.
  const auto g = make_graph(4, {{0, 1}, {1, 2}, {2, 3}});
  const auto r =
      shardpoint::manual_shard(g, std::vector<point>{{1, 0, std::nullopt}, {2, std::nullopt, 0}});
  CHECK(devices_of(r) == V{0, 0, 1, 1});
  CHECK(stages_of(r) == V{0, 0, 0, 1});
}

TEST_CASE("each attribute orders its own points") {
  // Vertex 1 is a shared ancestor of points 0 and 2; point 3 (stage only)
  // reaches point 0, so for stages 0 must wait for 3, and 2 comes first.
  const auto g = make_graph(4, {{1, 0}, {1, 2}, {3, 0}});
  const auto r =
      shardpoint::manual_shard(g, std::vector<point>{{0, 0, 0}, {2, 1, 1}, {3, std::nullopt, 2}});
  CHECK(devices_of(r) == V{0, 0, 1, 0}); // device order 0, 2: vertex 1 joins device 0
  CHECK(stages_of(r) == V{0, 1, 1, 2});  // stage order 2, 3, 0: vertex 1 joins stage 1
}

TEST_CASE("ties between independent points go to the smaller index") {
  // 0 feeds both points; their order in the list does not matter.
  const auto g = make_graph(3, {{0, 1}, {0, 2}});
  const auto a = shardpoint::manual_shard(g, std::vector<point>{{2, 5, 5}, {1, 7, 7}});
  const auto b = shardpoint::manual_shard(g, std::vector<point>{{1, 7, 7}, {2, 5, 5}});
  CHECK(devices_of(a) == V{7, 7, 5});
  CHECK(a == b);
}

TEST_CASE("ties in a graph whose index order is not topological") {
  // 2 feeds points 0 and 1; 3 -> 2 too. Index order is not topological.
  const auto g = make_graph(4, {{2, 0}, {2, 1}, {3, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, 1, 1}, {0, 0, 0}});
  CHECK(devices_of(r) == V{0, 1, 0, 0});
}

TEST_CASE("a point reaching a point of smaller index goes first") {
  // 0 -> 5 -> 1: point 5 is upstream of point 1, so it walks first and takes 0.
  const auto g = make_graph(6, {{0, 5}, {5, 1}, {0, 1}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, 1, 1}, {5, 0, 0}});
  CHECK(devices_of(r) == V{0, 1, 2, 2, 2, 0});
}

TEST_CASE("a point whose ancestors were all taken keeps only itself") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, 0, 0}, {2, 1, 1}});
  CHECK(devices_of(r) == V{0, 0, 1});
}

TEST_CASE("no points: nothing is set") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{});
  CHECK(r.size() == 3);
  CHECK_FALSE(r.has_devices());
  CHECK_FALSE(r.has_stages());
  CHECK(r.num_devices() == 0);
  CHECK(ranges::distance(r.vertices_on_device(0)) == 0);
}

TEST_CASE("empty graph") {
  const test::graph g;
  const auto r = shardpoint::manual_shard(g, std::vector<point>{});
  CHECK(r.size() == 0);
  CHECK(r.num_stages() == 0);
}

TEST_CASE("single vertex, with and without a point") {
  const test::graph g(1);
  CHECK(devices_of(shardpoint::manual_shard(g, std::vector<point>{{0, 3, 2}})) == V{3});
  CHECK(devices_of(shardpoint::manual_shard(g, std::vector<point>{})) == V{-1});
}

TEST_CASE("the default group gets the largest value + 1, not the count") {
  const auto g = make_graph(3, {{0, 1}, {1, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{0, 6, 9}});
  CHECK(devices_of(r) == V{6, 7, 7});
  CHECK(stages_of(r) == V{9, 10, 10});
}

TEST_CASE("vertices no point reaches get the default even when upstream of nothing") {
  // 3 is an isolated vertex; 2 is downstream of the only point.
  const auto g = make_graph(4, {{0, 1}, {1, 2}});
  const auto r = shardpoint::manual_shard(g, std::vector<point>{{1, 0, 0}});
  CHECK(devices_of(r) == V{0, 0, 1, 1});
}

TEST_CASE("points may be any input range, e.g. a lazy view") {
  const auto g = make_graph(4, {{0, 1}, {1, 2}, {2, 3}});
  const std::vector<std::size_t> cuts{0, 2};
  auto points = cuts | ranges::views::transform([](std::size_t v) {
                  return point{v, static_cast<int>(v), static_cast<int>(v)};
                });
  const auto r = shardpoint::manual_shard(g, points);
  CHECK(devices_of(r) == V{0, 2, 2, 3});
}
