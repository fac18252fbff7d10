// shardpoint/detail/index_vertices.hpp -- the vertex of each index.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_INDEX_VERTICES_HPP
#define SHARDPOINT_DETAIL_INDEX_VERTICES_HPP

#include <cstddef>
#include <string>
#include <vector>

#include "../concepts.hpp"
#include "../error.hpp"

namespace shardpoint::detail {

/// The descriptor of the vertex of each index, in one pass over the vertices.
/// Throws `invalid_index_map_error` unless `index` maps the vertices of `g`
/// one-to-one onto [0, num_vertices(g)).
template <class G, class Index>
std::vector<vertex_t<G>> index_vertices(const G& g, const Index& index) {
  const std::size_t n = num_vertices(g);
  std::vector<vertex_t<G>> by_index(n);
  std::vector<bool> seen(n, false);
  auto [vi, vend] = vertices(g);
  for (; vi != vend; ++vi) {
    const auto i = static_cast<std::size_t>(get(index, *vi));
    if (i >= n) {
      throw invalid_index_map_error("shardpoint: the vertex index map gives index " +
                                    std::to_string(i) + " for a graph of " + std::to_string(n) +
                                    " vertices");
    }
    if (seen[i]) {
      throw invalid_index_map_error("shardpoint: the vertex index map gives index " +
                                        std::to_string(i) + " to two vertices",
                                    i);
    }
    seen[i] = true;
    by_index[i] = *vi;
  }
  return by_index;
}

} // namespace shardpoint::detail

#endif // SHARDPOINT_DETAIL_INDEX_VERTICES_HPP
