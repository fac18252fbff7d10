// Randomised: thousands of random DAGs, topologically labelled or not,
// against the literal reference of support.hpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "support.hpp"

namespace {

struct random_case {
  std::size_t n = 0;
  test::edge_list edges;
  std::vector<test::point> points;
};

random_case make_case(unsigned seed, bool topological_labels) {
  std::mt19937 rng(seed);
  random_case c;
  c.n = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
  // A random DAG over positions 0..n-1, relabelled by a permutation.
  std::vector<std::size_t> label(c.n);
  std::iota(label.begin(), label.end(), std::size_t{0});
  if (!topological_labels) {
    std::shuffle(label.begin(), label.end(), rng);
  }
  const double density = std::uniform_real_distribution<double>(0.0, 0.25)(rng);
  std::bernoulli_distribution has_edge(density);
  for (std::size_t i = 0; i < c.n; ++i) {
    for (std::size_t j = i + 1; j < c.n; ++j) {
      if (has_edge(rng)) {
        c.edges.emplace_back(label[i], label[j]);
      }
    }
  }
  // Distinct point vertices; values from a small range so that points share
  // devices and stages; each attribute sometimes missing.
  std::vector<std::size_t> vs(c.n);
  std::iota(vs.begin(), vs.end(), std::size_t{0});
  std::shuffle(vs.begin(), vs.end(), rng);
  const std::size_t k =
      c.n == 0 ? 0
               : std::uniform_int_distribution<std::size_t>(0, std::min<std::size_t>(c.n, 7))(rng);
  std::uniform_int_distribution<int> value(0, 4);
  std::bernoulli_distribution missing(0.2);
  for (std::size_t i = 0; i < k; ++i) {
    test::point p{vs[i], std::nullopt, std::nullopt};
    if (!missing(rng)) {
      p.device = value(rng);
    }
    if (!missing(rng)) {
      p.stage = value(rng);
    }
    c.points.push_back(p);
  }
  return c;
}

void check_against_reference(const random_case& c) {
  const auto g = test::make_graph(c.n, c.edges);
  const auto r = shardpoint::manual_shard(g, c.points);
  const test::reference ref(c.n, c.edges);
  REQUIRE(r.size() == c.n);
  CHECK(test::devices_of(r) == ref.run(c.points, 0));
  CHECK(test::stages_of(r) == ref.run(c.points, 1));
}

} // namespace

TEST_CASE("random DAGs with a topological labelling match the reference") {
  for (unsigned seed = 0; seed < 1500; ++seed) {
    CAPTURE(seed);
    check_against_reference(make_case(seed, true));
  }
}

TEST_CASE("random DAGs with a shuffled labelling match the reference") {
  for (unsigned seed = 0; seed < 1500; ++seed) {
    CAPTURE(seed);
    check_against_reference(make_case(seed + 100000, false));
  }
}

TEST_CASE("the reference itself agrees with a hand-checked case") {
  // Guards the reference against drifting with the library: the diamond.
  const test::reference ref(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  CHECK(ref.run({{3, 1, 1}, {1, 0, 0}}, 0) == std::vector<int>{0, 0, 1, 1});
}
