// shardpoint/sharding_point.hpp -- a user-named vertex with a device and/or a
// pipeline stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_SHARDING_POINT_HPP
#define SHARDPOINT_SHARDING_POINT_HPP

#include <optional>

namespace shardpoint {

/// The largest device or stage a sharding point may carry. Devices and
/// stages index per-group tables (validation, evaluation, the runtime's
/// devices), so they are bounded: memory follows the graph, never the value
/// of an id. The vertices no point takes go to the largest + 1, so a
/// sharding_result holds values up to max_group_id + 1.
inline constexpr int max_group_id = 65535;

/// One sharding point: `vertex` and everything upstream of it that no earlier
/// point took goes to `device` and/or `stage`. A point may carry only one of
/// the two (model parallelism without pipelining gives devices only).
template <class Vertex>
struct sharding_point {
  Vertex vertex;
  std::optional<int> device;
  std::optional<int> stage;

  friend bool operator==(const sharding_point&, const sharding_point&) = default;
};

template <class Vertex>
sharding_point(Vertex, std::optional<int>, std::optional<int>) -> sharding_point<Vertex>;

} // namespace shardpoint

#endif // SHARDPOINT_SHARDING_POINT_HPP
