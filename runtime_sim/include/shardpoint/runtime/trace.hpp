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
#include <utility>
#include <vector>

#include <shardpoint/detail/text.hpp>

#include "metrics.hpp"
#include "schedules.hpp"

namespace shardpoint::runtime {

namespace detail::trace {

// Rows of `width` columns a device, each operation (device, start, end, its
// mark) over the columns it spans and at least one, later ones over earlier
// ones; then a line counting the operations left without a column, which
// were drawn over (a trial's timeline hid operations far shorter than the
// step without a word).
template <class Ops, class Row, class Mark>
std::string ascii_rows(const Ops& ops, double makespan, int width, std::map<int, std::string> rows,
                       Row row_of, Mark mark_of) {
  std::map<int, std::vector<std::size_t>> owner; // the operation drawn in each column
  for (const auto& [device, text] : rows) {
    owner[device].assign(text.size(), ops.size());
  }
  std::size_t i = 0;
  for (const auto& op : ops) {
    const int device = row_of(op);
    auto& text = rows[device];
    auto& own = owner[device];
    if (text.empty()) {
      text.assign(static_cast<std::size_t>(width), '.');
      own.assign(text.size(), ops.size());
    }
    const auto from = static_cast<int>(op.start / makespan * width);
    const auto to = std::max(from + 1, static_cast<int>(op.end / makespan * width));
    for (int c = std::max(0, from); c < std::min(width, to); ++c) {
      text[static_cast<std::size_t>(c)] = mark_of(op);
      own[static_cast<std::size_t>(c)] = i;
    }
    ++i;
  }
  std::vector<bool> shown(ops.size(), false);
  for (const auto& [device, own] : owner) {
    for (const auto o : own) {
      if (o < ops.size()) {
        shown[o] = true;
      }
    }
  }
  const auto hidden = static_cast<std::size_t>(std::count(shown.begin(), shown.end(), false));
  std::ostringstream os;
  for (const auto& [device, text] : rows) {
    os << "device " << device << " |" << text << "|\n";
  }
  if (hidden > 0) {
    os << "(" << hidden << (hidden == 1 ? " operation is" : " operations are")
       << " too short to show at " << width << " columns, a column "
       << shardpoint::detail::plain_number(makespan / width) << " units: drawn over by the next)\n";
  }
  return os.str();
}

} // namespace detail::trace

/// A row per device over `width` columns: the stage number (mod 10) where
/// the device computes, '.' where it idles; then how many operations are too
/// short to show, when some are. Empty when items were not kept.
inline std::string timeline(const run_metrics& m, int width = 72) {
  if (m.items.empty() || m.makespan <= 0) {
    return {};
  }
  std::map<int, std::string> rows;
  for (const auto& d : m.devices) {
    rows[d.device] = std::string(static_cast<std::size_t>(width), '.');
  }
  return detail::trace::ascii_rows(
      m.items, m.makespan, width, std::move(rows), [](const auto& item) { return item.device; },
      [](const auto& item) { return static_cast<char>('0' + item.stage % 10); });
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
  std::map<int, std::string> rows;
  for (int d = 0; d < devices; ++d) {
    rows[d] = std::string(static_cast<std::size_t>(width), '.');
  }
  return detail::trace::ascii_rows(
      r.ops, r.makespan, width, std::move(rows), [](const auto& op) { return op.device; },
      [](const auto& op) { return op.kind; });
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
