// simulate: run a sharded graph, in any format, through the pipeline
// emulator.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <string>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/metrics.hpp>
#include <shardpoint/runtime/pipeline.hpp>

#include "picture.hpp"
#include "training.hpp"

namespace shardpoint::app {

namespace {

// The checks every run makes: the command line makes them as it parses;
// the bindings come here.
void check_run(const simulate_request& a) {
  // The command line's own checks, in its words, for the callers that do
  // not parse a command line (Python, a program using app/).
  check_option(opt::mode, opt::mode.flag, a.mode);
  check_option(opt::run_cost, opt::run_cost.flag, a.cost);
  check_option(opt::batches_per_step, opt::batches_per_step.flag, a.batches_per_step);
  detail::check_picture_force(a.report, a.force);
  if (a.num_ipus) {
    check_option(opt::num_ipus, opt::num_ipus.flag, *a.num_ipus);
  }
  check_option(opt::unit_us, opt::unit_us.flag, a.unit_us);
  check_option(opt::queue_depth, opt::queue_depth.flag, a.queue_depth);
  detail::check_applicable(a);
}

} // namespace

namespace {

// The picture of a run of `source` (its stages) with the run's timeline
// (already in `out.picture`), written where the report asks.
void draw_run(model_source& source, const sharding_result& result, const simulate_request& a,
              const detail::picture_output& where, simulate_outcome& out) {
  detail::picture_inputs in;
  in.cost = a.cost == "flops" ? cost_model::flops : cost_model::unit;
  in.lay_out = a.report.lay_out;
  io::picture p = detail::picture_of(source, result, in);
  p.timeline = std::move(out.picture.timeline);
  p.memory_curve = std::move(out.picture.memory_curve);
  p.makespan = out.picture.makespan;
  p.time_unit = out.picture.time_unit;
  p.command = "simulate";
  p.title = a.report.title;
  detail::add_estimates(p, out.warnings);
  out.picture = std::move(p);
  detail::write_picture(out.picture, where, a.report, out.written);
}

// Forward passes through the Model Runtime's pipeline (virtual, or a thread
// a device): the metrics, the trace, the timeline.
simulate_outcome run_forward(const runtime::pipeline_plan& plan, const simulate_request& a,
                             const io::staged_file* trace, std::vector<std::string> warnings) {
  namespace rt = shardpoint::runtime;
  simulate_outcome out;
  const rt::session session(plan, rt::device_manager(plan.num_devices));
  rt::run_options run;
  run.micro_batches = a.batches_per_step;
  run.queue_depth = static_cast<std::size_t>(a.queue_depth);
  run.unit = std::chrono::microseconds(a.unit_us);
  const std::size_t items = plan.stages.size() * static_cast<std::size_t>(a.batches_per_step);
  run.keep_items = items <= rt::most_kept_items;
  if (trace != nullptr && !run.keep_items) {
    throw bad_parameter_error(
        shardpoint::detail::cat("--trace: ", plan.stages.size(), " stages x ", a.batches_per_step,
                                " micro-batches are more operations than a trace keeps (",
                                rt::most_kept_items, "); give fewer --batches-per-step"));
  }
  if (a.mode == "threads") { // the virtual run first: how long the threads would take
    detail::check_thread_seconds(session.run_virtual(run).makespan, a.unit_us);
  }
  const auto m = a.mode == "threads" ? session.run_threads(run) : session.run_virtual(run);
  if (trace != nullptr) {
    io::write_file_atomically(trace->staging(),
                              rt::chrome_trace(m, a.mode == "threads" ? a.unit_us : 1.0));
    out.written.push_back(a.trace);
  }
  if (a.report.picture()) {
    detail::add_timeline(out.picture, m);
    out.picture.notes.push_back(
        "Makespan " + shardpoint::detail::number(m.makespan) + " (analytic " +
        std::to_string(m.analytic_makespan) + "), bubble " +
        shardpoint::detail::number(100 * m.bubble_fraction) + "% of the devices' time, " +
        shardpoint::detail::number(m.throughput) + " micro-batches a unit.");
  } else {
    out.report = a.report.format == "json" ? io::to_json(m, warnings) : io::to_table(m, warnings);
  }
  out.warnings = std::move(warnings);
  return out;
}

} // namespace

simulate_outcome simulate(model_source& source, const points& where, const simulate_request& a) {
  namespace rt = shardpoint::runtime;
  check_run(a);
  if (!a.stage_times.empty() || !a.activation_bytes.empty()) {
    throw usage_error("stage times and activation bytes are for a run without a model");
  }
  io::output_set outputs;
  source.declare_inputs(outputs);
  if (!where.config.empty()) {
    outputs.input(where.config, "the sharding config");
  }
  const io::staged_file* trace = a.trace.empty() ? nullptr : &outputs.file(a.trace, "--trace");
  const detail::picture_output picture = detail::declare_picture(outputs, a.report, a.force);
  source.load(outputs);
  const sharding_result result = sharding_of(source, where);
  std::vector<std::string> warnings;
  const auto costs =
      source.costs(a.cost == "flops" ? cost_model::flops : cost_model::unit, warnings);
  if (a.cost == "flops") {
    if (auto e = rounding_estimate(source, costs, "and the stage times that much too long")) {
      warnings.push_back(std::move(*e));
    }
  }
  pipeline_options options;
  options.enable_pipelining = true;
  options.batches_per_step = a.batches_per_step;
  options.num_devices = a.num_ipus;
  options.spelling = flag_spelling;
  if (!a.schedule.empty()) {
    // A training schedule has its own rule for the micro-batches
    // (run_schedule's), not PopRT's multiple of the stages.
    options.batches_per_step = std::max(result.num_stages(), 1);
  }
  if (!result.has_stages()) { // the rule's words ("pipelining is enabled") name no flag typed here
    throw check_failed("cannot run as a pipeline: no node has a pipeline stage (simulate runs the "
                       "stages as a pipeline: give each point one, NODE=DEVICE:STAGE or the "
                       "config's stage)");
  }
  rt::pipeline_plan plan;
  try {
    plan = rt::make_plan(result, costs.data(), options);
  } catch (const rt::config_error& e) {
    throw check_failed(std::string("cannot run as a pipeline: ") + e.what());
  }
  // The rules on edges, which a plan of stages cannot see (a consumer in an
  // earlier stage than its producer would wait for data never sent).
  const auto found = source.validate(result, options);
  if (const auto* e = first_error(found)) {
    throw check_failed("cannot run as a pipeline: " + e->message);
  }
  simulate_outcome out;
  if (!a.schedule.empty()) {
    detail::check_placement(plan, a);
    std::vector<std::string> notes; // what the bytes assume: the memory report's
    const auto activations = source.activations(a.micro_batch_size, notes, warnings);
    // The costs count the batch the model holds, the activations a
    // micro-batch: said when they differ (a trial's --dim N=8 ran stage
    // times of 8 samples beside activations of one, unsaid).
    const auto held = source.measured_batch();
    const std::int64_t costed = held ? held->size : 1;
    if (costed != a.micro_batch_size) {
      warnings.push_back(shardpoint::detail::cat(
          "the stage times count ",
          held ? shardpoint::detail::cat(held->size, " samples (", held->where, ")")
               : std::string("one sample (the model's batch is free or 1)"),
          ", the activations ", a.micro_batch_size,
          " (--micro-batch-size): give both the same batch (the model's with --dim or "
          "--input-shape)"));
    }
    auto stages = detail::training_stages(plan, result, source.graph(), activations, a);
    out = detail::run_training(std::move(stages), a, trace, std::move(warnings));
  } else {
    out = run_forward(plan, a, trace, std::move(warnings));
  }
  if (a.report.picture()) {
    draw_run(source, result, a, picture, out);
  }
  outputs.commit();
  return out;
}

simulate_outcome simulate_times(const simulate_request& a) {
  check_run(a);
  if (a.schedule.empty()) {
    throw usage_error("stage times need a training schedule (--schedule)");
  }
  static const simulate_request defaults;
  if (a.cost != defaults.cost) {
    throw usage_error("--cost prices a model's nodes; --stage-times gives the times");
  }
  auto stages = detail::given_stages(a);
  // The devices the schedule runs on, against those available, as a
  // model's sharding is checked.
  const auto devices = stages.size() / static_cast<std::size_t>(std::max(a.virtual_stages, 1));
  if (a.num_ipus && devices > static_cast<std::size_t>(*a.num_ipus)) {
    throw check_failed("the schedule runs " + std::to_string(stages.size()) + " stages on " +
                       std::to_string(devices) + " devices but --num-ipus is " +
                       std::to_string(*a.num_ipus));
  }
  io::output_set outputs;
  const io::staged_file* trace = a.trace.empty() ? nullptr : &outputs.file(a.trace, "--trace");
  const detail::picture_output picture = detail::declare_picture(outputs, a.report, a.force);
  simulate_outcome out = detail::run_training(std::move(stages), a, trace, {});
  if (a.report.picture()) {
    out.picture.command = "simulate";
    out.picture.title = a.report.title.empty() ? "stage times" : a.report.title;
    detail::write_picture(out.picture, picture, a.report, out.written);
  }
  outputs.commit();
  return out;
}

} // namespace shardpoint::app
