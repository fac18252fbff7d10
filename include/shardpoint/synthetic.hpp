// shardpoint/synthetic.hpp -- deterministic synthetic DAGs for tests and
// partitioning benchmarks.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Every generator returns an edge list (u -> v: v consumes u) that depends
// only on its arguments and the seed -- the same on every platform and
// standard library (its own splitmix64 generator; no std distributions).
// `labelling::topological` numbers vertices so that every edge goes from a
// smaller to a larger index; `labelling::random` applies a random
// permutation to those numbers, and `position` keeps each vertex's place in
// the topological numbering. `assign_costs` gives every vertex a cost, and
// `evenly_spaced_points` picks the sharding points a user benchmarking
// manual sharding would: evenly spaced in topological position or in cost.
#ifndef SHARDPOINT_SYNTHETIC_HPP
#define SHARDPOINT_SYNTHETIC_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "detail/text.hpp"
#include "error.hpp"
#include "sharding_point.hpp"

namespace shardpoint::synthetic {

enum class labelling { topological, random };

struct dag {
  std::size_t num_vertices = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  /// position[v]: v's place in a topological order (the generator's own
  /// numbering); position[v] == v under labelling::topological.
  std::vector<std::uint32_t> position;
  /// Per-vertex costs, empty until assign_costs() fills them.
  std::vector<double> cost;
};

/// splitmix64 (Steele, Lea, Flood 2014): small, fast, fully specified.
class splitmix64 {
public:
  explicit splitmix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t operator()() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// In [0, bound), bound > 0; the modulo's bias (< bound / 2^64) is far
  /// below anything these graphs could show.
  std::uint64_t below(std::uint64_t bound) { return (*this)() % bound; }

private:
  std::uint64_t state_;
};

namespace detail {

inline void check_size(std::size_t n) {
  if (n > UINT32_MAX) {
    throw bad_parameter_error("synthetic: at most 2^32 - 1 vertices");
  }
}

inline dag relabel(dag g, labelling how, splitmix64& rng) {
  g.position.resize(g.num_vertices);
  std::iota(g.position.begin(), g.position.end(), std::uint32_t{0});
  if (how == labelling::random) {
    std::vector<std::uint32_t> perm(g.num_vertices);
    for (std::size_t i = 0; i < perm.size(); ++i) {
      perm[i] = static_cast<std::uint32_t>(i);
    }
    for (std::size_t i = perm.size(); i > 1; --i) { // Fisher-Yates
      std::swap(perm[i - 1], perm[rng.below(i)]);
    }
    for (auto& [u, v] : g.edges) {
      u = perm[u];
      v = perm[v];
    }
    for (std::size_t i = 0; i < perm.size(); ++i) {
      g.position[perm[i]] = static_cast<std::uint32_t>(i);
    }
  }
  return g;
}

} // namespace detail

/// A transformer-like stack: `layers` layers of `width` >= 3 vertices each.
/// A layer reads the previous layer's output x: a norm reads x, a chain of
/// width - 2 operations follows (with a random skip inside the layer every
/// fourth operation), and an add reads the chain's end and x (the residual).
/// About width + width / 4 + 1 edges per layer.
inline dag layered_residual(std::size_t layers, std::size_t width, std::uint64_t seed,
                            labelling how = labelling::topological) {
  if (width < 3) {
    throw bad_parameter_error("layered_residual: width must be at least 3");
  }
  detail::check_size(layers * width + 1);
  splitmix64 rng(seed);
  dag g;
  g.num_vertices = layers * width + 1; // + the input
  g.edges.reserve(layers * (width + width / 4 + 1));
  std::uint32_t x = 0;
  std::uint32_t next = 1;
  for (std::size_t l = 0; l < layers; ++l) {
    const std::uint32_t first = next;
    g.edges.emplace_back(x, next); // norm
    for (std::size_t k = 1; k + 1 < width; ++k) {
      const std::uint32_t v = first + static_cast<std::uint32_t>(k);
      g.edges.emplace_back(v - 1, v);
      if (k % 4 == 0) {
        g.edges.emplace_back(first + static_cast<std::uint32_t>(rng.below(k - 1)), v);
      }
    }
    const std::uint32_t add = first + static_cast<std::uint32_t>(width - 1);
    g.edges.emplace_back(add - 1, add);
    g.edges.emplace_back(x, add); // residual
    x = add;
    next = add + 1;
  }
  return detail::relabel(std::move(g), how, rng);
}

/// `edges` edges between uniformly random pairs of distinct vertices, each
/// from the earlier to the later position (parallel edges possible).
inline dag random_dag(std::size_t vertices, std::size_t edges, std::uint64_t seed,
                      labelling how = labelling::topological) {
  detail::check_size(vertices);
  if (vertices < 2 && edges > 0) {
    throw bad_parameter_error("random_dag: edges need at least two vertices");
  }
  splitmix64 rng(seed);
  dag g;
  g.num_vertices = vertices;
  g.edges.reserve(edges);
  while (g.edges.size() < edges) {
    auto a = static_cast<std::uint32_t>(rng.below(vertices));
    auto b = static_cast<std::uint32_t>(rng.below(vertices));
    if (a != b) {
      g.edges.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  return detail::relabel(std::move(g), how, rng);
}

/// `depth` rounds of wide fan-out and fan-in: a hub feeds `width` vertices,
/// which all feed the next hub. (depth * (width + 1) + 1 vertices.)
inline dag fan(std::size_t width, std::size_t depth, std::uint64_t seed,
               labelling how = labelling::topological) {
  detail::check_size(depth * (width + 1) + 1);
  splitmix64 rng(seed);
  dag g;
  g.num_vertices = depth * (width + 1) + 1;
  g.edges.reserve(2 * width * depth);
  std::uint32_t hub = 0;
  for (std::size_t d = 0; d < depth; ++d) {
    const std::uint32_t next_hub = hub + static_cast<std::uint32_t>(width) + 1;
    for (std::uint32_t k = 1; k <= width; ++k) {
      g.edges.emplace_back(hub, hub + k);
      g.edges.emplace_back(hub + k, next_hub);
    }
    hub = next_hub;
  }
  return detail::relabel(std::move(g), how, rng);
}

/// Gives every vertex a cost drawn uniformly from the integers in
/// [low, high] (integral, so that sums are exact in double). A fraction
/// `heavy` of the vertices (chosen at random) costs `heavy_factor` times
/// more, as matrix products do among elementwise operations.
inline void assign_costs(dag& g, std::uint64_t seed, double low = 1, double high = 100,
                         double heavy = 0, double heavy_factor = 10) {
  if (!(low >= 0) || !(high >= low) || !(heavy >= 0 && heavy <= 1) || !(heavy_factor >= 0)) {
    throw bad_parameter_error("synthetic: costs need 0 <= low <= high, 0 <= heavy <= 1 and "
                              "heavy_factor >= 0");
  }
  splitmix64 rng(seed);
  const auto span = static_cast<std::uint64_t>(std::floor(high) - std::ceil(low)) + 1;
  g.cost.resize(g.num_vertices);
  for (auto& c : g.cost) {
    c = std::ceil(low) + static_cast<double>(rng.below(span));
    if (heavy > 0 && static_cast<double>(rng.below(1'000'000)) < heavy * 1e6) {
      c *= heavy_factor;
    }
  }
}

/// What evenly_spaced_points spaces evenly.
enum class spacing { position, cost };

/// S - 1 sharding points (device = stage = k for the k-th), at the vertices
/// whose topological positions split the graph into S equal parts: by
/// vertex count (spacing::position) or by cost (spacing::cost, which needs
/// assign_costs). The last part is the default group (stage S - 1). On a
/// chain this is an even split; on a DAG each point also takes its
/// ancestors, as manual sharding does. Throws bad_parameter_error for
/// S < 1 or S above the number of vertices.
inline std::vector<sharding_point<std::size_t>>
evenly_spaced_points(const dag& g, int stages, spacing by = spacing::position) {
  if (stages < 1 || static_cast<std::size_t>(stages) > g.num_vertices) {
    throw bad_parameter_error(shardpoint::detail::cat(
        "synthetic: cannot space ", stages, " stages over ", g.num_vertices, " vertices"));
  }
  if (by == spacing::cost && g.cost.size() != g.num_vertices) {
    throw bad_parameter_error("synthetic: spacing by cost needs assign_costs() first");
  }
  const std::size_t n = g.num_vertices;
  std::vector<std::size_t> at(n); // the vertex at each topological position
  for (std::size_t v = 0; v < n; ++v) {
    at[g.position[v]] = v;
  }
  std::vector<double> prefix(n + 1, 0); // weight of positions < p
  for (std::size_t p = 0; p < n; ++p) {
    prefix[p + 1] = prefix[p] + (by == spacing::cost ? g.cost[at[p]] : 1.0);
  }
  std::vector<sharding_point<std::size_t>> points;
  std::size_t next = 0; // the first position of the current part
  for (int k = 1; k < stages; ++k) {
    // The last position whose prefix stays within k/S of the total, kept
    // inside [next, n - 1 - (S - k)] so that no part is empty.
    const double target = prefix[n] * k / stages;
    const auto after = std::upper_bound(prefix.begin() + 1, prefix.end(), target);
    std::size_t last = static_cast<std::size_t>(after - prefix.begin());
    last = last >= 2 ? last - 2 : 0;
    last = std::clamp(last, next, n - 1 - static_cast<std::size_t>(stages - k));
    points.push_back({at[last], k - 1, k - 1});
    next = last + 1;
  }
  return points;
}

} // namespace shardpoint::synthetic

#endif // SHARDPOINT_SYNTHETIC_HPP
