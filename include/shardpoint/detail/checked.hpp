// shardpoint/detail/checked.hpp -- arithmetic on counts and byte sizes that
// refuses to wrap.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Counts of elements and bytes come from files and users: dims of 2^61 x 8,
// a micro-batch of 3e17. Every product and sum of them goes through these,
// which give nothing instead of a wrapped (or undefined) result when it
// passes `max_count` (2^62: far above any real tensor or memory, and far
// enough below 2^63 that a sum of two never overflows). The callers say what
// overflowed, in their words.
#ifndef SHARDPOINT_DETAIL_CHECKED_HPP
#define SHARDPOINT_DETAIL_CHECKED_HPP

#include <cstdint>
#include <optional>

namespace shardpoint::detail {

/// The largest count or byte size shardpoint computes with: 2^62.
inline constexpr std::int64_t max_count = std::int64_t{1} << 62;

/// a * b for counts in [0, max_count]; nothing when either is negative or
/// the product passes max_count.
[[nodiscard]] constexpr std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0 || a > max_count || b > max_count) {
    return std::nullopt;
  }
  if (a != 0 && b > max_count / a) {
    return std::nullopt;
  }
  return a * b;
}

/// a + b for counts in [0, max_count]; nothing past max_count.
[[nodiscard]] constexpr std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0 || a > max_count || b > max_count || a + b > max_count) {
    return std::nullopt;
  }
  return a + b;
}

} // namespace shardpoint::detail

#endif // SHARDPOINT_DETAIL_CHECKED_HPP
