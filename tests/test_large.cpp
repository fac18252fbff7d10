// A 10-million-vertex chain: no recursion anywhere, on both code paths.
#include <doctest/doctest.h>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include "support.hpp"

namespace {

using csr = boost::compressed_sparse_row_graph<boost::directedS>;
constexpr std::size_t n = 10'000'000;

// Chain over positions 0..n-1; vertex at position i has index label(i).
template <class Label>
csr chain(Label label) {
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  edges.reserve(n - 1);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    edges.emplace_back(label(i), label(i + 1));
  }
  return csr(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);
}

template <class Label>
void check_chain(Label label) {
  const csr g = chain(label);
  // Eight points at positions 1/8 .. 8/8 - 1 of the chain; point k gets device k.
  std::vector<shardpoint::sharding_point<csr::vertex_descriptor>> points;
  for (int k = 0; k < 8; ++k) {
    const std::size_t pos = (static_cast<std::size_t>(k) + 1) * (n / 8) - 1;
    points.push_back({label(pos), k, k});
  }
  const auto r = shardpoint::manual_shard(g, points);
  REQUIRE(r.size() == n);
  CHECK(r.num_devices() == 8); // n is a multiple of 8: the last point is the last vertex
  std::size_t mismatches = 0;
  for (std::size_t pos = 0; pos < n; ++pos) {
    const int want = static_cast<int>(pos / (n / 8));
    mismatches += r.device(label(pos)) != want || r.stage(label(pos)) != want;
  }
  CHECK(mismatches == 0);
}

} // namespace

TEST_CASE("10^7-vertex chain, index order topological") {
  check_chain([](std::size_t pos) { return pos; });
}

TEST_CASE("10^7-vertex chain, index order reversed (Kahn path)") {
  check_chain([](std::size_t pos) { return n - 1 - pos; });
}
