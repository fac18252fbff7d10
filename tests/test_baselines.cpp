// The other frameworks' splits, as their descriptions say they behave.
#include <doctest/doctest.h>

#include <boost/property_map/property_map.hpp>

#include "support.hpp"

namespace base = shardpoint::baselines;

namespace {

// A chain of n vertices, so the layout order is the index order.
test::graph chain(std::size_t n) {
  test::edge_list edges;
  for (std::size_t v = 0; v + 1 < n; ++v) {
    edges.emplace_back(v, v + 1);
  }
  return test::make_graph(n, edges);
}

std::vector<std::size_t> sizes(const shardpoint::sharding_result& r) {
  std::vector<std::size_t> out(static_cast<std::size_t>(r.num_stages()), 0);
  for (std::size_t v = 0; v < r.size(); ++v) {
    ++out[static_cast<std::size_t>(*r.stage(v))];
  }
  return out;
}

} // namespace

TEST_CASE("uniform: equal counts, the remainder to the first stages (DeepSpeed)") {
  CHECK(sizes(base::uniform(chain(11), 4)) == std::vector<std::size_t>{3, 3, 3, 2});
  CHECK(sizes(base::uniform(chain(4), 4)) == std::vector<std::size_t>{1, 1, 1, 1});
  CHECK_THROWS_AS(base::uniform(chain(3), 4), shardpoint::bad_parameter_error);
}

TEST_CASE("greedy threshold: what does not fit piles onto the last stage (PiPPy)") {
  const auto g = chain(6);
  const auto map = [&](const std::vector<double>& w) {
    return boost::make_iterator_property_map(w.begin(), get(boost::vertex_index, g));
  };
  // total 12, threshold 4: [1 1 1] [3] [1 1 ... no room: 4 exceeds] -> the rest
  const std::vector<double> w{1, 1, 1, 3, 1, 5};
  const auto r = base::greedy_threshold(g, map(w), 3);
  CHECK(test::stages_of(r) == std::vector<int>{0, 0, 0, 1, 1, 2});
  // Heavy first vertex: a stage of its own (threshold 15 / 4); the light
  // rest fills two stages, and the fourth stays empty.
  const std::vector<double> heavy{10, 1, 1, 1, 1, 1};
  const auto h = base::greedy_threshold(g, map(heavy), 4);
  CHECK(test::stages_of(h) == std::vector<int>{0, 1, 1, 1, 2, 2});
  CHECK(h.num_stages() == 3);
}

TEST_CASE("by weight: the parameters balanced, whatever the compute (DeepSpeed)") {
  const auto g = chain(6);
  const std::vector<double> params{0, 8, 0, 8, 0, 8};
  const auto r = base::by_weight(
      g, boost::make_iterator_property_map(params.begin(), get(boost::vertex_index, g)), 3);
  const auto m = shardpoint::evaluate(
      g, r, boost::make_iterator_property_map(params.begin(), get(boost::vertex_index, g)));
  CHECK(m.bottleneck == 8);
}
