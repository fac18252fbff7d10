// shardpoint/error.hpp -- the exceptions thrown by shardpoint.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ERROR_HPP
#define SHARDPOINT_ERROR_HPP

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace shardpoint {

/// Base of every exception shardpoint throws. `what()` is one line that names
/// the offending vertex (by index, and by name when a name map was given).
class error : public std::runtime_error {
public:
  explicit error(const std::string& message, std::optional<std::size_t> vertex = std::nullopt)
      : std::runtime_error(message), vertex_(vertex) {}

  /// Index of the vertex the error is about, when there is one.
  [[nodiscard]] std::optional<std::size_t> vertex() const noexcept { return vertex_; }

private:
  std::optional<std::size_t> vertex_;
};

/// The graph has a directed cycle; `vertex()` lies on it.
class cycle_error : public error {
  using error::error;
};

/// The same vertex appears in more than one sharding point.
class duplicate_point_error : public error {
  using error::error;
};

/// A sharding point carries a negative device or stage (or one so large that
/// the default group's `largest + 1` would overflow `int`).
class invalid_value_error : public error {
  using error::error;
};

/// A sharding point names a vertex whose index is not in [0, num_vertices(g)).
class vertex_out_of_range_error : public error {
  using error::error;
};

/// The vertex index map does not map the vertices one-to-one onto
/// [0, num_vertices(g)).
class invalid_index_map_error : public error {
  using error::error;
};

/// A `sharding_result` does not belong to the graph it is used with.
class size_mismatch_error : public error {
  using error::error;
};

} // namespace shardpoint

#endif // SHARDPOINT_ERROR_HPP
