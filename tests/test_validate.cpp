// validate(): each rule fires on a graph built to break it, stays silent on a
// valid one, and every problem is reported, not just the first.
#include <doctest/doctest.h>

#include <algorithm>

#include "support.hpp"

using shardpoint::pipeline_options;
using shardpoint::rule;
using shardpoint::severity;
using shardpoint::sharding_result;
using test::make_graph;

namespace {

constexpr int unset = sharding_result::unset;

std::vector<rule> rules_of(const std::vector<shardpoint::diagnostic>& ds) {
  std::vector<rule> out;
  for (const auto& d : ds) {
    out.push_back(d.rule);
  }
  return out;
}

// A chain 0 -> 1 -> 2 -> 3 cut into two stages on two devices: valid.
const auto chain = make_graph(4, {{0, 1}, {1, 2}, {2, 3}});
const sharding_result good(4, {0, 0, 1, 1}, {0, 0, 1, 1});
const pipeline_options pipelined{
    .num_devices = 2, .enable_pipelining = true, .batches_per_step = 4};

} // namespace

TEST_CASE("a valid sharding has no diagnostics") {
  CHECK(shardpoint::validate(chain, good, pipelined).empty());
  CHECK(shardpoint::validate(chain, good).empty());
  CHECK_FALSE(shardpoint::has_errors(shardpoint::validate(chain, good, pipelined)));
}

TEST_CASE("(a) one stage on several devices") {
  const sharding_result r(4, {0, 0, 1, 0}, {0, 0, 1, 1});
  const auto ds = shardpoint::validate(chain, r, pipelined);
  REQUIRE(rules_of(ds) == std::vector{rule::stage_on_several_devices});
  CHECK(ds[0].severity == severity::error);
  CHECK(ds[0].message ==
        "stage 1 is split over devices 0 (vertex 3), 1 (vertex 2); a pipeline stage must run on "
        "one device");
  CHECK(ds[0].vertices == std::vector<std::size_t>{3, 2});
}

TEST_CASE("(b) stages with a gap") {
  const sharding_result r(4, {0, 0, 1, 1}, {0, 0, 2, 2});
  const auto ds = shardpoint::validate(chain, r, {});
  REQUIRE(rules_of(ds) == std::vector{rule::stage_numbering});
  CHECK(ds[0].message == "stages must be numbered 0..2 without gaps, but 1 (1) have no vertex");
}

TEST_CASE("(c) an edge into an earlier stage, grouped by stage pair") {
  // 0 -> 1 -> 2 -> 3 with 1 in stage 1 and 2, 3 in stage 0: edge 1 -> 2 goes back.
  const sharding_result r(4, {0, 0, 0, 0}, {0, 1, 0, 0});
  const auto ds = shardpoint::validate(chain, r, {});
  REQUIRE(rules_of(ds) == std::vector{rule::backward_edge});
  CHECK(ds[0].message == "1 edge(s) go from stage 1 back to stage 0, e.g. vertex 1 -> vertex 2; "
                         "forward layers must be in increasing stage order");
  CHECK(ds[0].vertices == std::vector<std::size_t>{1, 2});
}

TEST_CASE("(d) more devices than available") {
  const auto ds = shardpoint::validate(chain, good, {.num_devices = 1});
  REQUIRE(rules_of(ds) == std::vector{rule::too_many_devices});
  CHECK(ds[0].message == "the sharding uses devices 0..1 (2) but num_devices is 1");
  CHECK(shardpoint::validate(chain, good, {.num_devices = 2}).empty());
}

TEST_CASE("(e) batches_per_step must be a positive multiple of the stages") {
  for (int bps : {0, -2, 3, 5}) {
    CAPTURE(bps);
    const auto ds =
        shardpoint::validate(chain, good, {.enable_pipelining = true, .batches_per_step = bps});
    REQUIRE(rules_of(ds) == std::vector{rule::batches_per_step});
    CHECK(ds[0].message == "batches_per_step is " + std::to_string(bps) +
                               " but must be a positive multiple of the number of stages (2)");
  }
  // Not checked without pipelining.
  CHECK(shardpoint::validate(chain, good, {.batches_per_step = 3}).empty());
}

TEST_CASE("(f) a graph input feeding several devices is a warning") {
  // 0 feeds 1 (device 0) and 2 (device 1); the caller marks 0 as an input.
  const auto g = make_graph(3, {{0, 1}, {0, 2}});
  const sharding_result r(3, {0, 0, 1}, {});
  const std::vector<bool> input{true, false, false};
  const auto inputs = shardpoint::graph_inputs(
      boost::make_iterator_property_map(input.begin(), get(boost::vertex_index, g)));
  const auto ds = shardpoint::validate(g, r, {}, inputs);
  REQUIRE(rules_of(ds) == std::vector{rule::input_on_several_devices});
  CHECK(ds[0].severity == severity::warning);
  CHECK(ds[0].message ==
        "graph input vertex 0 feeds devices 0, 1; its data is copied to each of them");
  CHECK_FALSE(shardpoint::has_errors(ds));
  // An input whose consumers share one device is an ordinary cut, whatever
  // the input's own device.
  CHECK(shardpoint::validate(g, sharding_result(3, {0, 1, 1}, {}), {}, inputs).empty());
  // Unmarked, vertex 0 is an operation like any other: its consumers on two
  // devices are an ordinary cut, not a copied input.
  CHECK(shardpoint::validate(g, r, {}).empty());
}

TEST_CASE("(f) no warning on an ordinary cut of a random DAG (issue: 43 warnings)") {
  const auto d = shardpoint::synthetic::random_dag(10'000, 30'000, 11);
  const auto g = make_graph(d.num_vertices, test::edge_list(d.edges.begin(), d.edges.end()));
  const auto points = shardpoint::synthetic::evenly_spaced_points(d, 5);
  const auto ds = shardpoint::validate(g, shardpoint::manual_shard(g, points));
  CHECK(ds.empty());
}

TEST_CASE("pipelining needs stages and devices") {
  const sharding_result no_stages(4, {0, 0, 1, 1}, {});
  CHECK(rules_of(shardpoint::validate(chain, no_stages, pipelined)) ==
        std::vector{rule::pipelining_needs_sharding});
  const sharding_result no_devices(4, {}, {0, 0, 1, 1});
  CHECK(rules_of(shardpoint::validate(chain, no_devices, pipelined)) ==
        std::vector{rule::pipelining_needs_sharding});
  const sharding_result some_devices(4, {0, unset, 1, 1}, {0, 0, 1, 1});
  const auto ds = shardpoint::validate(chain, some_devices, pipelined);
  REQUIRE(rules_of(ds) == std::vector{rule::pipelining_needs_sharding});
  CHECK(ds[0].message ==
        "pipelining needs every vertex on a device, but 1 vertex(es) have none, e.g. vertex 1");
}

TEST_CASE("every problem is reported, errors before warnings") {
  // 0 -> 1, 0 -> 2 -> 3: stage 1 split over devices, gap (no stage 2), a back edge,
  // too many devices, bad batches_per_step, input on several devices.
  const auto g = make_graph(4, {{0, 1}, {0, 2}, {2, 3}});
  const sharding_result r(4, {0, 0, 4, 1}, {1, 1, 3, 1});
  const std::vector<bool> input{true, false, false, false};
  const auto ds = shardpoint::validate(
      g, r, {.num_devices = 2, .enable_pipelining = true, .batches_per_step = 3},
      shardpoint::graph_inputs(
          boost::make_iterator_property_map(input.begin(), get(boost::vertex_index, g))));
  CHECK(rules_of(ds) == std::vector{rule::stage_on_several_devices, rule::stage_numbering,
                                    rule::backward_edge, rule::too_many_devices,
                                    rule::batches_per_step, rule::input_on_several_devices});
  CHECK(std::is_partitioned(ds.begin(), ds.end(),
                            [](const auto& d) { return d.severity == severity::error; }));
}

TEST_CASE("validate of a manual_shard result, and a size mismatch") {
  const auto r = shardpoint::manual_shard(chain, std::vector<test::point>{{1, 0, 0}});
  CHECK(shardpoint::validate(chain, r, pipelined).empty());
  CHECK_THROWS_WITH_AS(shardpoint::validate(make_graph(3, {}), r),
                       "shardpoint: validate() given a sharding of 4 vertices for a graph of 3",
                       shardpoint::size_mismatch_error);
}

TEST_CASE("rule and severity names") {
  CHECK(shardpoint::to_string(rule::backward_edge) == "backward-edge");
  CHECK(shardpoint::to_string(severity::warning) == "warning");
}

TEST_CASE("messages call the options what the caller calls them") {
  pipeline_options o{.num_devices = 1, .enable_pipelining = true, .batches_per_step = 3};
  o.spelling = {"--num-ipus", "--batches-per-step"};
  const auto ds = shardpoint::validate(chain, good, o);
  REQUIRE(ds.size() == 2);
  CHECK(ds[0].message == "the sharding uses devices 0..1 (2) but --num-ipus is 1");
  CHECK(ds[1].message ==
        "--batches-per-step is 3 but must be a positive multiple of the number of stages (2)");
  // Not given: the default is not called the user's (it said "is 1").
  o.batches_per_step = 1;
  o.batches_per_step_defaulted = true;
  const auto defaulted = shardpoint::validate(chain, good, o);
  REQUIRE(defaulted.size() == 2);
  CHECK(defaulted[1].message == "--batches-per-step is not given (its default is 1) but must be a "
                                "positive multiple of the number of stages (2)");
}

TEST_CASE("pipelining needs every vertex in a stage, too") {
  const sharding_result partial(4, {0, 0, 1, 1}, {0, 0, unset, 1});
  const auto ds = shardpoint::validate(chain, partial, pipelined);
  REQUIRE(rules_of(ds) == std::vector{rule::pipelining_needs_sharding});
  CHECK(ds[0].message ==
        "pipelining needs every vertex in a stage, but 1 vertex(es) have none, e.g. vertex 2");
}

TEST_CASE("first_error: the first error, past any warning; none among warnings") {
  using shardpoint::diagnostic;
  CHECK(shardpoint::first_error({}) == nullptr);
  const std::vector<diagnostic> warnings{
      {severity::warning, rule::stage_on_several_devices, "w", {}}};
  CHECK(shardpoint::first_error(warnings) == nullptr);
  const std::vector<diagnostic> mixed{{severity::warning, rule::stage_on_several_devices, "w", {}},
                                      {severity::error, rule::backward_edge, "e1", {}},
                                      {severity::error, rule::backward_edge, "e2", {}}};
  REQUIRE(shardpoint::first_error(mixed) == &mixed[1]);
  CHECK(shardpoint::first_error(mixed)->message == "e1");
}
