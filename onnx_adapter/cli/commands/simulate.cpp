// shardpoint simulate: run a sharded model through the pipeline emulator.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <shardpoint/io/text.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

// The comma-separated lists, as typed: CLI11 would drop an empty element
// ("1,,2", "1,2,") where a user has most likely lost a number.
struct lists {
  std::string stage_times, activation_bytes, backward_times, weight_times;
};

// `text` split at commas, each element a number; bad_parameter_error naming
// `flag` for an empty element or one that is not a number.
template <class T>
std::vector<T> numbers(const char* flag, const std::string& text) {
  std::vector<T> out;
  if (text.empty()) {
    return out;
  }
  std::size_t from = 0;
  while (true) {
    const auto to = std::min(text.find(',', from), text.size());
    const std::string item = text.substr(from, to - from);
    T value{};
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      throw bad_parameter_error(
          std::string(flag) + ": " +
          (item.empty() ? std::string("an empty value") : io::quote(item) + " is not a number") +
          " in " + io::quote(text));
    }
    out.push_back(value);
    if (to == text.size()) {
      return out;
    }
    from = to + 1;
  }
}

int run(simulate_options& a, const lists& l) {
  a.stage_times = numbers<double>("--stage-times", l.stage_times);
  a.activation_bytes = numbers<std::int64_t>("--activation-bytes", l.activation_bytes);
  a.backward_times = numbers<double>("--backward-times", l.backward_times);
  a.weight_times = numbers<double>("--weight-times", l.weight_times);
  const auto r = simulate_model(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  print_written(r.written);
  return exit_ok;
}

} // namespace

action add_simulate(CLI::App& app) {
  auto a = std::make_shared<simulate_options>();
  auto l = std::make_shared<lists>();
  auto* cmd = app.add_subcommand(
      "simulate", "Emulate the pipelined execution of a sharded model (virtual or threads mode)");
  add_to(*cmd, a->model, "Model to shard and run (or give --stage-times)", false);
  add_to(*cmd, a->shapes);
  cmd->add_option(
         "--batches-per-step,--batches_per_step", a->batches_per_step,
         "Micro-batches to run (a multiple of the stages; with --schedule, the schedule's rule)")
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
  add_to(*cmd, a->report, planning_reports,
         "Report: table, json, or a picture (html, svg) to --report-file");
  cmd->add_option("--trace", a->trace,
                  "Write Chrome trace-event JSON (Perfetto, chrome://tracing)");
  auto* t = cmd->add_option_group("training step", "A training schedule's forward and backward "
                                                   "passes instead of forward passes");
  t->add_option("--schedule", a->schedule, "gpipe, 1f1b, interleaved or zb-h1 (zero-bubble H1)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1"}));
  t->add_option("--virtual-stages", a->virtual_stages,
                "v: the stages are virtual stages, stage s on device s mod (stages / v) "
                "(interleaved)")
      ->check(CLI::Range(1, 4096));
  auto* ratio = t->add_option("--backward-ratio", a->backward_ratio,
                              "A stage's backward time in forward times (default 2)")
                    ->check(CLI::Range(0.0, 1e6));
  auto* share = t->add_option("--weight-share", a->weight_share,
                              "zb-h1: the weight gradient's part of the backward (default 0.5)")
                    ->check(CLI::Range(0.0, 1.0));
  t->add_option("--backward-times", l->backward_times,
                "Measured backward times, one a stage (instead of --backward-ratio)")
      ->excludes(ratio);
  t->add_option("--weight-times", l->weight_times,
                "Measured weight-gradient times, one a stage, each part of its backward "
                "(zb-h1's W; instead of --weight-share)")
      ->excludes(share);
  t->add_flag("--recompute", a->recompute,
              "Backwards recompute their forward; a stage holds only its inputs");
  t->add_option("--micro-batch-size", a->micro_batch_size,
                "Samples a micro-batch, for the activation bytes (default 1)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 31));
  t->add_option("--batch-dim", a->batch_dim,
                "Where the model's batch is, for the activations: a symbolic dimension's name or "
                "INPUT:AXIS (default: found by name)");
  t->add_option("--stage-times", l->stage_times,
                "Without a model: each stage's forward time, e.g. 1,1,2,1");
  t->add_option("--activation-bytes", l->activation_bytes,
                "With --stage-times: a stage's activation bytes a micro-batch (one value, or "
                "one a stage)");
  return [a, l] { return run(*a, *l); };
}

} // namespace shardpoint::cli
