// Training schedules in virtual time against their closed forms (GPipe,
// 1F1B: Narayanan et al. 2021; interleaved: Narayanan et al., SC'21, §2.2),
// and, on random stage times, the invariants any schedule keeps.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include <shardpoint/memory_plan.hpp>
#include <shardpoint/runtime/schedules.hpp>
#include <shardpoint/runtime/trace.hpp>
#include <shardpoint/synthetic.hpp>

#include "address_limit.hpp"

using namespace shardpoint::runtime;

namespace {

std::vector<stage_times> equal_stages(int n, double forward, double backward) {
  stage_times t;
  t.forward = forward;
  t.backward = backward;
  t.activation_bytes = 1000;
  t.input_bytes = 10;
  return std::vector<stage_times>(static_cast<std::size_t>(n), t);
}

// Every device runs one operation at a time, each operation after what it
// depends on, each (kind, stage, micro-batch) once.
void check_invariants(const std::vector<stage_times>& stages, const schedule_options& o,
                      const schedule_result& r) {
  const auto S = stages.size();
  const auto m = static_cast<std::size_t>(o.micro_batches);
  CHECK(r.ops.size() == (o.kind == schedule_kind::zb_h1 ? 3 : 2) * S * m);
  std::map<std::tuple<char, int, int>, training_op> by_key;
  std::vector<std::vector<training_op>> on_device(static_cast<std::size_t>(o.devices));
  for (const auto& op : r.ops) {
    CHECK(by_key.emplace(std::make_tuple(op.kind, op.stage, op.micro_batch), op).second);
    CHECK(op.device == op.stage % o.devices);
    on_device[static_cast<std::size_t>(op.device)].push_back(op);
  }
  for (auto& ops : on_device) {
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
      return std::pair{a.start, a.end} < std::pair{b.start, b.end};
    });
    for (std::size_t k = 1; k < ops.size(); ++k) {
      CHECK(ops[k].start >= ops[k - 1].end);
    }
  }
  for (const auto& entry : by_key) {
    const auto& op = entry.second;
    const char kind = std::get<0>(entry.first);
    const int s = std::get<1>(entry.first);
    const int j = std::get<2>(entry.first);
    if (kind == 'F' && s > 0) {
      CHECK(op.start >= by_key.at({'F', s - 1, j}).end);
    }
    if (kind == 'W') {
      CHECK(op.start >= by_key.at({'B', s, j}).end);
    }
    if (kind == 'B') {
      const auto last = static_cast<int>(S) - 1;
      CHECK(op.start >= (s == last ? by_key.at({'F', s, j}) : by_key.at({'B', s + 1, j})).end);
    }
  }
}

} // namespace

TEST_CASE("GPipe and 1F1B: (m + p - 1)(t_f + t_b), bubble (p - 1) / (m + p - 1), in flight") {
  int cases = 0;
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 12; ++m) {
      for (const auto& times : {std::pair{1.0, 2.0}, std::pair{3.0, 3.0}, std::pair{2.0, 5.0}}) {
        const double tf = times.first; // not structured bindings: CAPTURE takes them (clang 14)
        const double tb = times.second;
        for (const auto kind : {schedule_kind::gpipe, schedule_kind::one_f_one_b}) {
          CAPTURE(p);
          CAPTURE(m);
          CAPTURE(tf);
          CAPTURE(tb);
          const auto stages = equal_stages(p, tf, tb);
          const schedule_options o{kind, p, m, 1, false};
          const auto r = run_schedule(stages, o);
          check_invariants(stages, o, r);
          CHECK(r.makespan == (m + p - 1) * (tf + tb));
          for (int d = 0; d < p; ++d) {
            CHECK(r.bubble[static_cast<std::size_t>(d)] ==
                  doctest::Approx(double(p - 1) / (m + p - 1)).epsilon(1e-12));
          }
          for (int i = 0; i < p; ++i) {
            const int want = kind == schedule_kind::gpipe ? m : std::min(p - i, m);
            CHECK(r.in_flight[static_cast<std::size_t>(i)] == want);
            CHECK(r.activation_peak[static_cast<std::size_t>(i)] ==
                  static_cast<std::uint64_t>(want) * 1000);
          }
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 6 * 12 * 3 * 2);
}

TEST_CASE("interleaved: a bubble of (p - 1) / (v m) of the ideal time") {
  int cases = 0;
  for (int p = 1; p <= 5; ++p) {
    for (int v = 1; v <= 4; ++v) {
      for (int m = p; m <= 4 * p; m += p) {
        for (const auto& times : {std::pair{1.0, 2.0}, std::pair{2.0, 2.0}, std::pair{1.0, 3.0}}) {
          const double tf = times.first;
          const double tb = times.second;
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(tf);
          CAPTURE(tb);
          const auto stages = equal_stages(p * v, tf, tb);
          const schedule_options o{schedule_kind::interleaved, p, m, v, false};
          const auto r = run_schedule(stages, o);
          check_invariants(stages, o, r);
          const double ideal = m * v * (tf + tb);
          CHECK(r.makespan == ideal + (p - 1) * (tf + tb));
          CHECK((r.makespan - ideal) / ideal ==
                doctest::Approx(double(p - 1) / (v * m)).epsilon(1e-12));
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 5 * 4 * 4 * 3);
}

TEST_CASE("ZB-H1: m (t_f + t_b + t_w) + (p - 1)(t_f + t_b - t_w), 1F1B's activations") {
  int cases = 0;
  // (forward, backward, weight share): B and W take backward (1 - share)
  // and backward share; W never longer than F or B, as the paper assumes.
  const std::vector<std::tuple<double, double, double>> times{
      {1, 2, 0.5}, {2, 4, 0.25}, {2, 4, 0.5}, {3, 4, 0.25}, {1, 2, 0}};
  for (int p = 1; p <= 6; ++p) {
    for (int m = p; m <= 3 * p + 1; ++m) {
      for (const auto& t : times) {
        const double tf = std::get<0>(t);
        const double tw = std::get<1>(t) * std::get<2>(t);
        const double tb = std::get<1>(t) - tw;
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(tf);
        CAPTURE(tb);
        CAPTURE(tw);
        auto stages = equal_stages(p, tf, std::get<1>(t));
        for (auto& s : stages) {
          s.weight_share = std::get<2>(t);
        }
        const schedule_options o{schedule_kind::zb_h1, p, m, 1, false};
        const auto r = run_schedule(stages, o);
        check_invariants(stages, o, r);
        CHECK(r.makespan == m * (tf + tb + tw) + (p - 1) * (tf + tb - tw));
        for (int i = 0; i < p; ++i) {
          CHECK(r.in_flight[static_cast<std::size_t>(i)] == p - i);
        }
        // Against 1F1B with B and W as one: the bubble shrinks by 2 (p - 1) t_w.
        const auto one = run_schedule(stages, {schedule_kind::one_f_one_b, p, m, 1, false});
        CHECK(one.makespan - r.makespan == 2 * (p - 1) * tw);
        ++cases;
      }
    }
  }
  CHECK(cases == 5 * 54); // p = 1..6, m = p..3p + 1
}

TEST_CASE("on random stage times every schedule keeps its order and its dependencies") {
  shardpoint::synthetic::splitmix64 rng(11);
  for (int round = 0; round < 200; ++round) {
    const int p = 1 + static_cast<int>(rng.below(5));
    const int v = 1 + static_cast<int>(rng.below(3));
    const int m = p * (1 + static_cast<int>(rng.below(4)));
    std::vector<stage_times> stages;
    for (int s = 0; s < p * v; ++s) {
      stage_times t;
      t.forward = 1.0 + static_cast<double>(rng.below(9));
      t.backward = 1.0 + static_cast<double>(rng.below(17));
      t.activation_bytes = 64;
      t.input_bytes = 8;
      stages.push_back(t);
    }
    const std::vector<stage_times> one_chunk(stages.begin(), stages.begin() + p);
    for (const auto kind : {schedule_kind::gpipe, schedule_kind::one_f_one_b}) {
      const schedule_options o{kind, p, m, 1, round % 2 == 0};
      const auto r = run_schedule(one_chunk, o);
      check_invariants(one_chunk, o, r);
      // Every device's work fits in the makespan; the critical path of one
      // micro-batch too.
      double path = 0;
      for (const auto& t : one_chunk) {
        path += t.forward + t.backward + (o.recompute ? t.forward : 0);
      }
      CHECK(r.makespan >= path);
      if (o.recompute) {
        CHECK(r.activation_peak[0] == static_cast<std::uint64_t>(r.in_flight[0]) * 8);
      }
    }
    const schedule_options o{schedule_kind::interleaved, p, m, v, false};
    check_invariants(stages, o, run_schedule(stages, o));
    auto split = one_chunk;
    for (auto& s : split) {
      s.weight_share = static_cast<double>(rng.below(5)) / 4;
    }
    const schedule_options zb{schedule_kind::zb_h1, p, m, 1, false};
    check_invariants(split, zb, run_schedule(split, zb));
  }
}

TEST_CASE("the ASCII timeline: what runs longest in a column, the hidden counted, rows aligned") {
  // A trial's timeline hid operations far shorter than the step, unsaid.
  schedule_result r;
  r.makespan = 200;
  r.ops = {{'F', 0, 0, 0, 0, 100}, {'B', 0, 0, 0, 100, 100.001}, {'F', 1, 1, 0, 100.001, 200}};
  // Device 1's F shares column 36 in time, but on its own row: all shown.
  auto text = timeline(r, 2);
  CHECK(text.find("too short") == std::string::npos);
  CHECK(text.find("device 0 |" + std::string(36, 'F') + "B" + std::string(35, '.') + "|\n") !=
        std::string::npos);
  // On one device the short B shares column 36 with an F that runs far
  // longer there: F shows, and the B is counted.
  r.ops[2].device = 0;
  text = timeline(r, 1);
  CHECK(text.find("device 0 |" + std::string(72, 'F') + "|\n") != std::string::npos);
  CHECK(text.find("(1 operation is too short to show at 72 columns, a column 2.778 units: where "
                  "several run in a column, each mark shows about as often as its share of the "
                  "time)\n") != std::string::npos);
  // Wider, it shows.
  CHECK(timeline(r, 1, 1000000).find("too short") == std::string::npos);
  // No columns is a bad parameter, not std::clamp's broken precondition;
  // and so even when nothing ran.
  CHECK_THROWS_AS((void)timeline(r, 1, 0), shardpoint::bad_parameter_error);
  CHECK_THROWS_AS((void)timeline(r, 1, -3), shardpoint::bad_parameter_error);
  CHECK_THROWS_AS((void)timeline(schedule_result{}, 1, 0), shardpoint::bad_parameter_error);

  // Many operations a column: the marks follow the time each kind takes
  // (1F1B's steady state runs F and B one to one, B twice as long; drawing
  // each over the last showed about four B to an F).
  schedule_options o;
  o.devices = 4;
  o.micro_batches = 400;
  const auto many = run_schedule(std::vector<stage_times>(4, stage_times{1, 2}), o);
  const auto row0 = timeline(many, 4);
  const auto line = row0.substr(0, row0.find('\n'));
  const auto f = std::count(line.begin(), line.end(), 'F');
  const auto b = std::count(line.begin(), line.end(), 'B');
  CAPTURE(line);
  CHECK(f + b == 72);
  CHECK(std::abs(static_cast<double>(b) - 2.0 * static_cast<double>(f)) <= 4.0);

  // Twelve devices: every row's bar starts in the same column.
  o.devices = 12;
  o.micro_batches = 12;
  const auto twelve = timeline(run_schedule(std::vector<stage_times>(12), o), 12);
  std::istringstream rows(twelve);
  std::string row;
  int seen = 0;
  while (std::getline(rows, row) && row.rfind("device ", 0) == 0) {
    CAPTURE(row);
    CHECK(row.find('|') == std::string("device 11 ").size());
    ++seen;
  }
  CHECK(seen == 12);
}

TEST_CASE("schedules refuse what they cannot run") {
  const auto four = equal_stages(4, 1, 2);
  CHECK_THROWS_AS(run_schedule(four, {schedule_kind::one_f_one_b, 2, 4, 1, false}), config_error);
  CHECK_THROWS_AS(run_schedule(four, {schedule_kind::one_f_one_b, 2, 4, 2, false}), config_error);
  CHECK_THROWS_WITH_AS(
      run_schedule(four, {schedule_kind::interleaved, 2, 3, 2, false}),
      "the interleaved schedule needs micro-batches (3) a multiple of the devices (2), as "
      "Megatron-LM's does",
      config_error);
  CHECK_THROWS_AS(run_schedule(four, {schedule_kind::gpipe, 4, 0, 1, false}), config_error);
  auto bad = four;
  bad[2].backward = -1;
  CHECK_THROWS_AS(run_schedule(bad, {schedule_kind::gpipe, 4, 4, 1, false}), config_error);
  CHECK(schedule_named("1f1b") == schedule_kind::one_f_one_b);
  CHECK(schedule_named("zb-h1") == schedule_kind::zb_h1);
  CHECK_THROWS_WITH_AS(schedule_named("zb-h2"),
                       "schedule 'zb-h2' is not one of gpipe, 1f1b, interleaved, zb-h1",
                       config_error);
  CHECK_THROWS_AS(run_schedule(four, {schedule_kind::zb_h1, 4, 3, 1, false}), config_error);
  auto share = four;
  share[0].weight_share = 1.5;
  CHECK_THROWS_AS(run_schedule(share, {schedule_kind::zb_h1, 4, 4, 1, false}), config_error);
}

TEST_CASE("threaded: every schedule near its virtual makespan, the same in flight") {
  // A check of order, not of speed: the order is checked exactly
  // (check_invariants, in flight, the activation peak), and a thread that
  // ran before its inputs were ready would end before the virtual makespan;
  // the upper bound catches only gross serialisation (one operation out of
  // place costs a unit, 2-4% here, which it no longer sees). 10 ms a unit;
  // the run's wake-ups cost tens of microseconds alone, but more when the
  // tests run two at a time beside other work on 2 cores (a bound of 2%
  // failed so, 2026-11-26), hence 10% of makespans of 27 to 57 units.
  const std::chrono::microseconds unit(10000);
  auto zb = equal_stages(4, 1, 2);
  for (auto& s : zb) {
    s.weight_share = 0.5;
  }
  const std::vector<std::pair<std::vector<stage_times>, schedule_options>> runs{
      {equal_stages(4, 1, 2), {schedule_kind::gpipe, 4, 8, 1, false}},
      {equal_stages(4, 1, 2), {schedule_kind::one_f_one_b, 4, 8, 1, true}},
      {equal_stages(8, 1, 2), {schedule_kind::interleaved, 4, 8, 2, false}},
      {zb, {schedule_kind::zb_h1, 4, 8, 1, false}},
      // Five devices on this 2-core machine, unequal stages.
      {std::vector<stage_times>{
           {1, 2, 0, 1, 1}, {2, 3, 0, 1, 1}, {1, 1, 0, 1, 1}, {3, 5, 0, 1, 1}, {1, 2, 0, 1, 1}},
       {schedule_kind::one_f_one_b, 5, 10, 1, false}},
  };
  for (const auto& run : runs) {
    CAPTURE(static_cast<int>(run.second.kind));
    const auto want = run_schedule(run.first, run.second);
    const auto got = run_schedule_threads(run.first, run.second, unit);
    check_invariants(run.first, run.second, got);
    CHECK(got.makespan >= want.makespan);
    CHECK(got.makespan <= want.makespan * 1.10);
    CHECK(got.in_flight == want.in_flight);
    CHECK(got.activation_peak == want.activation_peak);
    for (std::size_t d = 0; d < want.bubble.size(); ++d) {
      CHECK(std::abs(got.bubble[d] - want.bubble[d]) <= 0.10);
    }
  }
  CHECK_THROWS_AS(run_schedule_threads(zb, {schedule_kind::zb_h1, 4, 8, 1, false},
                                       std::chrono::microseconds(0)),
                  config_error);
}

TEST_CASE("threaded: a device thread that cannot be started is an error, not an abort") {
#ifdef SHARDPOINT_TEST_SANITIZED
  MESSAGE("under a sanitizer: not tried (see address_limit.hpp)");
#else
  // Room for a few threads' stacks, not for 4096: the threads started
  // return without work and the run throws the system's error.
  CHECK(shardpoint_test::under_address_limit(64 << 20, [] {
          (void)run_schedule_threads(equal_stages(4096, 1, 2),
                                     {schedule_kind::gpipe, 4096, 1, 1, false},
                                     std::chrono::microseconds(1));
        }) == "system_error");
#endif
}

TEST_CASE("the memory planner counts every schedule it plans as the emulator runs it") {
  // plan_memory's micro-batches in flight (memory/config.hpp: GPipe M,
  // 1F1B and ZB-H1 min(M, S - s)) against the most a stage holds at once
  // in this emulator's run of the schedule, on random stage times, virtual
  // and threaded.
  shardpoint::synthetic::splitmix64 rng(29);
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    const int S = 1 + static_cast<int>(rng.below(6));
    const auto kind = static_cast<int>(rng.below(3));
    const int m = (kind == 2 ? S : 1) + static_cast<int>(rng.below(8));
    CAPTURE(S);
    CAPTURE(kind);
    CAPTURE(m);
    std::vector<stage_times> times(static_cast<std::size_t>(S));
    for (auto& t : times) { // (0 too: a trial's times of 0 counted none in flight)
      t.forward = static_cast<double>(rng.below(9));
      t.backward = round % 5 == 0 ? 0.0 : static_cast<double>(rng.below(9));
      t.activation_bytes = 1;
    }
    schedule_options o;
    o.kind = std::array{schedule_kind::gpipe, schedule_kind::one_f_one_b,
                        schedule_kind::zb_h1}[static_cast<std::size_t>(kind)];
    o.devices = S;
    o.micro_batches = m;
    const auto run = run_schedule(times, o);
    const auto threaded =
        round % 20 == 0 ? run_schedule_threads(times, o, std::chrono::microseconds(20)) : run;
    shardpoint::parallel_config c;
    c.micro_batches = m;
    c.schedule =
        std::array{shardpoint::pipeline_schedule::gpipe, shardpoint::pipeline_schedule::one_f_one_b,
                   shardpoint::pipeline_schedule::zb_h1}[static_cast<std::size_t>(kind)];
    std::vector<shardpoint::stage_memory_input> stages(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      stages[static_cast<std::size_t>(s)].produced_bytes = 1; // bytes = micro-batches held
      stages[static_cast<std::size_t>(s)].device = s;
    }
    const auto plan = shardpoint::plan_memory(stages, c);
    REQUIRE(plan.devices.size() == static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      CHECK(plan.devices[static_cast<std::size_t>(s)].activation_bytes ==
            run.in_flight[static_cast<std::size_t>(s)]);
      CHECK(plan.devices[static_cast<std::size_t>(s)].activation_bytes ==
            threaded.in_flight[static_cast<std::size_t>(s)]);
    }
  }
  // ZB-H1 is a schedule only with M >= S, here as in the emulator.
  shardpoint::parallel_config c;
  c.schedule = shardpoint::pipeline_schedule::zb_h1;
  c.micro_batches = 2;
  const std::vector<shardpoint::stage_memory_input> three(3);
  CHECK(shardpoint::unplannable_schedule(three, c) ==
        "the zb-h1 schedule needs at least as many micro-batches (2) as stages (3)");
  CHECK_THROWS_AS(run_schedule(equal_stages(3, 1, 2), {schedule_kind::zb_h1, 3, 2, 1, false}),
                  config_error);
}
