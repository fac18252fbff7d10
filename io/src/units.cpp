// Byte sizes as people write and read them.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/error.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

namespace {

// `text` without a leading '+' (from_chars reads a minus sign only), read
// whole as a decimal; the error from_chars gives, or errc::invalid_argument
// where it does not read all of it.
std::errc decimal(std::string_view text, double& value) {
  if (text.starts_with('+') && !text.substr(1).starts_with('-')) {
    text.remove_prefix(1);
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return text.empty() || end != text.data() + text.size() ? std::errc::invalid_argument : ec;
}

// An out-of-range decimal's magnitude is too small when its exponent is
// negative ("1e-400"), else too large ("1e400", 400 digits).
bool exponent_negative(std::string_view text) {
  const auto e = text.find_first_of("eE");
  return e != std::string_view::npos && text.substr(e + 1).starts_with('-');
}

} // namespace

std::optional<double> read_decimal(std::string_view text) {
  double value = 0;
  if (decimal(text, value) != std::errc() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

bool decimal_overflows(std::string_view text) {
  double value = 0;
  return decimal(text, value) == std::errc::result_out_of_range && !exponent_negative(text);
}

std::string decimal_error(std::string_view text) {
  double value = 0;
  if (decimal(text, value) != std::errc::result_out_of_range) {
    return quote(text) + " is not a number";
  }
  return quote(text) + (exponent_negative(text)
                            ? " is below a double's smallest (about 2.2e-308); give 0"
                            : " is beyond a double's range (about 1.8e308)");
}

std::optional<double> parse_bytes(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.')) {
    return std::nullopt;
  }
  // The decimal number it starts with (from_chars reads no hexadecimal),
  // then the unit.
  double value = 0;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  std::string unit(text.substr(static_cast<std::size_t>(stop - text.data())));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) {
    unit.erase(0, 1);
  }
  for (auto& c : unit) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  static const std::pair<const char*, double> units[] = {{"", 1},
                                                         {"b", 1},
                                                         {"k", 1e3},
                                                         {"kb", 1e3},
                                                         {"m", 1e6},
                                                         {"mb", 1e6},
                                                         {"g", 1e9},
                                                         {"gb", 1e9},
                                                         {"t", 1e12},
                                                         {"tb", 1e12},
                                                         {"kib", 1024.0},
                                                         {"mib", 1048576.0},
                                                         {"gib", 1073741824.0},
                                                         {"tib", 1099511627776.0}};
  for (const auto& [name, factor] : units) {
    if (unit == name) {
      return value * factor;
    }
  }
  return std::nullopt;
}

std::int64_t parse_size(std::string_view flag, std::string_view text) {
  const auto bytes = parse_bytes(text);
  if (!bytes) {
    throw bad_parameter_error(std::string(flag) + " " + quote(text) +
                              " is not a size (e.g. 32GiB, 16GB, 123456789)");
  }
  if (*bytes > static_cast<double>(detail::max_count)) {
    throw bad_parameter_error(std::string(flag) + " " + quote(text) +
                              " is more than 4 EiB (2^62 bytes)");
  }
  if (*bytes != std::floor(*bytes)) {
    throw bad_parameter_error(std::string(flag) + " " + quote(text) +
                              " is not a whole number of bytes");
  }
  return static_cast<std::int64_t>(*bytes);
}

std::string human_bytes(double bytes) {
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  } else if (bytes >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  }
  return buf;
}

} // namespace shardpoint::io
