// Tests of a run's tables (io/metrics.hpp): columns as wide as their
// figures, the rows equal to the JSON's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardpoint/io/metrics.hpp>
#include <shardpoint/runtime/schedules.hpp>

namespace {

namespace rt = shardpoint::runtime;

shardpoint::io::training_run run_of(std::vector<rt::stage_times> stages) {
  shardpoint::io::training_run r;
  r.schedule = "1f1b";
  r.mode = "virtual";
  r.options.devices = static_cast<int>(stages.size());
  r.options.micro_batches = 4;
  r.stages = std::move(stages);
  r.result = rt::run_schedule(r.stages, r.options);
  return r;
}

// The table's rows from "stage" to the first device line.
std::vector<std::string> stage_rows(const std::string& table) {
  std::istringstream in(table);
  std::vector<std::string> rows;
  std::string line;
  bool in_rows = false;
  while (std::getline(in, line) && line.rfind("device ", 0) != 0) {
    in_rows = in_rows || line.rfind("stage ", 0) == 0;
    if (in_rows) {
      rows.push_back(line);
    }
  }
  return rows;
}

} // namespace

TEST_CASE("a training table's time columns are as wide as their widest time") {
  // A trial's 13-digit time overflowed its 11-wide column, the rows
  // misaligned under their headings.
  rt::stage_times small{};
  rt::stage_times large{};
  large.forward = 1234567890123.5;
  large.backward = 2469135780247;
  for (const auto& stages : {std::vector{small, small}, std::vector{small, large}}) {
    const auto table = shardpoint::io::to_table(run_of(stages));
    const auto rows = stage_rows(table);
    REQUIRE(rows.size() == 3);
    // Every column ends where its heading ends.
    for (const char* heading : {"forward", "backward", "in_flight", "peak"}) {
      const auto end = rows[0].find(heading) + std::string(heading).size();
      CAPTURE(heading);
      for (const auto& row : rows) {
        CAPTURE(row);
        REQUIRE(row.size() >= end);
        CHECK(row[end - 1] != ' ');
        CHECK((end == row.size() || row[end] == ' '));
      }
    }
    const auto json = nlohmann::json::parse(shardpoint::io::to_json(run_of(stages)));
    CHECK(json["stages"][1]["forward"] == stages[1].forward);
  }
  const auto rows = stage_rows(shardpoint::io::to_table(run_of({small, large})));
  CHECK(rows[2].find(" 1234567890123.5 ") != std::string::npos);
}
