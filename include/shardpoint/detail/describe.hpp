// shardpoint/detail/describe.hpp -- how messages name a vertex.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_DESCRIBE_HPP
#define SHARDPOINT_DETAIL_DESCRIBE_HPP

#include <cstddef>
#include <sstream>
#include <string>
#include <type_traits>

namespace shardpoint {

/// Stands for "no name map": messages then name vertices by index only.
struct no_names {};

namespace detail {

/// "vertex 17", or "vertex 17 ('conv3')" when a name map is given.
template <class Names, class Vertex>
std::string describe(std::size_t index, const Vertex& v, const Names& names) {
  std::ostringstream os;
  os << "vertex " << index;
  if constexpr (!std::is_same_v<Names, no_names>) {
    os << " ('" << get(names, v) << "')";
  } else {
    (void)v;
    (void)names;
  }
  return os.str();
}

} // namespace detail
} // namespace shardpoint

#endif // SHARDPOINT_DETAIL_DESCRIBE_HPP
