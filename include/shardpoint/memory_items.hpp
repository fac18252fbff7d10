// shardpoint/memory_items.hpp -- memory shared between vertices.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_MEMORY_ITEMS_HPP
#define SHARDPOINT_MEMORY_ITEMS_HPP

#include <cstdint>
#include <vector>

namespace shardpoint {

/// Memory shared between vertices: items (weights, buffers) with their
/// bytes, and the items each vertex uses. A stage holds each item it uses
/// once. Vertices are by index.
struct memory_items {
  std::vector<double> bytes;                    ///< per item
  std::vector<std::vector<std::uint32_t>> used; ///< per vertex index: its items
};

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_ITEMS_HPP
