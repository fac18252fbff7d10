// The pipeline emulator: virtual mode equals the analytic makespan; threads
// mode runs and reports; PopRT's checks.
#include <doctest/doctest.h>

#include <numeric>

#include <boost/graph/adjacency_list.hpp>

#include <shardpoint/runtime/pipeline.hpp>
#include <shardpoint/shardpoint.hpp>

#include "address_limit.hpp"

using namespace shardpoint::runtime;
using shardpoint::sharding_result;

namespace {

// A plan straight from per-stage costs, one device per stage.
pipeline_plan plan_of(const std::vector<std::int64_t>& costs) {
  pipeline_plan p;
  for (std::size_t s = 0; s < costs.size(); ++s) {
    p.stages.push_back({static_cast<int>(s), static_cast<int>(s), 1, costs[s]});
  }
  p.num_devices = static_cast<int>(costs.size());
  return p;
}

// A literal, slow re-computation of the schedule: every item's start is the
// latest of its device being free, its input being pushed, and (for the
// push) room in the next queue -- iterated to a fixed point over a table.
std::int64_t reference_makespan(const std::vector<std::int64_t>& c, int M, std::size_t Q) {
  const std::size_t S = c.size();
  std::vector<std::vector<std::int64_t>> start(S, std::vector<std::int64_t>(M, 0));
  std::vector<std::vector<std::int64_t>> push(S, std::vector<std::int64_t>(M, 0));
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t s = 0; s < S; ++s) {
      for (int m = 0; m < M; ++m) {
        std::int64_t st = 0;
        if (m > 0)
          st = std::max(st, push[s][m - 1]);
        if (s > 0)
          st = std::max(st, push[s - 1][m]);
        std::int64_t pu = st + c[s];
        if (s + 1 < S && m >= static_cast<int>(Q))
          pu = std::max(pu, start[s + 1][m - Q]);
        if (st != start[s][m] || pu != push[s][m]) {
          start[s][m] = st;
          push[s][m] = pu;
          changed = true;
        }
      }
    }
  }
  return start[S - 1][M - 1] + c[S - 1];
}

} // namespace

TEST_CASE("virtual mode equals the analytic makespan") {
  const device_manager devices(8);
  for (const auto& costs : std::vector<std::vector<std::int64_t>>{
           {1}, {1, 1, 1, 1}, {3, 1, 2}, {1, 5, 1, 5}, {7, 2, 2, 2, 9}, {15, 133, 3, 24}}) {
    for (int M : {1, 4, 16, 64}) {
      CAPTURE(M);
      const session s(plan_of(costs), devices);
      const auto m = s.run_virtual({.micro_batches = M, .queue_depth = 64});
      CHECK(m.makespan == static_cast<double>(m.analytic_makespan));
      CHECK(m.analytic_makespan == std::accumulate(costs.begin(), costs.end(), std::int64_t{0}) +
                                       (M - 1) * *std::max_element(costs.begin(), costs.end()));
      CHECK(m.items.size() == costs.size() * static_cast<std::size_t>(M));
    }
  }
}

TEST_CASE("virtual mode with short queues matches a literal fixed-point reference") {
  const device_manager devices(8);
  for (const auto& costs : std::vector<std::vector<std::int64_t>>{
           {1, 1, 1}, {3, 1, 2}, {1, 5, 1, 5}, {2, 9, 1, 1, 4}}) {
    for (std::size_t Q : {1, 2, 4}) {
      CAPTURE(Q);
      const auto m =
          session(plan_of(costs), devices).run_virtual({.micro_batches = 12, .queue_depth = Q});
      CHECK(m.makespan == static_cast<double>(reference_makespan(costs, 12, Q)));
    }
  }
}

TEST_CASE("the seed example: four stages of unit-cost nodes, 16 micro-batches") {
  // Stage sizes of ResNet-50 v1 cut by the seed's shard.yaml: 15, 133, 3, 24 nodes.
  std::vector<int> devices;
  for (int s = 0; s < 4; ++s) {
    devices.insert(devices.end(),
                   std::vector<std::size_t>{15, 133, 3, 24}[static_cast<std::size_t>(s)], s);
  }
  const sharding_result r(devices.size(), devices, devices);
  const auto plan = make_plan(
      r, [](std::size_t) { return 1; }, 16, 4);
  const session s(plan, device_manager(4));
  const auto m = s.run_virtual({.micro_batches = 16});
  CHECK(m.analytic_makespan == 175 + 15 * 133);
  CHECK(m.makespan == 175 + 15 * 133);
  CHECK(m.bottleneck_stage == 1);
  CHECK(m.stages[1].utilisation == doctest::Approx(16.0 * 133 / (175 + 15 * 133)));
  CHECK(m.bubble_fraction == doctest::Approx(1.0 - 16.0 * 175 / (4.0 * (175 + 15 * 133))));
  CHECK(timeline(m).find("device 1 |") != std::string::npos);
  CHECK_THROWS_AS((void)timeline(m, 0), shardpoint::bad_parameter_error);
  CHECK(chrome_trace(m, 1.0).find("\"ph\":\"X\"") != std::string::npos);
}

TEST_CASE("the forward timeline marks stages past 9 by letters, and says so") {
  // A trial read stage 10 as 0 and 11 as 1, in rows shifted past device 9.
  run_metrics m;
  m.makespan = 72;
  for (int s = 0; s < 12; ++s) {
    m.devices.push_back({s, 6, 6.0 / 72});
    m.items.push_back({s, s, 0, 6.0 * s, 6.0 * (s + 1)});
  }
  const auto text = timeline(m);
  CHECK(text.find("device 9  |" + std::string(54, '.') + std::string(6, '9')) != std::string::npos);
  CHECK(text.find("device 10 |" + std::string(60, '.') + std::string(6, 'a')) != std::string::npos);
  CHECK(text.find("device 11 |" + std::string(66, '.') + std::string(6, 'b') + "|") !=
        std::string::npos);
  CHECK(text.find("(stages from 10 are letters: a = 10 ... z = 35, A = 36 ... Z = 61)\n") !=
        std::string::npos);
  m.items.back().stage = 62; // past Z, the marks start again, and the line says so
  CHECK(timeline(m).find(std::string(6, '0') + "|") != std::string::npos);
  CHECK(timeline(m).find("then 0 again: a mark is the stage mod 62)") != std::string::npos);
}

TEST_CASE("10,000 stages x 10,000 micro-batches in virtual mode") {
  const pipeline_plan plan = plan_of(std::vector<std::int64_t>(10'000, 1));
  const auto m = session(plan, device_manager(10'000))
                     .run_virtual({.micro_batches = 10'000, .keep_items = false});
  CHECK(m.makespan == 10'000 + 9'999);
}

TEST_CASE("stages sharing a device are serialised on it") {
  // Stages 0 and 2 on device 0, stage 1 on device 1, unit costs.
  pipeline_plan p = plan_of({1, 1, 1});
  p.stages[2].device = 0;
  p.num_devices = 2;
  const auto m = session(p, device_manager(2)).run_virtual({.micro_batches = 4});
  // Device 0 does 3 units' work per 2 stages... 8 units of work in all on it.
  CHECK(m.devices[0].busy == 8);
  CHECK(m.makespan >= 8);
  for (const auto& a : m.items) {
    for (const auto& b : m.items) {
      if (&a != &b && a.device == b.device) {
        CHECK((a.end <= b.start || b.end <= a.start)); // never two at once
      }
    }
  }
}

TEST_CASE("stages sharing a device: the analytic makespan and bottleneck are the device's") {
  // A trial's stages 1 and 2 on device 1 ran 522 units beside "analytic
  // 319" and "bottleneck: stage 0". Consecutive stages on one device work
  // as one stage of their summed cost.
  for (const auto& [costs, devices] :
       std::vector<std::pair<std::vector<std::int64_t>, std::vector<int>>>{
           {{29, 29, 29, 29}, {0, 1, 1, 2}},
           {{3, 1, 2, 5}, {0, 0, 1, 1}},
           {{4, 1, 1}, {0, 1, 1}}}) {
    pipeline_plan p = plan_of(costs);
    std::vector<std::int64_t> merged(static_cast<std::size_t>(devices.back() + 1), 0);
    for (std::size_t s = 0; s < costs.size(); ++s) {
      p.stages[s].device = devices[s];
      merged[static_cast<std::size_t>(devices[s])] += costs[s];
    }
    p.num_devices = devices.back() + 1;
    for (int M : {1, 8}) {
      CAPTURE(M);
      const auto m =
          session(p, device_manager(8)).run_virtual({.micro_batches = M, .queue_depth = 64});
      const auto busiest = std::max_element(merged.begin(), merged.end());
      CHECK(m.analytic_makespan ==
            std::accumulate(costs.begin(), costs.end(), std::int64_t{0}) + (M - 1) * *busiest);
      CHECK(m.makespan == static_cast<double>(m.analytic_makespan));
      CHECK(m.bottleneck_device == busiest - merged.begin());
      CHECK(m.bottleneck_device_cost == *busiest);
    }
  }
}

TEST_CASE("threads mode runs the same schedule and reports") {
  const session s(plan_of({2, 4, 1}), device_manager(3));
  const auto m =
      s.run_threads({.micro_batches = 6, .queue_depth = 2, .unit = std::chrono::microseconds(200)});
  CHECK(m.mode == "threads");
  CHECK(m.items.size() == 18);
  CHECK(m.analytic_makespan == 7 + 5 * 4);
  CHECK(m.makespan >=
        0.9 * static_cast<double>(m.analytic_makespan)); // real sleeps never end early
  CHECK(m.wall_seconds > 0);
}

TEST_CASE("threads mode: a device thread that cannot be started is an error, not an abort") {
#ifdef SHARDPOINT_TEST_SANITIZED
  MESSAGE("under a sanitizer: not tried (see address_limit.hpp)");
#else
  // Room for a few threads' stacks, not for 4096 devices' (it called
  // std::terminate: simulate --mode threads aborted under a ulimit).
  CHECK(shardpoint_test::under_address_limit(64 << 20, [] {
          const session s(plan_of(std::vector<std::int64_t>(4096, 1)), device_manager(4096));
          (void)s.run_threads({.micro_batches = 2, .unit = std::chrono::microseconds(1)});
        }) == "system_error");
#endif
}

TEST_CASE("PopRT's checks") {
  const auto unit = [](std::size_t) { return std::int64_t{1}; };
  // The words of validate() (pipeline_rules.hpp), the first rule broken.
  CHECK_THROWS_WITH_AS(make_plan(sharding_result(2, {0, 1}, {}), unit, 2),
                       "pipelining is enabled but no vertex has a pipeline stage", config_error);
  CHECK_THROWS_WITH_AS(make_plan(sharding_result(2, {0, -1}, {0, 1}), unit, 2),
                       "pipelining needs every vertex on a device, but 1 vertex(es) have none, "
                       "e.g. vertex 1",
                       config_error);
  CHECK_THROWS_WITH_AS(make_plan(sharding_result(2, {0, 1}, {0, 1}), unit, 3),
                       "batches_per_step is 3 but must be a positive multiple of the number of "
                       "stages (2)",
                       config_error);
  CHECK_THROWS_WITH_AS(make_plan(sharding_result(2, {0, 1}, {0, 1}), unit, 2, 1),
                       "the sharding uses devices 0..1 (2) but num_devices is 1", config_error);
  CHECK_THROWS_AS(make_plan(sharding_result(2, {0, 1}, {0, 0}), unit, 2), config_error);
  CHECK_THROWS_AS(make_plan(sharding_result(2, {0, 1}, {0, 2}), unit, 2), config_error);
}

TEST_CASE("the plan breaks on the rules validate reports, in the same words") {
  const auto unit = [](std::size_t) { return std::int64_t{1}; };
  const boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> chain(4);
  const shardpoint::pipeline_options options{
      .num_devices = 1, .enable_pipelining = true, .batches_per_step = 4};
  for (const sharding_result& r :
       {sharding_result(4, {0, 0, 1, 1}, {0, 0, 1, 1}),
        sharding_result(4, {0, 1, 1, 1}, {0, 0, 1, 1}),
        sharding_result(4, {0, 0, 0, 0}, {0, 0, 2, 2}), sharding_result(4, {0, 0, 0, 0}, {})}) {
    const auto diagnostics = shardpoint::validate(chain, r, options);
    REQUIRE_FALSE(diagnostics.empty());
    CHECK_THROWS_WITH_AS(make_plan(r, unit, options), diagnostics.front().message.c_str(),
                         config_error);
  }
}

TEST_CASE("costs from a property map; per-stage costs are evaluate()'s") {
  namespace syn = shardpoint::synthetic;
  auto d = syn::layered_residual(10, 5, 3);
  syn::assign_costs(d, 4);
  const boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> g(
      d.edges.begin(), d.edges.end(), d.num_vertices);
  const auto r = shardpoint::manual_shard(g, syn::evenly_spaced_points(d, 3, syn::spacing::cost));
  const auto plan = make_plan(r, d.cost.data(), 3);
  const auto index = get(boost::vertex_index, g);
  const auto m =
      shardpoint::evaluate(g, r, boost::make_iterator_property_map(d.cost.begin(), index));
  REQUIRE(plan.stages.size() == m.stages.size());
  for (std::size_t s = 0; s < m.stages.size(); ++s) {
    CHECK(static_cast<double>(plan.stages[s].cost) == m.stages[s].cost);
    CHECK(plan.stages[s].nodes == m.stages[s].vertices);
  }
}
