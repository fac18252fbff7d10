// Tests of the pictures' text (io/picture.hpp): figures people read, in
// the unit they are given; the exact figures stay in the data-* attributes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include <shardpoint/io/picture.hpp>

namespace {

using shardpoint::io::picture;

// Two stages on two devices, a forward pass of each, costs `a` and `b`.
picture two_stages(double a, double b, const std::string& cost_unit, const std::string& time_unit) {
  picture p;
  p.title = "a test";
  p.command = "draw";
  p.cost_unit = cost_unit;
  p.time_unit = time_unit;
  p.stages = {{0, 0, 3, a, 100, 0, {}, {}}, {1, 1, 4, b, 200, 8, {}, {}}};
  p.bottleneck = std::max(a, b);
  p.bottleneck_stage = a >= b ? 0 : 1;
  p.lower_bound = (a + b) / 2;
  p.timeline = {{0, 0, 0, 'F', 0, a}, {1, 1, 0, 'F', a, a + b}};
  p.makespan = a + b;
  p.candidates = {{1, a + b, a + b}, {2, p.bottleneck, p.lower_bound}};
  p.chosen_stages = 2;
  p.baselines = {{"equal node counts", a + b}};
  return p;
}

// The page without its data-* attributes: the text people read.
std::string shown_text(const std::string& page) {
  return std::regex_replace(page, std::regex(R"( data-[a-z-]+="[^"]*")"), "");
}

} // namespace

TEST_CASE("figures in seconds are shown in s, ms, us or ns, never with an exponent") {
  // A trial's page of a plan read "bottleneck 8.735e-06 s forward".
  const auto page = shardpoint::io::to_html(
      two_stages(8.735e-6, 4.2e-6, "s forward", "s (the step without the data-parallel sync)"));
  const auto text = shown_text(page);
  CHECK(text.find("bottleneck 8.735 us forward (stage 0)") != std::string::npos);
  CHECK(text.find("lower bound 6.468 us.") != std::string::npos);
  CHECK(text.find("makespan 12.94 us (the step without the data-parallel sync)") !=
        std::string::npos);
  CHECK(text.find("<th>cost (forward)</th>") != std::string::npos);
  CHECK(text.find("<td>4.2 us</td>") != std::string::npos);
  CHECK(text.find("cost (s forward)") == std::string::npos);
  CHECK_FALSE(std::regex_search(text, std::regex(R"([0-9]e[-+][0-9])")));
  // The exact figures are still there, for the tests and for tools.
  CHECK(page.find("data-metric=\"cost\" data-stage=\"0\" data-value=\"8.735e-06\"") !=
        std::string::npos);
}

TEST_CASE("figures in other units keep their unit after them and in the headings") {
  const auto text = shown_text(shardpoint::io::to_html(two_stages(120, 80.5, "MFLOP", "MFLOP")));
  CHECK(text.find("bottleneck 120 MFLOP (stage 0)") != std::string::npos);
  CHECK(text.find("<th>cost (MFLOP)</th>") != std::string::npos);
  CHECK(text.find("<td>80.5</td>") != std::string::npos);
  CHECK(text.find("makespan 200.5 MFLOP") != std::string::npos);
  CHECK(text.find("Bottleneck against the number of stages (MFLOP)") != std::string::npos);
  // The weights' bytes are the model's (fp32 here), not memory's
  // parameter_bytes at the training precision: said so.
  CHECK(text.find("<th>weights as stored</th>") != std::string::npos);
  CHECK(text.find(">weights as stored</text>") != std::string::npos);
  // A unit that only starts with an s is not seconds.
  const auto steps = shown_text(shardpoint::io::to_html(two_stages(3, 2, "steps", "steps")));
  CHECK(steps.find("bottleneck 3 steps (stage 0)") != std::string::npos);
}

TEST_CASE("a bar over the capacity by less than the rounding says both in bytes") {
  auto p = two_stages(3, 2, "MFLOP", "MFLOP");
  p.stages[0].memory_bytes = 1366560;
  p.stages[1].memory_bytes = 1000;
  p.memory_capacity = 1331200; // both "1.3 MiB"
  const auto text = shown_text(shardpoint::io::to_html(p));
  CHECK(text.find("stage 0: 1.3 MiB (over the capacity: 1366560 bytes, the capacity 1331200)") !=
        std::string::npos);
  p.memory_capacity = 1e6;
  CHECK(shown_text(shardpoint::io::to_html(p)).find("stage 0: 1.3 MiB (over the capacity)<") !=
        std::string::npos);
}
