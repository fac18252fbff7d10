// sharding_result: accessors, views and the constructor's checks.
#include <doctest/doctest.h>

#include <range/v3/range/conversion.hpp>

#include "support.hpp"

using shardpoint::sharding_result;
using idx = std::vector<std::size_t>;

TEST_CASE("a result built by hand, with unset vertices") {
  const sharding_result r(5, {0, 0, sharding_result::unset, 2, 2}, {});
  CHECK(r.size() == 5);
  CHECK(r.device(0) == 0);
  CHECK_FALSE(r.device(2).has_value());
  CHECK(r.has_devices());
  CHECK_FALSE(r.has_stages());
  CHECK(r.num_devices() == 3);
  CHECK(r.num_stages() == 0);
  CHECK((r.vertices_on_device(2) | ranges::to<std::vector>()) == idx{3, 4});
  CHECK((r.vertices_on_device(1) | ranges::to<std::vector>()).empty());
  CHECK((r.vertices_in_stage(0) | ranges::to<std::vector>()).empty());
}

TEST_CASE("the views follow the values and are lazy") {
  const auto g = test::make_graph(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});
  const auto r = shardpoint::manual_shard(g, std::vector<test::point>{{1, 0, 1}, {3, 1, 0}});
  CHECK((r.vertices_in_stage(1) | ranges::to<std::vector>()) == idx{0, 1});
  CHECK((r.vertices_in_stage(0) | ranges::to<std::vector>()) == idx{2, 3});
  CHECK((r.vertices_in_stage(2) | ranges::to<std::vector>()) == idx{4, 5});
  CHECK(r.devices().size() == 6);
}

TEST_CASE("the constructor refuses what is not a result") {
  CHECK_THROWS_WITH_AS(sharding_result(3, {0, 1}, {}),
                       "shardpoint: sharding_result given 2 device values for 3 vertices",
                       shardpoint::size_mismatch_error);
  CHECK_THROWS_WITH_AS(sharding_result(2, {}, {0, -4}),
                       "shardpoint: negative stage -4 for vertex 1",
                       shardpoint::invalid_value_error);
}
