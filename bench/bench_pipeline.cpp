// The pipeline emulator: how many work items (stage x micro-batch) the
// virtual mode schedules per second, and how far the threads mode's measured
// makespan is from the analytic one, S stages on S devices with stage costs
// 1, 2, 3, 1, 2, 3, ... cost units.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <chrono>

#include <benchmark/benchmark.h>

#include <shardpoint/runtime/pipeline.hpp>

namespace {

namespace rt = shardpoint::runtime;

rt::pipeline_plan plan_of(int stages) {
  rt::pipeline_plan plan;
  for (int s = 0; s < stages; ++s) {
    plan.stages.push_back({s, s, 1, 1 + s % 3});
  }
  plan.num_devices = stages;
  return plan;
}

// Arguments: stages, micro-batches.
void virtual_mode(benchmark::State& state) {
  const auto stages = static_cast<int>(state.range(0));
  const rt::session session(plan_of(stages), rt::device_manager(stages));
  rt::run_options options;
  options.micro_batches = static_cast<int>(state.range(1));
  options.keep_items = false;
  for (auto _ : state) {
    auto m = session.run_virtual(options);
    benchmark::DoNotOptimize(m.makespan);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * state.range(1));
}
BENCHMARK(virtual_mode)
    ->Args({4, 64})
    ->Args({100, 1000})
    ->Args({1000, 1000})
    ->Args({10000, 10000})
    ->Unit(benchmark::kMillisecond);

// Arguments: stages, micro-batches, microseconds per cost unit. Counters:
// error, (measured - analytic) / analytic makespan; overhead_us, the wall time
// beyond the analytic figure per micro-batch.
void threads_mode(benchmark::State& state) {
  const auto stages = static_cast<int>(state.range(0));
  const auto unit = state.range(2);
  const rt::session session(plan_of(stages), rt::device_manager(stages));
  rt::run_options options;
  options.micro_batches = static_cast<int>(state.range(1));
  options.keep_items = false;
  options.unit = std::chrono::microseconds(unit);
  double error = 0;
  double overhead_us = 0;
  for (auto _ : state) {
    const auto m = session.run_threads(options);
    const auto analytic = static_cast<double>(m.analytic_makespan);
    error += (m.makespan - analytic) / analytic;
    overhead_us += (m.wall_seconds * 1e6 - analytic * static_cast<double>(unit)) /
                   static_cast<double>(options.micro_batches);
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["error"] = error / n;
  state.counters["overhead_us"] = overhead_us / n;
}
BENCHMARK(threads_mode)
    ->Args({4, 64, 100})
    ->Args({4, 64, 1000})
    ->Args({16, 64, 100})
    ->Args({16, 64, 1000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace

BENCHMARK_MAIN();
