// shardpoint/io/report.hpp -- the report printed after sharding, for any
// graph format: groups with their parameter bytes, tensors crossing
// boundaries, validation findings; as a table or JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_REPORT_HPP
#define SHARDPOINT_IO_REPORT_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <shardpoint/pipeline_rules.hpp>

namespace shardpoint::io {

/// A tensor written in one stage and read in another (or, when no vertex has a
/// stage, written on one device and read on another).
struct crossing_tensor {
  std::string name;
  int from = 0;
  int to = 0;
  std::optional<std::int64_t> bytes; ///< when the shape is known
  /// Symbolic dimensions (e.g. "N") the size is per, counted as 1 in `bytes`.
  std::string per;
};

struct group_report {
  int device = -1; ///< -1: unset
  int stage = -1;
  std::size_t nodes = 0;
  std::int64_t parameter_bytes = 0;
};

struct sharding_report {
  std::vector<group_report> groups; ///< per (device, stage), sorted
  std::string boundary = "stage";   ///< what crossings cross: "stage" or "device"
  std::vector<crossing_tensor> crossings;
  std::vector<diagnostic> diagnostics;
};

std::string to_table(const sharding_report& r);
std::string to_json(const sharding_report& r);

/// Validation findings as the command line prints them on stderr:
/// "shardpoint: error [rule] message", one per line.
std::string to_lines(const std::vector<diagnostic>& diagnostics);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_REPORT_HPP
