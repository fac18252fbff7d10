// shardpoint/runtime/trace.hpp -- a run drawn as an ASCII timeline or as
// Chrome trace-event JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_RUNTIME_TRACE_HPP
#define SHARDPOINT_RUNTIME_TRACE_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/error.hpp>

#include "metrics.hpp"
#include "schedules.hpp"

namespace shardpoint::runtime {

namespace detail::trace {

// Rows of `width` columns, one a device (its label padded to the widest, so
// the rows line up past device 9). A column where nothing runs is '.'; one
// where operations run shows one of their marks: of those, the mark whose
// time run so far on the row most exceeds the columns it has been shown
// (each column counted as its width of time). A short operation alone in a
// column shows; where many share columns, each mark shows about as often as
// its share of the time (drawing each over the last showed whichever came
// last: a trial read four B to an F that 1F1B runs one to one). Then a line
// counting the operations whose mark no column of theirs shows, when some.
inline void check_width(int width) {
  if (width < 1) {
    throw bad_parameter_error(
        shardpoint::detail::cat("a timeline needs at least one column, not ", width));
  }
}

template <class Ops, class Row, class Mark>
std::string ascii_rows(const Ops& ops, double makespan, int width, const std::vector<int>& devices,
                       Row row_of, Mark mark_of) {
  const double column = makespan / width;
  const auto w = static_cast<std::size_t>(width);
  // Per device, per column: (mark, time in the column) of what ran there.
  std::map<int, std::vector<std::vector<std::pair<char, double>>>> cells;
  for (const int d : devices) {
    cells[d].resize(w);
  }
  const auto span = [&](const auto& op) {
    const auto from = std::clamp(static_cast<int>(op.start / column), 0, width - 1);
    const auto to = std::clamp(static_cast<int>(std::ceil(op.end / column)), from + 1, width);
    return std::pair{static_cast<std::size_t>(from), static_cast<std::size_t>(to)};
  };
  for (const auto& op : ops) {
    auto& row = cells[row_of(op)];
    row.resize(w);
    const auto [from, to] = span(op);
    for (auto c = from; c < to; ++c) {
      const double lo = std::max(op.start, static_cast<double>(c) * column);
      const double hi = std::min(op.end, static_cast<double>(c + 1) * column);
      auto& cell = row[c];
      const char mark = mark_of(op);
      auto it =
          std::find_if(cell.begin(), cell.end(), [&](const auto& m) { return m.first == mark; });
      if (it == cell.end()) {
        cell.emplace_back(mark, 0.0);
        it = cell.end() - 1;
      }
      it->second += std::max(0.0, hi - lo);
    }
  }
  std::map<int, std::string> rows;
  std::size_t label = 1;
  for (const auto& [device, row] : cells) {
    auto& text = rows[device];
    text.assign(w, '.');
    std::map<char, double> owed; // time run, less the columns shown, by mark
    for (std::size_t c = 0; c < w; ++c) {
      char best = 0;
      for (const auto& [mark, time] : row[c]) {
        owed[mark] += time;
      }
      for (const auto& [mark, time] : row[c]) {
        if (best == 0 || owed[mark] > owed[best]) {
          best = mark;
        }
      }
      if (best != 0) {
        text[c] = best;
        owed[best] -= column;
      }
    }
    label = std::max(label, std::to_string(device).size());
  }
  std::size_t hidden = 0;
  for (const auto& op : ops) {
    const auto& text = rows[row_of(op)];
    const auto [from, to] = span(op);
    hidden += std::find(text.begin() + static_cast<std::ptrdiff_t>(from),
                        text.begin() + static_cast<std::ptrdiff_t>(to),
                        mark_of(op)) == text.begin() + static_cast<std::ptrdiff_t>(to);
  }
  std::ostringstream os;
  for (const auto& [device, text] : rows) {
    const auto id = std::to_string(device);
    os << "device " << id << std::string(label - id.size(), ' ') << " |" << text << "|\n";
  }
  if (hidden > 0) {
    os << "(" << hidden << (hidden == 1 ? " operation is" : " operations are")
       << " too short to show at " << width << " columns, a column "
       << shardpoint::detail::plain_number(column)
       << " units: where several run in a column, each mark shows about as often as its share "
          "of the time)\n";
  }
  return os.str();
}

// A stage's mark: 0-9, then a-z (10-35), then A-Z (36-61), then again.
inline char stage_mark(int stage) {
  constexpr std::string_view marks =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  return marks[static_cast<std::size_t>(stage) % marks.size()];
}

} // namespace detail::trace

/// A row per device over `width` columns: the stage's mark (0-9, then a-z
/// for 10-35, A-Z for 36-61, a line says so) where the device computes --
/// where several share columns, each about as often as its share of their
/// time --, '.' where it idles; then how many operations no column shows,
/// when some. Empty when items were not kept. Throws bad_parameter_error
/// for a width below 1.
inline std::string timeline(const run_metrics& m, int width = 72) {
  detail::trace::check_width(width);
  if (m.items.empty() || m.makespan <= 0) {
    return {};
  }
  std::vector<int> devices;
  int last_stage = 0;
  for (const auto& d : m.devices) {
    devices.push_back(d.device);
  }
  for (const auto& item : m.items) {
    last_stage = std::max(last_stage, item.stage);
  }
  auto out = detail::trace::ascii_rows(
      m.items, m.makespan, width, devices, [](const auto& item) { return item.device; },
      [](const auto& item) { return detail::trace::stage_mark(item.stage); });
  if (last_stage >= 10) {
    out += last_stage < 62 ? "(stages from 10 are letters: a = 10 ... z = 35, A = 36 ... Z = 61)\n"
                           : "(stages from 10 are letters: a = 10 ... z = 35, A = 36 ... Z = 61, "
                             "then 0 again: a mark is the stage mod 62)\n";
  }
  return out;
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
/// device, 'F', 'B' or 'W' where it computes, '.' where it idles. Throws
/// bad_parameter_error for a width below 1.
inline std::string timeline(const schedule_result& r, int devices, int width = 72) {
  detail::trace::check_width(width);
  if (r.ops.empty() || r.makespan <= 0) {
    return {};
  }
  std::vector<int> ids(static_cast<std::size_t>(std::max(devices, 0)));
  std::iota(ids.begin(), ids.end(), 0);
  return detail::trace::ascii_rows(
      r.ops, r.makespan, width, ids, [](const auto& op) { return op.device; },
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
