// shardpoint/io/detail/table.hpp -- a table of text cells, its columns as
// wide as their widest cell: the reports' tables (plan, suggest, simulate)
// and weights strategy's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Each column has a least width, a side it is aligned to, and what comes
// before it on a line (the first column starts the line). Rows are
// added as cells, the heading first; text() pads every cell to its
// column's width -- the least, or the widest cell's, so that a figure of
// any length keeps the rows in line (trials pushed rows out with 13-digit
// times and 10^13 loads) -- and cuts the spaces a line would end in. A
// cell's width is its characters, not its bytes: UTF-8 text (escaped
// names) lines up (a trial's weight 'w 0 ü' shifted its row by one).
#ifndef SHARDPOINT_IO_DETAIL_TABLE_HPP
#define SHARDPOINT_IO_DETAIL_TABLE_HPP

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace shardpoint::io::detail {

/// A figure of a table rounded to a whole number, every digit of it, never
/// an exponent ("%.0f": 309 digits at most).
inline std::string whole_number(double v) {
  std::string text(400, '\0');
  text.resize(static_cast<std::size_t>(std::snprintf(text.data(), text.size(), "%.0f", v)));
  return text;
}

class text_table {
public:
  enum class side { left, right };
  struct column {
    std::size_t width = 0; ///< the least width
    side align = side::right;
    std::string before = " "; ///< what comes before it (not the first's: it starts the line)
  };

  explicit text_table(std::vector<column> columns) : columns_(std::move(columns)) {}

  /// A row of cells, one a column (missing ones empty).
  void row(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
  }

  /// The characters of UTF-8 `text`: its bytes but continuation bytes.
  [[nodiscard]] static std::size_t width_of(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
  }

  /// Every row, a line each, in order.
  [[nodiscard]] std::string text() const {
    std::vector<std::size_t> widths;
    for (const auto& c : columns_) {
      widths.push_back(c.width);
    }
    for (const auto& r : rows_) {
      for (std::size_t c = 0; c < r.size(); ++c) {
        widths[c] = std::max(widths[c], width_of(r[c]));
      }
    }
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t c = 0; c < r.size(); ++c) {
        const std::string pad(widths[c] - width_of(r[c]), ' ');
        if (c > 0) {
          line += columns_[c].before;
        }
        line += columns_[c].align == side::left ? r[c] + pad : pad + r[c];
      }
      line.erase(line.find_last_not_of(' ') + 1); // (npos + 1: all of a blank line)
      out += line;
      out += '\n';
    }
    return out;
  }

private:
  std::vector<column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

} // namespace shardpoint::io::detail

#endif // SHARDPOINT_IO_DETAIL_TABLE_HPP
