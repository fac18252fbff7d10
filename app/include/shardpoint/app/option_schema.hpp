// The commands' options, declared once -- one record an option in the table
// app/options.def: each option's flag (and PopRT's underscore alias), its
// Python keyword, the value it takes, its choices or range, and its help;
// here, `opt::<name>` for each and `opt::all` for the table. A command lists the options it takes,
// and the field each fills, in one function of its request (`options(b, request)`, app/commands.hpp
// and app/plans.hpp); whoever reads options renders that list:
//   - the command line adds each to CLI11 (cli/options.cpp: `cli_options`),
//     which checks choices and ranges as it parses and prints --help;
//   - the Python bindings read each from a keyword argument
//     (python/src/module.cpp), checked by `check_option` here, so a bad value
//     is the same BadParameterError whichever spelling it came in;
//   - docs/options.md is made from the command line's list (tests/docs:
//     ctest `docs_options` fails when the two differ).
// A binder `b` is called as `b(spec, field)` for each option, `b.group(name,
// description)` before the options of a group (an empty name ends it), and
// `b.exclusive(a, c)` for two options that exclude each other.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_OPTION_SCHEMA_HPP
#define SHARDPOINT_APP_OPTION_SCHEMA_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardpoint::app {

/// One option of the commands.
struct option_spec {
  std::string_view flag;    ///< "--schedule"; without dashes, a positional argument
  std::string_view alias;   ///< PopRT's underscore spelling, when it has one
  std::string_view keyword; ///< the Python keyword; empty when Python has none
  std::string_view value;   ///< what it takes ("N", "SIZE", "FILE", ...); empty: a flag
  std::string_view help = {};
  std::string_view choices = {}; ///< the values it takes, comma-separated; empty: any
  double min = 0;                ///< a number's range, when min < max
  double max = 0;
  bool required = false;

  /// The same option with one field changed.
  template <class T>
  [[nodiscard]] constexpr option_spec with(T option_spec::*field, T value) const {
    auto o = *this;
    o.*field = value;
    return o;
  }
  /// The same option with a command's own help, choices, range, Python
  /// keyword, or required.
  [[nodiscard]] constexpr option_spec saying(std::string_view h) const {
    return with(&option_spec::help, h);
  }
  [[nodiscard]] constexpr option_spec taking(std::string_view c) const {
    return with(&option_spec::choices, c);
  }
  [[nodiscard]] constexpr option_spec within(double lo, double hi) const {
    return with(&option_spec::min, lo).with(&option_spec::max, hi);
  }
  [[nodiscard]] constexpr option_spec keyed(std::string_view k) const {
    return with(&option_spec::keyword, k);
  }
  [[nodiscard]] constexpr option_spec needed() const { return with(&option_spec::required, true); }
  [[nodiscard]] constexpr bool ranged() const { return min < max; }
  [[nodiscard]] constexpr bool is_flag() const { return value.empty(); }
  [[nodiscard]] constexpr bool positional() const { return !flag.starts_with("-"); }
};

/// The values `o` takes (its `choices`, split); empty when it takes any.
std::vector<std::string> choices_of(const option_spec& o);

/// Why `value` is not one of `o`'s choices ("'zb-h2' is not one of gpipe,
/// 1f1b"), or empty when it is (or `o` takes any value): the words of the
/// command line and of check_option.
std::string choice_error(const option_spec& o, const std::string& value);

/// Why an empty value of `o` is a mistake ("an empty size; give one, e.g.
/// 16GiB"), never "not given"; empty for the one kind an empty value means
/// something to (a REGEX: every name).
std::string empty_value_error(const option_spec& o);

/// `value` against `o`'s choices and range; bad_parameter_error naming it as
/// `name` (the flag, or the Python keyword) otherwise -- for every caller
/// that does not parse a command line. Text values are checked against the
/// choices only (numbers given as text are parsed, and checked, where used).
void check_option(const option_spec& o, std::string_view name, const std::string& value);
void check_option(const option_spec& o, std::string_view name, double value);

/// "1 to 1073741824": a ranged option's bounds, as its messages say them.
std::string range_text(const option_spec& o);

/// The domains of counts: devices and stages (ids run to max_group_id,
/// 65535), micro-batches per step. A value outside is a bad parameter.
inline constexpr int max_devices = 65536;
inline constexpr int max_batches = 1 << 30;

/// Every option, by its name in the schema (the table: app/options.def).
namespace opt {

/// A transformer's counts (layers, hidden, sequence, vocabulary): at most
/// 2^24, so that the byte counts they make stay within 64 bits.
inline constexpr double max_model_count = 16777216;

/// The devices of a cluster: at most 2^20 (a cluster file's are checked
/// against the same bound where it is read).
inline constexpr double max_cluster_devices = 1048576;

#define SHARDPOINT_OPTION(name, ...) inline constexpr option_spec name{__VA_ARGS__};
#include <shardpoint/app/options.def>
#undef SHARDPOINT_OPTION

/// The emulator's costs: no weight bytes (simulate).
inline constexpr option_spec run_cost =
    cost.taking("unit,flops").saying("unit: 1 per node; flops: estimated MFLOPs per node");

/// Every option of the table, in its order: for whoever checks the schema
/// as a whole (each option taken by some command, ...).
inline constexpr option_spec all[] = {
#define SHARDPOINT_OPTION(name, ...) name,
#include <shardpoint/app/options.def>
#undef SHARDPOINT_OPTION
};

} // namespace opt

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_OPTION_SCHEMA_HPP
