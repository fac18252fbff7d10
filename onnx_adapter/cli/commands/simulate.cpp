// shardpoint simulate: run a sharded model through the pipeline emulator.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const simulate_options& a) {
  const auto r = simulate_model(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  if (!a.trace.empty()) {
    std::cerr << "shardpoint: wrote " << a.trace << '\n'; // as every command that writes
  }
  return exit_ok;
}

} // namespace

action add_simulate(CLI::App& app) {
  auto a = std::make_shared<simulate_options>();
  auto* cmd = app.add_subcommand(
      "simulate", "Emulate the pipelined execution of a sharded model (virtual or threads mode)");
  add_to(*cmd, a->model, "Model to shard and run");
  add_to(*cmd, a->shapes);
  cmd->add_option("--batches-per-step,--batches_per_step", a->batches_per_step,
                  "Micro-batches to run (a multiple of the stages)")
      ->required()
      ->check(batch_count);
  cmd->add_option("--num-ipus,--num_ipus", a->num_ipus, "Devices available (checked)")
      ->check(device_count);
  cmd->add_option("--mode", a->mode,
                  "virtual: discrete events in cost units; threads: a "
                  "thread per device, --unit-us per cost unit")
      ->check(CLI::IsMember({"virtual", "threads"}));
  cmd->add_option("--cost", a->cost, "unit: 1 per node; flops: estimated MFLOPs per node")
      ->check(CLI::IsMember({"unit", "flops"}));
  cmd->add_option("--unit-us", a->unit_us, "threads mode: microseconds per cost unit")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--queue-depth", a->queue_depth,
                  "Ring buffer entries between stages (rounded up to a power of two)")
      ->check(CLI::Range(1, 1 << 20));
  add_to(*cmd, a->report, {"table", "json"});
  cmd->add_option("--trace", a->trace,
                  "Write Chrome trace-event JSON (Perfetto, chrome://tracing)");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
