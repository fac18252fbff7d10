// shardpoint/error.hpp -- the exceptions thrown by shardpoint, by category.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Every exception shardpoint throws derives from `shardpoint::error` and
// belongs to one of four categories, which is all a caller (the command line,
// the Python bindings) needs to decide what to tell the user:
//
//   bad_input      the data given cannot be used: a graph with a cycle, a
//                  model or config file that is malformed, a point naming no
//                  vertex. The user fixes the input.
//   bad_parameter  a parameter or option is out of its domain: zero stages,
//                  a negative cap, an index map that is not one-to-one.
//   unsupported    the request is valid but beyond what this version does
//                  (e.g. a model over protobuf's 2 GiB limit).
//   internal       a bug: an invariant shardpoint itself should have kept.
#ifndef SHARDPOINT_ERROR_HPP
#define SHARDPOINT_ERROR_HPP

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <shardpoint/detail/text.hpp>

namespace shardpoint {

enum class error_category { bad_input, bad_parameter, unsupported, internal };

/// The categories' names, as messages and the command line's table say them.
inline constexpr detail::enum_names<error_category, 4> error_category_names{
    {"bad input", "bad parameter", "unsupported", "internal error"}};

[[nodiscard]] constexpr std::string_view to_string(error_category c) noexcept {
  return error_category_names(c);
}

/// Base of every exception shardpoint throws. `what()` is one line that names
/// the offending vertex (by index, and by name when a name map was given).
class error : public std::runtime_error {
public:
  explicit error(const std::string& message, std::optional<std::size_t> vertex = std::nullopt,
                 error_category category = error_category::bad_input)
      : std::runtime_error(message), vertex_(vertex), category_(category) {}

  /// The index of the vertex the error is about, when there is one (an
  /// `std::optional<std::size_t>`: empty for errors about no single vertex).
  [[nodiscard]] std::optional<std::size_t> vertex() const noexcept { return vertex_; }

  /// What kind of problem this is; see the top of this header.
  [[nodiscard]] error_category category() const noexcept { return category_; }

private:
  std::optional<std::size_t> vertex_;
  error_category category_;
};

/// An error of category `C`: the class each category's errors derive from.
template <error_category C>
class categorised_error : public error {
public:
  explicit categorised_error(const std::string& message,
                             std::optional<std::size_t> vertex = std::nullopt)
      : error(message, vertex, C) {}
};

/// The data given cannot be used (graph, model, file, config).
using bad_input_error = categorised_error<error_category::bad_input>;
/// A parameter or option is outside its domain.
using bad_parameter_error = categorised_error<error_category::bad_parameter>;
/// A valid request this version does not support.
using unsupported_error = categorised_error<error_category::unsupported>;
/// An invariant shardpoint should have kept did not hold: a bug.
using internal_error = categorised_error<error_category::internal>;

/// A sharding that breaks a rule a use of it depends on (a stage with no
/// vertex, data flowing to an earlier stage, a vertex without a stage): the
/// command line's "validation failed" (exit 3), not bad input.
class invalid_sharding_error : public bad_input_error {
  using bad_input_error::bad_input_error;
};

/// The graph has a directed cycle; `vertex()` lies on it.
class cycle_error : public bad_input_error {
  using bad_input_error::bad_input_error;
};

/// The same vertex appears in more than one sharding point.
class duplicate_point_error : public bad_input_error {
  using bad_input_error::bad_input_error;
};

/// A sharding point carries a negative device or stage (or one so large that
/// the default group's `largest + 1` would overflow `int`).
class invalid_value_error : public bad_input_error {
  using bad_input_error::bad_input_error;
};

/// A sharding point names a vertex whose index is not in [0, num_vertices(g)).
class vertex_out_of_range_error : public bad_input_error {
  using bad_input_error::bad_input_error;
};

/// The vertex index map does not map the vertices one-to-one onto
/// [0, num_vertices(g)).
class invalid_index_map_error : public bad_parameter_error {
  using bad_parameter_error::bad_parameter_error;
};

/// A `sharding_result` does not belong to the graph it is used with.
class size_mismatch_error : public bad_parameter_error {
  using bad_parameter_error::bad_parameter_error;
};

} // namespace shardpoint

#endif // SHARDPOINT_ERROR_HPP
