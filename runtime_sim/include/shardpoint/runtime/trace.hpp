// shardpoint/runtime/trace.hpp -- a run drawn as an ASCII timeline or as
// Chrome trace-event JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_RUNTIME_TRACE_HPP
#define SHARDPOINT_RUNTIME_TRACE_HPP

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "schedules.hpp"

namespace shardpoint::runtime {

/// A row per device over `width` columns: the stage number (mod 10) where
/// the device computes, '.' where it idles. Empty when items were not kept.
inline std::string timeline(const run_metrics& m, int width = 72) {
  if (m.items.empty() || m.makespan <= 0) {
    return {};
  }
  std::map<int, std::string> rows;
  for (const auto& d : m.devices) {
    rows[d.device] = std::string(static_cast<std::size_t>(width), '.');
  }
  for (const auto& item : m.items) {
    auto& row = rows[item.device];
    const auto from = static_cast<int>(item.start / m.makespan * width);
    const auto to = std::max(from + 1, static_cast<int>(item.end / m.makespan * width));
    for (int c = std::max(0, from); c < std::min(width, to); ++c) {
      row[static_cast<std::size_t>(c)] = static_cast<char>('0' + item.stage % 10);
    }
  }
  std::ostringstream os;
  for (const auto& [device, row] : rows) {
    os << "device " << device << " |" << row << "|\n";
  }
  return os.str();
}

/// Chrome trace-event JSON (chrome://tracing, Perfetto): one complete event
/// per work item, a track per device; 1 cost unit = `us_per_unit` us.
inline std::string chrome_trace(const run_metrics& m, double us_per_unit) {
  std::ostringstream os;
  os << "{\"traceEvents\":[";
  bool first = true;
  for (const auto& d : m.devices) {
    os << (first ? "" : ",")
       << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << d.device
       << ",\"args\":{\"name\":\"device " << d.device << "\"}}";
    first = false;
  }
  for (const auto& item : m.items) {
    os << (first ? "" : ",") << "{\"name\":\"stage " << item.stage << "\",\"ph\":\"X\",\"pid\":0,"
       << "\"tid\":" << item.device << ",\"ts\":" << item.start * us_per_unit
       << ",\"dur\":" << (item.end - item.start) * us_per_unit
       << ",\"args\":{\"micro_batch\":" << item.micro_batch << "}}";
    first = false;
  }
  os << "],\"displayTimeUnit\":\"ms\"}\n";
  return os.str();
}

/// A training schedule's run as timeline() draws a forward one: a row per
/// device, 'F', 'B' or 'W' where it computes, '.' where it idles.
inline std::string timeline(const schedule_result& r, int devices, int width = 72) {
  if (r.ops.empty() || r.makespan <= 0) {
    return {};
  }
  std::vector<std::string> rows(static_cast<std::size_t>(devices),
                                std::string(static_cast<std::size_t>(width), '.'));
  for (const auto& op : r.ops) {
    auto& row = rows[static_cast<std::size_t>(op.device)];
    const auto from = static_cast<int>(op.start / r.makespan * width);
    const auto to = std::max(from + 1, static_cast<int>(op.end / r.makespan * width));
    for (int c = std::max(0, from); c < std::min(width, to); ++c) {
      row[static_cast<std::size_t>(c)] = op.kind;
    }
  }
  std::ostringstream os;
  for (std::size_t d = 0; d < rows.size(); ++d) {
    os << "device " << d << " |" << rows[d] << "|\n";
  }
  return os.str();
}

/// A training schedule's run as Chrome trace-event JSON: a track per
/// device, a complete event per operation named F3, B3 or W3 (its kind and
/// stage) in category "forward", "backward" or "weight-gradient", with its
/// stage and micro-batch as arguments; 1 unit = `us_per_unit` us.
inline std::string chrome_trace(const schedule_result& r, int devices, double us_per_unit) {
  std::ostringstream os;
  os << "{\"traceEvents\":[";
  bool first = true;
  for (int d = 0; d < devices; ++d) {
    os << (first ? "" : ",") << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << d
       << ",\"args\":{\"name\":\"device " << d << "\"}}";
    first = false;
  }
  for (const auto& op : r.ops) {
    const char* category = op.kind == 'F'   ? "forward"
                           : op.kind == 'B' ? "backward"
                                            : "weight-gradient";
    os << (first ? "" : ",") << "{\"name\":\"" << op.kind << op.stage << "\",\"cat\":\"" << category
       << "\",\"ph\":\"X\",\"pid\":0,\"tid\":" << op.device << ",\"ts\":" << op.start * us_per_unit
       << ",\"dur\":" << (op.end - op.start) * us_per_unit << ",\"args\":{\"stage\":" << op.stage
       << ",\"micro_batch\":" << op.micro_batch << "}}";
    first = false;
  }
  os << "],\"displayTimeUnit\":\"ms\"}\n";
  return os.str();
}

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_TRACE_HPP
