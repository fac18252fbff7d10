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
// permutation to those numbers.
#ifndef SHARDPOINT_SYNTHETIC_HPP
#define SHARDPOINT_SYNTHETIC_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace shardpoint::synthetic {

enum class labelling { topological, random };

struct dag {
  std::size_t num_vertices = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
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
    throw std::invalid_argument("synthetic: at most 2^32 - 1 vertices");
  }
}

inline dag relabel(dag g, labelling how, splitmix64& rng) {
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
    throw std::invalid_argument("layered_residual: width must be at least 3");
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
    throw std::invalid_argument("random_dag: edges need at least two vertices");
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

} // namespace shardpoint::synthetic

#endif // SHARDPOINT_SYNTHETIC_HPP
