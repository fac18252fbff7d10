// What `suggest` prints of a split against its memory cap, and its JSON's
// numbers.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <shardpoint/io/suggestion.hpp>

namespace io = shardpoint::io;

namespace {

// A split of one stage holding `bytes` of parameters.
io::named_split holding(std::string name, double bytes) {
  io::named_split s;
  s.name = std::move(name);
  shardpoint::group_metrics g;
  g.id = 0;
  g.vertices = 1;
  g.cost = 1;
  g.load = 1;
  g.memory = bytes;
  s.metrics.stages.push_back(g);
  s.metrics.bottleneck = 1;
  s.metrics.lower_bound = 1;
  return s;
}

// The table's line of the baseline named `name`.
std::string line_of(const std::string& table, const std::string& name) {
  const auto at = table.find("\n" + name);
  REQUIRE(at != std::string::npos);
  return table.substr(at + 1, table.find('\n', at + 1) - at - 1);
}

} // namespace

TEST_CASE("a baseline over the cap by less than the rounding says by how much, in bytes") {
  io::suggestion s;
  s.cost_model = "params";
  s.memory_capacity = 3072;
  s.plan = holding("shardpoint", 3000);
  s.baselines = {holding("just over", 3080), holding("well over", 8192), holding("within", 3072)};
  const std::string table = io::to_table(s);
  CHECK(line_of(table, "just over")
            .ends_with("3.0 KiB over the memory cap (3080 bytes, the cap "
                       "3072)"));
  CHECK(line_of(table, "well over").ends_with("8.0 KiB over the memory cap"));
  CHECK(line_of(table, "within").ends_with(" 3.0 KiB")); // no trailing space
}

TEST_CASE("the JSON's byte counts are integers, as every other report writes them") {
  // A trial read "parameter_bytes": 37036.0 beside memory's 37036.
  io::suggestion s;
  s.cost_model = "params";
  s.memory_capacity = 3072;
  s.plan = holding("shardpoint", 3000);
  s.plan.metrics.stages[0].received_bytes = 0.5; // not a whole number: kept as it is
  s.plan.metrics.stages[0].cost = 1e300;         // past 2^53: a double
  s.baselines = {holding("over", 3080)};
  s.baselines[0].planned_largest = 4096;
  const auto j = nlohmann::json::parse(io::to_json(s));
  const auto& stage = j["stages"][0];
  CHECK(stage["parameter_bytes"].is_number_integer());
  CHECK(stage["parameter_bytes"] == 3000);
  CHECK(stage["memory_bytes"].is_number_integer());
  CHECK(stage["received_bytes"].is_number_float());
  CHECK(stage["received_bytes"] == 0.5);
  CHECK(stage["cost"].is_number_float());
  CHECK(j["memory_capacity"].is_number_integer());
  CHECK(j["memory_capacity"] == 3072);
  CHECK(j["baselines"][0]["largest_parameter_bytes"].is_number_integer());
  CHECK(j["baselines"][0]["largest_parameter_bytes"] == 3080);
  CHECK(j["baselines"][0]["largest_total_bytes"].is_number_integer());
  CHECK(j["baselines"][0]["largest_total_bytes"] == 4096);
  s.plan.metrics.stages[0].cost = -3; // negative whole numbers too
  CHECK(nlohmann::json::parse(io::to_json(s))["stages"][0]["cost"] == -3);
  CHECK(nlohmann::json::parse(io::to_json(s))["stages"][0]["cost"].is_number_integer());
}

TEST_CASE("the summary's lower bound has the page's digits, not rounded to a whole number") {
  // A trial's table read "lower bound 41" where the page showed 41.33.
  io::suggestion s;
  s.cost_model = "flops";
  s.plan = holding("shardpoint", 0);
  s.plan.metrics.bottleneck = 48;
  s.plan.metrics.lower_bound = 124.0 / 3;
  s.plan.metrics.imbalance = 1.013;
  CHECK(io::to_table(s).find("\nbottleneck 48, lower bound 41.33 (1.161x), imbalance 1.013\n") !=
        std::string::npos);
  s.plan.metrics.bottleneck = 6912000000789; // every digit from 10^4, no exponent
  s.plan.metrics.lower_bound = 263.7;
  CHECK(io::to_table(s).find("\nbottleneck 6912000000789, lower bound 263.7 (") !=
        std::string::npos);
}

TEST_CASE("a memory bound above the plan's figure says what the column is") {
  // A trial read the memory bound column (559-612 MiB) against "the largest
  // device holds 445.2 MiB" as two figures for one thing.
  io::suggestion s;
  s.cost_model = "flops";
  s.memory_capacity = 4096;
  s.plan = holding("shardpoint", 3000);
  s.plan.planned_largest = 3000;
  const std::string note = "note: the memory bound column is what the cap holds on";
  CHECK(io::to_table(s).find(note) == std::string::npos); // equal: no note
  s.plan.planned_largest = 2500;
  CHECK(io::to_table(s).find(note) != std::string::npos);
  s.plan.planned_largest.reset(); // no plan: no line, no note
  CHECK(io::to_table(s).find(note) == std::string::npos);
}
