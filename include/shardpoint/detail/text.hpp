// shardpoint/detail/text.hpp -- building one-line messages.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_TEXT_HPP
#define SHARDPOINT_DETAIL_TEXT_HPP

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <optional>
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

/// "1 stage", "4 stages", "1 micro-batch", "8 micro-batches": a count and
/// its noun, plural but for one (`plural`, or the noun and an s).
inline std::string counted(std::size_t n, std::string_view noun, std::string_view plural = {}) {
  return std::to_string(n) + " " +
         (n == 1           ? std::string(noun)
          : plural.empty() ? std::string(noun) + "s"
                           : std::string(plural));
}

/// A number as a table shows it: no exponent, at most three decimals, none
/// trailing; below one, six; below 5e-7, as many as show four significant
/// digits (0.000000001234: a table read "1e-09" there).
inline std::string plain_number(double value) {
  const double size = std::fabs(value);
  int decimals = size >= 1 || value == 0 ? 3 : 6;
  if (size > 0 && size < 5e-7) {
    decimals = static_cast<int>(std::ceil(-std::log10(size))) + 3; // 327 at most
  }
  char buf[400]; // 310 digits before the point, or "-0." and 327 decimals, at most
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') {
      out.pop_back();
    }
  }
  return out;
}

/// An enumeration's names, the enumerators' in their order (0, 1, ...):
/// one table for both directions, so that a name is spelled once.
template <class E, std::size_t N>
struct enum_names {
  std::array<std::string_view, N> names;

  /// The name of `e`; "unknown" for a value outside the enumeration.
  [[nodiscard]] constexpr std::string_view operator()(E e) const noexcept {
    const auto i = static_cast<std::size_t>(e);
    return i < N ? names[i] : "unknown";
  }
  /// The enumerator named `name`, when one is.
  [[nodiscard]] constexpr std::optional<E> find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < N; ++i) {
      if (names[i] == name) {
        return static_cast<E>(i);
      }
    }
    return std::nullopt;
  }
  /// "a, b, c": the names as a message lists them.
  [[nodiscard]] std::string listed(std::string_view last_separator = ", ") const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      out.append(i == 0 ? "" : i + 1 == N ? last_separator : ", ").append(names[i]);
    }
    return out;
  }
};

} // namespace shardpoint::detail

#endif // SHARDPOINT_DETAIL_TEXT_HPP
