// A training step through a pipeline schedule: training.hpp's procedure.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include "training.hpp"
#include "picture.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/app/errors.hpp>
#include <shardpoint/app/option_schema.hpp>
#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/metrics.hpp>
#include <shardpoint/memory_plan.hpp>
#include <shardpoint/runtime/trace.hpp>

namespace shardpoint::app::detail {

namespace {

using shardpoint::detail::cat;

// Operations kept for the report and the trace: 3 x stages x micro-batches
// of them; beyond this product a run is refused rather than run out of
// memory.
constexpr std::int64_t max_stage_batches = 4'000'000;

// The longest threaded run started, in seconds of real time.
constexpr int max_thread_seconds = 600;

// The request's own numbers, for the callers that do not parse a command
// line (Python) and for what a command line cannot check alone.
void check_request(const simulate_request& a, std::size_t stages) {
  // The command line's ranges, in its words (option_schema.hpp).
  check_option(opt::virtual_stages, opt::virtual_stages.flag, a.virtual_stages);
  check_option(opt::backward_ratio, opt::backward_ratio.flag, a.backward_ratio);
  check_option(opt::weight_share, opt::weight_share.flag, a.weight_share);
  check_option(opt::micro_batch_size, opt::micro_batch_size.flag,
               static_cast<double>(a.micro_batch_size));
  if (static_cast<std::int64_t>(stages) * a.batches_per_step > max_stage_batches) {
    throw bad_parameter_error(cat(stages, " stages x ", a.batches_per_step,
                                  " micro-batches is more than a training schedule runs (",
                                  max_stage_batches, " stage micro-batches)"));
  }
  if (a.schedule == "interleaved" && a.virtual_stages < 2) {
    throw bad_parameter_error("the interleaved schedule needs --virtual-stages of at least 2 "
                              "(Megatron-LM interleaves only then; with 1, use 1f1b)");
  }
  if (stages % static_cast<std::size_t>(a.virtual_stages) != 0) {
    throw check_failed(cat(stages, " stages are not ", a.virtual_stages,
                           " virtual stages a device: the stages must be a multiple of them"));
  }
}

runtime::stage_times times_of(double forward, const simulate_request& a) {
  runtime::stage_times t;
  t.forward = forward;
  t.backward = forward * a.backward_ratio;
  t.weight_share = a.weight_share;
  return t;
}

} // namespace

void check_thread_seconds(double makespan, int unit_us) {
  const double seconds = makespan * static_cast<double>(unit_us) / 1e6;
  if (seconds > max_thread_seconds) {
    throw bad_parameter_error(cat("the threaded run would take ",
                                  shardpoint::detail::number(seconds), " s, more than ",
                                  max_thread_seconds, ": lower --unit-us or the times"));
  }
}

std::vector<runtime::stage_times> training_stages(const runtime::pipeline_plan& plan,
                                                  const sharding_result& result,
                                                  const model_source::graph_type& graph,
                                                  const std::vector<std::int64_t>& activations,
                                                  const simulate_request& a) {
  std::vector<runtime::stage_times> stages;
  for (const auto& s : plan.stages) {
    stages.push_back(times_of(static_cast<double>(s.cost), a));
  }
  // What a stage's nodes output and what it reads of other stages' nodes,
  // each producer once: the memory planner's activations of a stage.
  parameter_uses none;
  none.used.resize(result.size());
  const auto held = stage_memory_inputs(
      graph, result, none,
      boost::make_iterator_property_map(activations.begin(), get(boost::vertex_index, graph)));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto produced = static_cast<std::uint64_t>(held[s].produced_bytes);
    const auto received = static_cast<std::uint64_t>(held[s].received_bytes);
    stages[s].activation_bytes = produced + received;
    stages[s].input_bytes = received;
  }
  return stages;
}

std::vector<runtime::stage_times> given_stages(const simulate_request& a) {
  const auto S = a.stage_times.size();
  if (S < 1 || S > 4096) {
    throw bad_parameter_error(cat("--stage-times: give 1 to 4096 stage times, not ", S));
  }
  if (a.activation_bytes.size() > 1 && a.activation_bytes.size() != S) {
    throw bad_parameter_error(cat("--activation-bytes: ", a.activation_bytes.size(),
                                  " activation sizes for ", S,
                                  " stages: give one, or one a stage"));
  }
  std::vector<runtime::stage_times> stages;
  for (std::size_t s = 0; s < S; ++s) {
    const double f = a.stage_times[s];
    if (!std::isfinite(f) || f < 0 || f > 1e12) {
      throw bad_parameter_error(cat("--stage-times: stage ", s,
                                    "'s time must be in [0, 1e12], not ",
                                    shardpoint::detail::number(f)));
    }
    auto t = times_of(f, a);
    if (!a.activation_bytes.empty()) {
      const auto b = a.activation_bytes[a.activation_bytes.size() == 1 ? 0 : s];
      if (b < 0 || b > (std::int64_t{1} << 40)) {
        throw bad_parameter_error(
            cat("--activation-bytes: stage ", s, "'s bytes must be in [0, 2^40], not ", b));
      }
      // Given bytes are all a stage holds, with or without recomputation.
      t.activation_bytes = t.input_bytes = static_cast<std::uint64_t>(b);
    }
    stages.push_back(t);
  }
  return stages;
}

void check_placement(const runtime::pipeline_plan& plan, const simulate_request& a) {
  const auto S = plan.stages.size();
  check_request(a, S);
  const auto p = S / static_cast<std::size_t>(a.virtual_stages);
  for (std::size_t s = 0; s < p; ++s) {
    for (std::size_t t = 0; t < s; ++t) {
      if (plan.stages[t].device == plan.stages[s].device) {
        // (--virtual-stages is only the interleaved schedule's: a trial
        // pointed to it from gpipe, which refuses it.)
        throw check_failed(cat("stages ", t, " and ", s, " share device ", plan.stages[s].device,
                               ": the ", a.schedule, " schedule runs ",
                               a.virtual_stages > 1
                                   ? cat("the first ", p, " stages on ", p, " devices")
                                   : std::string("each stage on a device of its own"),
                               a.schedule == "interleaved"
                                   ? " (see --virtual-stages)"
                                   : "; give each stage its own device, or run stages that "
                                     "share devices as --schedule interleaved --virtual-stages "
                                     "V"));
      }
    }
  }
  for (std::size_t s = p; s < S; ++s) {
    const auto& first = plan.stages[s % p];
    if (plan.stages[s].device != first.device) {
      throw check_failed(cat("stage ", s, " is on device ", plan.stages[s].device, ", but with ",
                             a.virtual_stages, " virtual stages a device it runs on stage ", s % p,
                             "'s device (", first.device, ")"));
    }
  }
}

namespace {

// The measured backward and weight-gradient times over the ratio's.
void apply_measured(std::vector<runtime::stage_times>& stages, const simulate_request& a) {
  const auto S = stages.size();
  for (const auto& [flag, times] : {std::pair{"--backward-times", &a.backward_times},
                                    std::pair{"--weight-times", &a.weight_times}}) {
    if (!times->empty() && times->size() != S) {
      throw bad_parameter_error(
          cat(flag, " gives ", times->size(), " times for ", S, " stages: give one a stage"));
    }
    for (std::size_t s = 0; s < times->size(); ++s) {
      const double t = (*times)[s];
      if (!std::isfinite(t) || t < 0 || t > 1e12) {
        throw bad_parameter_error(cat(flag, ": stage ", s, "'s time must be in [0, 1e12], not ",
                                      shardpoint::detail::number(t)));
      }
    }
  }
  for (std::size_t s = 0; s < a.backward_times.size(); ++s) {
    stages[s].backward = a.backward_times[s];
  }
  for (std::size_t s = 0; s < a.weight_times.size(); ++s) {
    const double w = a.weight_times[s];
    if (w > stages[s].backward) {
      throw bad_parameter_error(cat(
          "--weight-times: stage ", s, "'s weight gradient (", shardpoint::detail::number(w),
          ") is longer than its backward (", shardpoint::detail::number(stages[s].backward), ")"));
    }
    stages[s].weight_share = stages[s].backward > 0 ? w / stages[s].backward : 0;
  }
}

} // namespace

io::training_run prepared_run(std::vector<runtime::stage_times> stages, const simulate_request& a) {
  check_request(a, stages.size());
  apply_measured(stages, a);
  io::training_run run;
  run.schedule = a.schedule;
  run.mode = a.mode;
  run.options.kind = runtime::schedule_named(a.schedule);
  run.options.virtual_stages = a.virtual_stages;
  run.options.devices = static_cast<int>(stages.size()) / a.virtual_stages;
  run.options.micro_batches = a.batches_per_step;
  run.options.recompute = a.recompute;
  run.stages = std::move(stages);
  return run;
}

simulate_outcome run_training(std::vector<runtime::stage_times> stages, const simulate_request& a,
                              const io::staged_file* trace, std::vector<std::string> warnings) {
  io::training_run run = prepared_run(std::move(stages), a);
  if (a.mode == "threads") {
    // The virtual run first: how long the threads would take.
    check_thread_seconds(runtime::run_schedule(run.stages, run.options).makespan, a.unit_us);
    const auto t0 = std::chrono::steady_clock::now();
    run.result = runtime::run_schedule_threads(run.stages, run.options,
                                               std::chrono::microseconds(a.unit_us));
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    run.result = runtime::run_schedule(run.stages, run.options);
  }
  simulate_outcome out;
  if (trace != nullptr) {
    io::write_file_atomically(trace->staging(),
                              runtime::chrome_trace(run.result, run.options.devices,
                                                    a.mode == "threads" ? a.unit_us : 1.0));
    out.written.push_back(a.trace);
  }
  if (a.report.picture()) {
    add_timeline(out.picture, run.result, run.stages, a.recompute);
    double bubble = 0;
    for (const double b : run.result.bubble) {
      bubble += b / static_cast<double>(std::max<std::size_t>(run.result.bubble.size(), 1));
    }
    char mean[32]; // one decimal, as the table's bubble (a trial's page read 27.2727272727273%)
    std::snprintf(mean, sizeof mean, "%.1f%%", 100 * bubble);
    out.picture.notes.push_back(cat("Schedule ", a.schedule, ": makespan ",
                                    shardpoint::detail::plain_number(run.result.makespan),
                                    ", mean bubble ", mean, " of a device's time."));
    out.picture.time_unit =
        a.mode == "threads" ? "units of " + std::to_string(a.unit_us) + " us" : "time units";
  } else {
    out.report =
        a.report.format == "json" ? io::to_json(run, warnings) : io::to_table(run, warnings);
  }
  out.warnings = std::move(warnings);
  return out;
}

void check_applicable(const simulate_request& a) {
  const simulate_request plain;
  if (a.schedule.empty()) {
    for (const auto& [given, o] :
         {std::pair{a.virtual_stages != plain.virtual_stages, opt::virtual_stages},
          std::pair{a.backward_ratio != plain.backward_ratio, opt::backward_ratio},
          std::pair{a.weight_share != plain.weight_share, opt::weight_share},
          std::pair{!a.backward_times.empty(), opt::backward_times},
          std::pair{!a.weight_times.empty(), opt::weight_times},
          std::pair{a.recompute, opt::recompute},
          std::pair{a.micro_batch_size != plain.micro_batch_size, opt::micro_batch_size}}) {
      if (given) {
        throw usage_error(std::string(o.flag) +
                          " describes a training step; give --schedule (or drop it)");
      }
    }
  } else if (a.queue_depth != plain.queue_depth) {
    throw usage_error("--queue-depth is for forward passes (the entries queued between "
                      "stages); a training schedule has its own micro-batches in flight");
  } else if (a.schedule != "interleaved" && a.virtual_stages != plain.virtual_stages) {
    throw usage_error("--virtual-stages puts several stages on a device, which only the "
                      "interleaved schedule runs; give --schedule interleaved (or drop it)");
  } else if (a.schedule != "zb-h1" &&
             (a.weight_share != plain.weight_share || !a.weight_times.empty())) {
    throw usage_error(std::string(a.weight_times.empty() ? "--weight-share" : "--weight-times") +
                      " splits the weight gradient from the backward, which only zb-h1 "
                      "schedules apart; give --schedule zb-h1 (or drop it)");
  }
  if (a.mode != "threads" && a.unit_us != plain.unit_us) {
    throw usage_error("--unit-us is the length of a cost unit in --mode threads; the virtual "
                      "mode counts in cost units");
  }
}

} // namespace shardpoint::app::detail
