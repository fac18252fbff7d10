// A split drawn as SVG and HTML (io/picture.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <string_view>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/picture.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

std::string xml_escaped(std::string_view text) {
  const std::string shown = printable(text);
  std::string out;
  out.reserve(shown.size());
  for (const char c : shown) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

namespace {

// A number exactly (the shortest text that reads back as the same double),
// for data-* attributes.
std::string exact(double v) {
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return ec == std::errc() ? std::string(buf.data(), end) : std::string("0");
}

// Whether figures in `unit` are seconds: "s", or "s" and words ("s
// forward"). They are then shown in s, ms, us or ns (human_seconds): a
// trial's page read "bottleneck 8.735e-06 s".
bool in_seconds(std::string_view unit) {
  return unit == "s" || unit.substr(0, 2) == "s ";
}

// A figure in `unit`, where the unit is said elsewhere (a heading, a title).
std::string figure(double v, std::string_view unit) {
  // (human_number: never an exponent -- a trial's timeline read "0 to 1e-06".)
  return in_seconds(unit) ? human_seconds(v) : human_number(v);
}

// A figure and its unit: "120 MFLOP", "8.735 us forward".
std::string amount(double v, std::string_view unit) {
  return in_seconds(unit) ? human_seconds(v) + std::string(unit.substr(1))
                          : human_number(v) + " " + std::string(unit);
}

// A heading's unit, for figures shown by figure(): " (MFLOP)"; seconds
// carry their own unit, so only their words: " (forward)", or nothing.
std::string heading_unit(std::string_view unit) {
  if (in_seconds(unit)) {
    return unit.size() > 2 ? " (" + std::string(unit.substr(2)) + ")" : "";
  }
  return " (" + std::string(unit) + ")";
}

std::string bytes(double b) {
  return human_bytes(b);
}

using shardpoint::detail::counted;

// A colour per stage, cycling (colour-blind-safe first eight).
const char* colour(int stage) {
  static constexpr std::array<const char*, 12> palette{"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                                       "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                                       "#9c755f", "#bab0ac", "#86bcb6", "#d37295"};
  return palette[static_cast<std::size_t>(std::max(stage, 0)) % palette.size()];
}

// An SVG document or fragment under construction.
class svg {
public:
  svg(double width, double height, std::string_view id) : width_(width), height_(height) {
    os_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" << id << "\" width=\"" << exact(width)
        << "\" height=\"" << exact(height) << "\" viewBox=\"0 0 " << exact(width) << ' '
        << exact(height) << "\" font-family=\"sans-serif\" font-size=\"12\">";
  }
  std::ostringstream& out() { return os_; }
  void text(double x, double y, std::string_view t, std::string_view extra = {}) {
    os_ << "<text x=\"" << exact(x) << "\" y=\"" << exact(y) << '"' << extra << '>'
        << xml_escaped(t) << "</text>";
  }
  std::string done() {
    os_ << "</svg>";
    return os_.str();
  }
  [[nodiscard]] double width() const { return width_; }
  [[nodiscard]] double height() const { return height_; }

private:
  std::ostringstream os_;
  double width_, height_;
};

std::string title_of(std::string_view t) {
  return "<title>" + xml_escaped(t) + "</title>";
}

// ---- the graph condensed to stages

constexpr double block_w = 190, block_h = 126, gap_x = 60, gap_y = 70, per_row = 5;

std::pair<double, double> block_at(std::size_t i) {
  const auto row = static_cast<double>(i / static_cast<std::size_t>(per_row));
  const auto col = static_cast<double>(i % static_cast<std::size_t>(per_row));
  return {20 + col * (block_w + gap_x), 30 + row * (block_h + gap_y)};
}

// The most blocks and timeline operations drawn: a picture stays a few
// megabytes and opens in a browser, whatever the model and the run.
constexpr std::size_t most_blocks = 400;
constexpr std::size_t most_ops = 20000;

std::string stages_svg(const picture& p) {
  const std::size_t n = std::min(p.blocks.size(), most_blocks);
  const auto rows = static_cast<double>((n + 4) / 5);
  const double cols = std::min<double>(static_cast<double>(n), per_row);
  svg s(std::max(400.0, 40 + cols * (block_w + gap_x)),
        40 + std::max(rows, 1.0) * (block_h + gap_y), "stages-svg");
  auto& os = s.out();
  os << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
        "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/>"
        "</marker></defs>";
  s.text(20, 18,
         "The graph by stage: " + counted(p.blocks.size(), "run") + " of consecutive nodes" +
             (n < p.blocks.size() ? " (the first " + std::to_string(n) + " drawn)" : "") + ", " +
             counted(p.crossings.size(), "crossing"),
         " font-weight=\"bold\"");
  for (const auto& c : p.crossings) {
    if (c.from >= n || c.to >= n) {
      continue;
    }
    const auto [x1, y1] = block_at(c.from);
    const auto [x2, y2] = block_at(c.to);
    const bool same_row = y1 == y2;
    // Next in a row: a straight arrow; in one row: an arc below; else from
    // the bottom of one to the top of the other.
    const double ax = same_row && c.to == c.from + 1 ? x1 + block_w : x1 + block_w / 2;
    const double ay = same_row && c.to == c.from + 1 ? y1 + block_h / 2 : y1 + block_h;
    const double bx = same_row && c.to == c.from + 1 ? x2 : x2 + block_w / 2;
    const double by = same_row ? (c.to == c.from + 1 ? y2 + block_h / 2 : y2 + block_h) : y2;
    const double pull = same_row ? 50 : -40;
    const std::string path =
        same_row && c.to == c.from + 1
            ? "M" + exact(ax) + "," + exact(ay) + " L" + exact(bx) + "," + exact(by)
            : "M" + exact(ax) + "," + exact(ay) + " C" + exact(ax) + "," + exact(ay + 40) + " " +
                  exact(bx) + "," + exact(by + pull) + " " + exact(bx) + "," + exact(by);
    os << "<g class=\"crossing\" data-from=\"" << c.from << "\" data-to=\"" << c.to
       << "\" data-bytes=\"" << exact(c.bytes) << "\"><path d=\"" << path
       << "\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>";
    s.text((ax + bx) / 2 + 4, (ay + by) / 2 - 4, bytes(c.bytes), " font-size=\"11\" fill=\"#333\"");
    os << "</g>";
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& b = p.blocks[i];
    const auto [x, y] = block_at(i);
    os << "<g class=\"block\" data-stage=\"" << b.stage << "\" data-device=\"" << b.device
       << "\" data-first=\"" << b.first << "\" data-nodes=\"" << b.nodes << "\" data-cost=\""
       << exact(b.cost) << "\" data-parameter-bytes=\"" << exact(b.parameter_bytes) << "\">"
       << title_of(b.first_name + " ... " + b.last_name);
    os << "<rect x=\"" << exact(x) << "\" y=\"" << exact(y) << "\" width=\"" << exact(block_w)
       << "\" height=\"" << exact(block_h) << "\" rx=\"6\" fill=\"" << colour(b.stage)
       << "\" fill-opacity=\"0.18\" stroke=\"" << colour(b.stage) << "\" stroke-width=\"2\"/>";
    s.text(x + 8, y + 17,
           "stage " + std::to_string(b.stage) + " \u00b7 device " + std::to_string(b.device),
           " class=\"label\" font-weight=\"bold\"");
    s.text(x + 8, y + 33, counted(b.nodes, "node") + ", cost " + figure(b.cost, p.cost_unit));
    s.text(x + 8, y + 48, "weights " + bytes(b.parameter_bytes));
    double line = y + 66;
    for (std::size_t k = 0; k < b.ops.size() && k < 4; ++k, line += 14) {
      s.text(x + 12, line,
             b.ops[k].first + " \u00d7" + std::to_string(b.ops[k].second) +
                 (k == 3 && b.ops.size() > 4 ? " ..." : ""),
             " font-size=\"11\" class=\"op-type\"");
    }
    os << "</g>";
  }
  return s.done();
}

// ---- per-stage bars

struct metric {
  const char* key;
  const char* heading;
  std::vector<double> values;
  bool is_bytes;
};

// The charts of the stage bars: cost and the weights as stored, and activations and
// memory when every stage has them.
std::vector<metric> metrics_of(const picture& p) {
  std::vector<metric> metrics;
  metric cost{"cost", "cost", {}, false}, params{"parameter-bytes", "weights as stored", {}, true};
  metric act{"activation-bytes", "activations held", {}, true};
  metric mem{"memory-bytes", "memory (planned)", {}, true};
  bool has_act = !p.stages.empty(), has_mem = !p.stages.empty();
  for (const auto& st : p.stages) {
    cost.values.push_back(st.cost);
    params.values.push_back(st.parameter_bytes);
    has_act = has_act && st.activation_bytes.has_value();
    has_mem = has_mem && st.memory_bytes.has_value();
    act.values.push_back(st.activation_bytes.value_or(0));
    mem.values.push_back(st.memory_bytes.value_or(0));
  }
  metrics.push_back(std::move(cost));
  metrics.push_back(std::move(params));
  if (has_act) {
    metrics.push_back(std::move(act));
  }
  if (has_mem) {
    metrics.push_back(std::move(mem));
  }
  return metrics;
}

// One chart, a bar a stage, at x0, chart_w wide, chart_h high; the cost's
// with the lower bound and the bottleneck, the memory's with the capacity.
void draw_chart(svg& s, const picture& p, const metric& mt, double x0, double chart_w,
                double chart_h, double bar) {
  auto& os = s.out();
  const double y0 = 60;
  double top = *std::max_element(mt.values.begin(), mt.values.end());
  const bool is_cost = std::string_view(mt.key) == "cost";
  const bool is_mem = std::string_view(mt.key) == "memory-bytes";
  if (is_cost) {
    top = std::max(top, p.lower_bound);
  }
  if (is_mem && p.memory_capacity) {
    top = std::max(top, *p.memory_capacity);
  }
  top = top > 0 ? top : 1;
  os << "<g class=\"chart\" data-metric=\"" << mt.key << "\">";
  s.text(x0, y0 - 40,
         is_cost ? p.cost_heading + heading_unit(p.cost_unit) : std::string(mt.heading),
         " font-weight=\"bold\"");
  os << "<line x1=\"" << exact(x0) << "\" y1=\"" << exact(y0 + chart_h) << "\" x2=\""
     << exact(x0 + chart_w) << "\" y2=\"" << exact(y0 + chart_h) << "\" stroke=\"#999\"/>";
  for (std::size_t k = 0; k < mt.values.size(); ++k) {
    const auto& st = p.stages[k];
    const double h = chart_h * mt.values[k] / top;
    const double x = x0 + 10 + static_cast<double>(k) * bar * 1.5;
    // The heaviest stage, or every stage of the device that sets the pace.
    const bool bottleneck = is_cost && (p.pace_device ? st.device == p.pace_device->device
                                                      : st.stage == p.bottleneck_stage);
    const bool over = is_mem && p.memory_capacity && mt.values[k] > *p.memory_capacity;
    const std::string value = mt.is_bytes ? bytes(mt.values[k]) : figure(mt.values[k], p.cost_unit);
    os << "<rect class=\"bar" << (bottleneck ? " bottleneck" : "") << (over ? " over" : "")
       << "\" data-metric=\"" << mt.key << "\" data-stage=\"" << st.stage << "\" data-value=\""
       << exact(mt.values[k]) << "\" x=\"" << exact(x) << "\" y=\"" << exact(y0 + chart_h - h)
       << "\" width=\"" << exact(bar) << "\" height=\"" << exact(h) << "\" fill=\""
       << colour(st.stage) << "\" stroke=\"" << (bottleneck || over ? "#c00" : "none")
       << "\" stroke-width=\"2\">"
       << title_of("stage " + std::to_string(st.stage) + ": " + value +
                   (!bottleneck ? ""
                    : p.pace_device
                        ? " (on device " + std::to_string(st.device) + ", the bottleneck: " +
                              figure(p.pace_device->cost, p.cost_unit) + " with its other stages)"
                        : " (bottleneck)") +
                   (!over ? ""
                    // In bytes where the rounded figures are alike (a trial's
                    // "1.3 MiB" bar was over a capacity of "1.3 MiB").
                    : bytes(mt.values[k]) == bytes(*p.memory_capacity)
                        ? " (over the capacity: " + exact(mt.values[k]) + " bytes, the capacity " +
                              exact(*p.memory_capacity) + ")"
                        : " (over the capacity)"))
       << "</rect>";
    s.text(x + bar / 2, y0 + chart_h + 14, std::to_string(st.stage),
           " text-anchor=\"middle\" font-size=\"10\"");
    if (mt.values.size() <= 6) { // room for the value above each bar
      s.text(x + bar / 2, y0 + chart_h - h - (bottleneck ? 15 : 4), value,
             " text-anchor=\"middle\" font-size=\"9\" fill=\"#444\"");
    }
    if (bottleneck) {
      s.text(x + bar / 2, y0 + chart_h - h - 4,
             p.pace_device ? "device " + std::to_string(st.device) : std::string("bottleneck"),
             " text-anchor=\"middle\" font-size=\"10\" fill=\"#c00\"");
    }
  }
  const auto level = [&](double v, const char* cls, const char* label) {
    const double y = y0 + chart_h - chart_h * v / top;
    os << "<line class=\"" << cls << "\" data-value=\"" << exact(v) << "\" x1=\"" << exact(x0)
       << "\" y1=\"" << exact(y) << "\" x2=\"" << exact(x0 + chart_w) << "\" y2=\"" << exact(y)
       << "\" stroke=\"#c00\" stroke-dasharray=\"5,3\"/>";
    s.text(x0 + chart_w, y - 3,
           std::string(label) + " " + (mt.is_bytes ? bytes(v) : figure(v, p.cost_unit)),
           " text-anchor=\"end\" font-size=\"10\" fill=\"#c00\"");
  };
  if (is_cost) {
    level(p.lower_bound, "lower-bound", "lower bound");
  }
  if (is_mem && p.memory_capacity) {
    level(*p.memory_capacity, "capacity", "capacity");
  }
  s.text(x0, y0 + chart_h + 30, "stage", " font-size=\"10\" fill=\"#666\"");
  os << "</g>";
}

std::string bars_svg(const picture& p) {
  const auto metrics = metrics_of(p);
  const double bar = 22, chart_h = 150,
               chart_w = std::max(220.0, 40 + bar * 1.5 * static_cast<double>(p.stages.size()));
  svg s(20 + static_cast<double>(metrics.size()) * (chart_w + 20), chart_h + 96,
        "bars-svg"); // 60 above, 36 below
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    draw_chart(s, p, metrics[m], 20 + static_cast<double>(m) * (chart_w + 20), chart_w, chart_h,
               bar);
  }
  return s.done();
}

// ---- the timeline

// Where a time is drawn on the timeline.
struct time_axis {
  double x0, width, span;
  [[nodiscard]] double x(double t) const { return x0 + width * t / span; }
};

// The time the timeline is drawn to: the makespan, or for a long run the
// start of operation most_ops + 1 (the first most_ops are drawn).
double timeline_end(const picture& p) {
  if (p.timeline.size() <= most_ops) {
    return p.makespan;
  }
  std::vector<double> starts;
  starts.reserve(p.timeline.size());
  for (const auto& e : p.timeline) {
    starts.push_back(e.start);
  }
  std::nth_element(starts.begin(), starts.begin() + most_ops, starts.end());
  return starts[most_ops];
}

// One operation's block in its device's lane (named F3, B3, W3 when wide
// enough).
void draw_op(svg& s, const picture::event& e, const time_axis& axis, double row, double y,
             std::string_view unit) {
  const double x = axis.x(e.start), w = std::max(0.5, axis.x(std::min(e.end, axis.span)) - x);
  const char* opacity = e.kind == 'F' ? "1" : e.kind == 'B' ? "0.62" : "0.35";
  const std::string name = std::string(1, e.kind) + std::to_string(e.micro_batch);
  s.out() << "<rect class=\"op\" data-kind=\"" << e.kind << "\" data-stage=\"" << e.stage
          << "\" data-device=\"" << e.device << "\" data-micro-batch=\"" << e.micro_batch
          << "\" data-start=\"" << exact(e.start) << "\" data-end=\"" << exact(e.end) << "\" x=\""
          << exact(x) << "\" y=\"" << exact(y) << "\" width=\"" << exact(w) << "\" height=\""
          << exact(row - 4) << "\" fill=\"" << colour(e.stage) << "\" fill-opacity=\"" << opacity
          << (w >= 3 ? "\" stroke=\"#fff\" stroke-width=\"0.5\">" : "\">") // a narrow one: no edge
          << title_of(name + ", stage " + std::to_string(e.stage) + ": " + figure(e.start, unit) +
                      " to " + figure(e.end, unit))
          << "</rect>";
  if (w > 22) {
    s.text(x + w / 2, y + row / 2 + 1, name,
           " text-anchor=\"middle\" font-size=\"10\" fill=\"#fff\" pointer-events=\"none\"");
  }
}

// The activation bytes each device holds over time, as steps, below the
// lanes from `y0`, `height` high.
void draw_activation_curve(svg& s, const picture& p, const time_axis& axis, double y0,
                           double height) {
  double peak = 0;
  for (const auto& m : p.memory_curve) {
    peak = std::max(peak, m.bytes);
  }
  const double top = peak > 0 ? peak : 1; // the scale (a trial's page said "peak 1 B" of none)
  s.text(20, y0 - 8, "Activations held over time, per device (peak " + bytes(peak) + ")",
         " font-weight=\"bold\"");
  std::map<int, std::string> lines;
  std::map<int, double> last;
  for (const auto& m : p.memory_curve) {
    if (m.time > axis.span) {
      continue; // beyond what the timeline draws
    }
    auto& pts = lines[m.device];
    const double y = y0 + height - height * m.bytes / top;
    if (auto it = last.find(m.device); it != last.end()) {
      pts += exact(axis.x(m.time)) + "," + exact(it->second) + " "; // a step
    }
    pts += exact(axis.x(m.time)) + "," + exact(y) + " ";
    last[m.device] = y;
  }
  for (const auto& [d, pts] : lines) {
    s.out() << "<polyline class=\"memory-curve\" data-device=\"" << d << "\" points=\"" << pts
            << "\" fill=\"none\" stroke=\"" << colour(d) << "\" stroke-width=\"1.5\"/>";
  }
  s.out() << "<line x1=\"" << exact(axis.x0) << "\" y1=\"" << exact(y0 + height) << "\" x2=\""
          << exact(axis.x0 + axis.width) << "\" y2=\"" << exact(y0 + height)
          << "\" stroke=\"#999\"/>";
}

std::string timeline_svg(const picture& p) {
  // A lane for each device that runs something, in order: a device id of
  // 65535 makes one lane, not 65536 (a trial's page of 9.4 MB).
  std::map<int, int> lane; // device -> its row
  for (const auto& e : p.timeline) {
    lane.emplace(e.device, 0);
  }
  for (const auto& m : p.memory_curve) {
    lane.emplace(m.device, 0);
  }
  int devices = 0;
  for (auto& [d, at] : lane) {
    at = devices++;
  }
  const double row = 26, curve_h = p.memory_curve.empty() ? 0 : 140;
  const double end = timeline_end(p);
  const auto drawn = static_cast<std::size_t>(
      std::count_if(p.timeline.begin(), p.timeline.end(),
                    [&](const picture::event& e) { return end >= p.makespan || e.start < end; }));
  const time_axis axis{80, 900, end > 0 ? end : 1};
  svg s(axis.x0 + axis.width + 30, 60 + devices * row + curve_h + (curve_h > 0 ? 40 : 0),
        "timeline-svg");
  s.text(20, 18,
         "Pipeline timeline: makespan " + amount(p.makespan, p.time_unit) +
             (end < p.makespan
                  ? " (drawn to " + figure(end, p.time_unit) + ": the " + std::to_string(drawn) +
                        " of " + std::to_string(p.timeline.size()) +
                        " operations that start before)"
                  : "") +
             " (grey: idle)",
         " font-weight=\"bold\"");
  for (const auto& [d, at] : lane) {
    const double y = 30 + at * row;
    s.out() << "<rect class=\"lane\" data-device=\"" << d << "\" x=\"" << exact(axis.x0)
            << "\" y=\"" << exact(y) << "\" width=\"" << exact(axis.width) << "\" height=\""
            << exact(row - 4) << "\" fill=\"#e6e6e6\"/>";
    s.text(10, y + row / 2 + 2, "device " + std::to_string(d));
  }
  for (const auto& e : p.timeline) {
    if (!(e.start >= end && end < p.makespan)) {
      draw_op(s, e, axis, row, 30 + lane.at(e.device) * row, p.time_unit);
    }
  }
  const double axis_y = 30 + devices * row + 12;
  for (int k = 0; k <= 4; ++k) {
    const double t = axis.span * k / 4;
    s.text(axis.x(t), axis_y, figure(t, p.time_unit),
           " text-anchor=\"middle\" font-size=\"10\" fill=\"#666\"");
  }
  if (!p.memory_curve.empty()) {
    draw_activation_curve(s, p, axis, axis_y + 30, curve_h);
  }
  return s.done();
}

// ---- candidates

std::string candidates_svg(const picture& p) {
  const double w = 520, h = 220, x0 = 60, y0 = 40;
  svg s(w + 260, h + 90, "candidates-svg");
  auto& os = s.out();
  s.text(20, 18, "Bottleneck against the number of stages" + heading_unit(p.cost_unit),
         " font-weight=\"bold\"");
  double top = 0;
  int most = 1;
  for (const auto& c : p.candidates) {
    top = std::max({top, c.bottleneck, c.lower_bound});
    most = std::max(most, c.stages);
  }
  top = top > 0 ? top : 1;
  const auto x_of = [&](int k) { return x0 + w * (most > 1 ? (k - 1.0) / (most - 1.0) : 0.5); };
  const auto y_of = [&](double v) { return y0 + h - h * v / top; };
  std::string best, bound;
  for (const auto& c : p.candidates) {
    best += exact(x_of(c.stages)) + "," + exact(y_of(c.bottleneck)) + " ";
    bound += exact(x_of(c.stages)) + "," + exact(y_of(c.lower_bound)) + " ";
  }
  os << "<polyline points=\"" << bound
     << "\" fill=\"none\" stroke=\"#c00\" stroke-dasharray=\"5,3\"/>";
  os << "<polyline points=\"" << best << "\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\"/>";
  for (const auto& c : p.candidates) {
    const bool chosen = c.stages == p.chosen_stages;
    os << "<circle class=\"candidate" << (chosen ? " chosen" : "") << "\" data-stages=\""
       << c.stages << "\" data-bottleneck=\"" << exact(c.bottleneck) << "\" data-lower-bound=\""
       << exact(c.lower_bound) << "\" cx=\"" << exact(x_of(c.stages)) << "\" cy=\""
       << exact(y_of(c.bottleneck)) << "\" r=\"" << (chosen ? 6 : 4) << "\" fill=\""
       << (chosen ? "#c00" : "#4e79a7") << "\">"
       << title_of(counted(static_cast<std::size_t>(c.stages), "stage") + ": bottleneck " +
                   figure(c.bottleneck, p.cost_unit) + ", lower bound " +
                   figure(c.lower_bound, p.cost_unit))
       << "</circle>";
    s.text(x_of(c.stages), y0 + h + 16, std::to_string(c.stages),
           " text-anchor=\"middle\" font-size=\"10\"");
  }
  s.text(x0 + w / 2, y0 + h + 34, "stages (red: the one suggested; dashed: lower bound)",
         " text-anchor=\"middle\" font-size=\"10\" fill=\"#666\"");
  double y = y0 + 10;
  s.text(x0 + w + 30, y, "At " + counted(static_cast<std::size_t>(p.chosen_stages), "stage") + ":",
         " font-weight=\"bold\"");
  for (const auto& [name, value] : p.baselines) {
    y += 16;
    os << "<g class=\"baseline\" data-name=\"" << xml_escaped(name) << "\" data-bottleneck=\""
       << exact(value) << "\">";
    s.text(x0 + w + 30, y, name + ": " + figure(value, p.cost_unit), " font-size=\"11\"");
    os << "</g>";
  }
  return s.done();
}

// An SVG fragment as a document of its own.
std::string document(const std::string& svg_text) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg_text + "\n";
}

// Scoped to the picture's own element, so that a notebook showing the
// fragment keeps its own styles.
constexpr const char* style =
    R"(.shardpoint-picture{font-family:sans-serif;color:#222;max-width:1400px}
.shardpoint-picture h1{font-size:20px}.shardpoint-picture h2{font-size:16px;margin-top:28px}
.shardpoint-picture .estimated{background:#fff3cd;border:1px solid #e0c060;padding:8px 12px}
.shardpoint-picture table{border-collapse:collapse;font-size:13px}
.shardpoint-picture td,.shardpoint-picture th{border:1px solid #ccc;padding:3px 8px;text-align:right}
.shardpoint-picture th{background:#f4f4f4}
.shardpoint-picture td:first-child,.shardpoint-picture th:first-child{text-align:left}
.shardpoint-picture section{overflow-x:auto}.shardpoint-picture details summary{cursor:pointer;margin:8px 0}
.shardpoint-picture .swatch{display:inline-block;width:10px;height:10px;margin-right:4px})";

std::string stage_table(const picture& p) {
  std::ostringstream os;
  os << "<table id=\"stage-table\"><tr><th>stage</th><th>device</th><th>nodes</th><th>"
     << xml_escaped(p.cost_heading + heading_unit(p.cost_unit))
     << "</th><th>weights as stored</th><th>received</th>"
     << "<th>activations</th><th>memory</th></tr>";
  for (const auto& st : p.stages) {
    os << "<tr data-stage=\"" << st.stage
       << "\"><td><span class=\"swatch\" style=\"background:" << colour(st.stage) << "\"></span>"
       << st.stage
       << (p.pace_device
               ? (st.device == p.pace_device->device ? " (its device, the bottleneck)" : "")
               : (st.stage == p.bottleneck_stage ? " (bottleneck)" : ""))
       << "</td><td>" << st.device << "</td><td>" << st.nodes << "</td><td>"
       << figure(st.cost, p.cost_unit) << "</td><td>" << bytes(st.parameter_bytes) << "</td><td>"
       << bytes(st.received_bytes) << "</td><td>"
       << (st.activation_bytes ? bytes(*st.activation_bytes) : "-") << "</td><td>"
       << (st.memory_bytes ? bytes(*st.memory_bytes) : "-") << "</td></tr>";
  }
  os << "</table>";
  return os.str();
}

} // namespace

std::vector<std::pair<std::string, std::string>> to_svgs(const picture& p) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!p.blocks.empty()) {
    out.emplace_back("stages.svg", document(stages_svg(p)));
  }
  if (!p.stages.empty()) {
    out.emplace_back("bars.svg", document(bars_svg(p)));
  }
  if (!p.timeline.empty()) {
    out.emplace_back("timeline.svg", document(timeline_svg(p)));
  }
  if (!p.candidates.empty()) {
    out.emplace_back("candidates.svg", document(candidates_svg(p)));
  }
  if (!p.node_graph_svg.empty()) {
    out.emplace_back("nodes.svg", document(p.node_graph_svg));
  }
  return out;
}

std::string to_html_fragment(const picture& p) {
  std::ostringstream os;
  const std::string title = "shardpoint " + p.command + ": " + p.title;
  os << "<div class=\"shardpoint-picture\"><style>" << style << "</style>\n<h1>"
     << xml_escaped(title) << (p.estimates.empty() ? "" : " (estimated)") << "</h1>\n";
  if (!p.estimates.empty()) {
    os << "<div class=\"estimated\" id=\"estimates\"><b>Figures rest on guesses:</b><ul>";
    for (const auto& e : p.estimates) {
      os << "<li>" << xml_escaped(e) << "</li>";
    }
    os << "</ul></div>\n";
  }
  if (!p.stages.empty()) {
    // "55.38, a load in MFLOP + 0.002 a byte received": not "55.38 MFLOP +
    // 0.002 a byte received", a sum it is not.
    const auto neck = [&](double v) {
      return xml_escaped(p.cost_heading == "cost" ? amount(v, p.cost_unit)
                                                  : figure(v, p.cost_unit) + ", a " +
                                                        p.cost_heading + " in " + p.cost_unit);
    };
    os << "<p id=\"summary\">" << counted(p.stages.size(), "stage") << "; bottleneck ";
    if (p.pace_device) {
      os << neck(p.pace_device->cost) << " (device " << p.pace_device->device
         << "'s stages together; the heaviest stage, " << p.bottleneck_stage << ", "
         << figure(p.bottleneck, p.cost_unit) << ")";
    } else {
      os << neck(p.bottleneck) << " (stage " << p.bottleneck_stage << ")";
    }
    os << ", lower bound " << figure(p.lower_bound, p.cost_unit) << ".</p>\n";
  }
  for (const auto& note : p.notes) {
    os << "<p class=\"note\">" << xml_escaped(note) << "</p>\n";
  }
  if (!p.blocks.empty()) {
    os << "<section id=\"graph\"><h2>Where the split is</h2>" << stages_svg(p) << "</section>\n";
  }
  if (!p.node_graph_svg.empty()) {
    os << "<section id=\"nodes\"><details><summary>Every node (laid out by Graphviz)</summary>"
       << p.node_graph_svg << "</details></section>\n";
  } else if (!p.node_graph_note.empty()) {
    os << "<p id=\"nodes-note\">" << xml_escaped(p.node_graph_note) << "</p>\n";
  }
  if (!p.stages.empty()) {
    os << "<section id=\"bars\"><h2>What each stage costs</h2>" << bars_svg(p) << stage_table(p)
       << "</section>\n";
  }
  if (!p.timeline.empty()) {
    os << "<section id=\"timeline\"><h2>How the pipeline runs</h2>" << timeline_svg(p)
       << "</section>\n";
  }
  if (!p.candidates.empty()) {
    os << "<section id=\"candidates\"><h2>Other stage counts</h2>" << candidates_svg(p)
       << "</section>\n";
  }
  os << "</div>\n";
  return os.str();
}

std::string to_html(const picture& p) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         xml_escaped("shardpoint " + p.command + ": " + p.title +
                     (p.estimates.empty() ? "" : " (estimated)")) +
         "</title></head><body style=\"margin:24px\">\n" + to_html_fragment(p) + "</body></html>\n";
}

} // namespace shardpoint::io
