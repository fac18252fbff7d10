// Byte sizes as people write and read them.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

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

namespace {

// A size split at its unit: the number's text and the unit's factor; nothing
// when the text is not a decimal number (no sign, no hexadecimal) followed by
// one of the units. Decimal units are powers of 1000, binary ones of 1024,
// up to E/EiB; "B" optional, case ignored.
struct sized_text {
  std::string_view number;
  std::uint64_t factor;
};

// The unit `text` ends with, as written (after the number and blanks).
std::string_view unit_of(std::string_view text) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.back())) {
    text.remove_suffix(1);
  }
  if (text.ends_with("/s")) { // a rate's
    text.remove_suffix(2);
  }
  std::size_t at = text.size();
  while (at > 0 && std::isalpha(static_cast<unsigned char>(text[at - 1])) != 0) {
    --at;
  }
  return text.substr(at);
}

std::optional<sized_text> split_unit(std::string_view text) {
  if (written_in_bits(text)) {
    return std::nullopt;
  }
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && blank(text.back())) {
    text.remove_suffix(1);
  }
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.')) {
    return std::nullopt;
  }
  // The decimal number it starts with (from_chars reads no hexadecimal),
  // then the unit.
  double value = 0;
  const auto stop = std::from_chars(text.data(), text.data() + text.size(), value).ptr;
  const auto number = text.substr(0, static_cast<std::size_t>(stop - text.data()));
  std::string unit(text.substr(number.size()));
  while (!unit.empty() && blank(unit.front())) {
    unit.erase(0, 1);
  }
  for (auto& c : unit) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (unit.ends_with('b')) {
    unit.pop_back();
  }
  constexpr std::string_view prefixes = "kmgtpe"; // 1000^1 ... 1000^6
  if (unit.empty()) {
    return sized_text{number, 1};
  }
  const auto power = prefixes.find(unit.front());
  const bool binary = unit.size() == 2 && unit[1] == 'i';
  if (number.empty() || power == std::string_view::npos || !(unit.size() == 1 || binary)) {
    return std::nullopt;
  }
  std::uint64_t factor = 1;
  for (std::size_t i = 0; i <= power; ++i) {
    factor *= binary ? 1024 : 1000; // at most 1024^6 = 2^60
  }
  return sized_text{number, factor};
}

// Its bytes, as a double: nothing when the number is empty or not finite.
std::optional<double> bytes_of(const std::optional<sized_text>& sized) {
  double value = 0;
  if (!sized || sized->number.empty() ||
      std::from_chars(sized->number.data(), sized->number.data() + sized->number.size(), value)
              .ec != std::errc() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value * static_cast<double>(sized->factor);
}

} // namespace

bool written_in_bits(std::string_view text) {
  const auto unit = unit_of(text);
  return unit.size() >= 2 && unit.back() == 'b' &&
         std::string_view("KMGTPE").find(unit.front()) != std::string_view::npos;
}

std::string bits_message(std::string_view text) {
  return quote(text) + ": '" + std::string(unit_of(text)) +
         "' is bits (a lowercase b), 8 to a byte; give bytes, with B (" +
         std::string(unit_of(text).substr(0, unit_of(text).size() - 1)) + "B)";
}

std::optional<double> parse_bytes(std::string_view text) {
  return bytes_of(split_unit(text));
}

std::int64_t parse_size(std::string_view flag, std::string_view text) {
  const auto fail = [&](std::string_view why) {
    return bad_parameter_error(std::string(flag) + " " + quote(text) + std::string(why));
  };
  if (written_in_bits(text)) {
    throw bad_parameter_error(std::string(flag) + " " + bits_message(text));
  }
  const auto sized = split_unit(text);
  const auto not_size = " is not a size (e.g. 32GiB, 16GB, 123456789)";
  if (!sized || sized->number.empty()) {
    throw fail(not_size);
  }
  const auto too_large = " is more than 4 EiB (2^62 bytes)";
  const auto& number = sized->number;
  if (number.find_first_not_of("0123456789") == std::string_view::npos) {
    // Digits only: read as an integer, exactly (a double keeps 53 bits).
    std::uint64_t whole = 0;
    std::uint64_t bytes = 0;
    if (std::from_chars(number.data(), number.data() + number.size(), whole).ec != std::errc() ||
        __builtin_mul_overflow(whole, sized->factor, &bytes) ||
        bytes > static_cast<std::uint64_t>(detail::max_count)) {
      throw fail(too_large);
    }
    return static_cast<std::int64_t>(bytes);
  }
  const auto bytes = bytes_of(sized);
  if (!bytes) {
    throw fail(decimal_overflows(number) ? too_large : not_size);
  }
  if (*bytes > static_cast<double>(detail::max_count)) {
    throw fail(too_large);
  }
  if (*bytes != std::floor(*bytes)) {
    throw fail(" is not a whole number of bytes");
  }
  return static_cast<std::int64_t>(*bytes);
}

std::int64_t parse_capacity(std::string_view flag, std::string_view text) {
  const auto bytes = parse_size(flag, text);
  if (bytes == 0) {
    throw bad_parameter_error(std::string(flag) + ": a device's memory must be more than 0 bytes");
  }
  return bytes;
}

std::string human_bytes(double bytes) {
  // Whole bytes below 1 KiB, one decimal for KiB and MiB, two from GiB up (to
  // EiB, past 2^62). The unit is chosen after rounding, so a figure just
  // below a unit's size reads as that unit: 1048575 B is "1.0 MiB", never
  // "1024.0 KiB".
  struct unit {
    const char* name;
    int decimals;
  };
  constexpr std::array<unit, 7> units{
      {{"B", 0}, {"KiB", 1}, {"MiB", 1}, {"GiB", 2}, {"TiB", 2}, {"PiB", 2}, {"EiB", 2}}};
  const auto rounded = [](double value, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
  };
  double scaled = bytes;
  std::size_t u = 0;
  while (u + 1 < units.size() && rounded(scaled, units[u].decimals) >= 1024) {
    scaled /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", units[u].decimals, scaled, units[u].name);
  return buf;
}

// The unit is chosen after rounding, as human_bytes' is.
std::string human_seconds(double s) {
  if (s >= 9999.5) { // four digits would print an exponent
    char whole[400]; // 309 digits at most
    std::snprintf(whole, sizeof whole, "%.0f s", s);
    return whole;
  }
  char text[48];
  constexpr std::array<std::pair<double, const char*>, 4> units{
      {{1, "s"}, {1e3, "ms"}, {1e6, "us"}, {1e9, "ns"}}};
  std::size_t u = 0;
  while (s > 0 && u + 1 < units.size() && s * units[u].first < 1) {
    ++u;
  }
  std::snprintf(text, sizeof text, "%.4g", s * units[u].first);
  if (u > 0 && std::strtod(text, nullptr) >= 1000) {
    --u;
    std::snprintf(text, sizeof text, "%.4g", s * units[u].first);
  }
  if (std::strchr(text, 'e') != nullptr) { // below 10^-4 ns: four digits, no exponent
    return human_number(s * units[u].first) + " " + units[u].second;
  }
  return std::string(text) + " " + units[u].second;
}

std::string human_number(double v) {
  if (!std::isfinite(v)) {
    return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  }
  int decimals = 0;
  if (std::fabs(v) < 1e4 && v != std::floor(v)) {
    decimals = std::min(330, 3 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  }
  std::string text(400, '\0'); // 309 digits before the point, or "-0." and 330 after, at most
  text.resize(static_cast<std::size_t>(
      std::snprintf(text.data(), text.size(), "%.*f", std::max(decimals, 0), v)));
  if (decimals > 0) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') {
      text.pop_back();
    }
  }
  return text;
}

std::string human_flops(double f) {
  constexpr std::array<const char*, 7> units{"FLOP/s",  "kFLOP/s", "MFLOP/s", "GFLOP/s",
                                             "TFLOP/s", "PFLOP/s", "EFLOP/s"};
  std::size_t u = 0;
  // The unit is chosen after rounding: 999.99995 GFLOP/s is "1 TFLOP/s".
  while (u + 1 < units.size() && std::fabs(f) >= 999.95) {
    f /= 1000;
    ++u;
  }
  return human_number(f) + " " + units[u];
}

} // namespace shardpoint::io
