// shardpoint/detail/text.hpp -- building one-line messages.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_TEXT_HPP
#define SHARDPOINT_DETAIL_TEXT_HPP

#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace shardpoint::detail {

/// The concatenation of `parts`: strings, string views, C strings, chars and
/// integers. Appends into one string: the `"literal" + std::to_string(...)`
/// pattern makes g++ 12 warn falsely (-Wrestrict, GCC bug 105329) at -O3 in
/// users' Release builds with warnings as errors.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  const auto add = [&out](const auto& part) {
    using T = std::remove_cvref_t<decltype(part)>;
    if constexpr (std::is_same_v<T, char>) {
      out.push_back(part);
    } else if constexpr (std::is_integral_v<T>) {
      out.append(std::to_string(part));
    } else {
      out.append(std::string_view(part));
    }
  };
  (add(parts), ...);
  return out;
}

/// A number as a message shows it: 8, 2.5, 1.25e+09 (up to 15 significant
/// digits, no trailing zeros).
inline std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", value);
  return buf;
}

} // namespace shardpoint::detail

#endif // SHARDPOINT_DETAIL_TEXT_HPP
