// draw: a sharded graph, in any format, as a picture -- where the split is,
// what each stage costs and holds, what crosses, how the pipeline runs.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROCEDURE
//
//   1. Declare the inputs and the output (a page, or a new folder of SVGs),
//      then read the model and its sharding (points, or its own).
//   2. The memory planner's report for that sharding, as `memory` gives it
//      with the same options (training, fp16 and Adam unless told; with a
//      schedule, its schedule and micro-batches where the planner has them),
//      and the capacity line from --device-memory. A node without a stage
//      (the model's own sharding may leave some out; validate lets it)
//      leaves the memory bars out, with a note saying why.
//   3. picture_of (picture.hpp): blocks, crossings, stage bars, every node.
//   4. The timeline: the emulator's virtual run of `batches_per_step`
//      micro-batches (twice the stages unless told) with the same costs,
//      forward passes or a training schedule's; a sharding that cannot run
//      as a pipeline gets a note instead of a timeline.
//   5. PopRT's rules (validate, pipelining on when there are stages): the
//      findings on the page and in the outcome, which draws regardless.
//      Every guess, once, on the page and in the outcome's warnings; write,
//      commit.
#include <cstddef>
#include <utility>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>

#include "picture.hpp"
#include "training.hpp"

namespace shardpoint::app {

namespace {

void check_request(const draw_request& a) {
  if (a.report.format != "html" && a.report.format != "svg" && a.report.format != "picture") {
    throw bad_parameter_error("format " + io::quote(a.report.format) + " is not html or svg");
  }
  if (a.batches_per_step < 0 || a.batches_per_step > max_batches) {
    throw bad_parameter_error("batches per step must be 0 (twice the stages) or in [1, " +
                              std::to_string(max_batches) + "], not " +
                              std::to_string(a.batches_per_step));
  }
  if (a.report.format != "picture" && a.report.file.empty()) {
    throw usage_error("--output needs a file name (html) or a folder name (svg)");
  }
}

// Why the memory planner has no bars for the timeline's schedule, when it
// has none: it plans GPipe and 1F1B (ZB-H1 as 1F1B, planned()), not the
// interleaved schedule's virtual stages (a trial's page drew GPipe's bars,
// every micro-batch in flight, beside an interleaved timeline).
std::optional<std::string> unplanned_schedule(const draw_request& a) {
  if (a.plan.inference || a.schedule != "interleaved") {
    return std::nullopt;
  }
  return std::string("memory plans gpipe, 1f1b and zb-h1's activations, not the interleaved "
                     "schedule's; the timeline's curve shows what each device holds");
}

// The memory planner's options for a step of `stages` stages: the request's,
// with the timeline's schedule and micro-batches where the planner has
// them, so that the bars and the timeline count the same activations.
memory_flags planned(const draw_request& a, int stages) {
  memory_flags f = a.plan;
  if (f.inference) {
    return f; // the bars of inference: no training schedule's activations
  }
  if (a.schedule == "gpipe" || a.schedule == "1f1b" || a.schedule == "zb-h1") {
    f.schedule = a.schedule; // (ZB-H1's are 1F1B's: memory/config.hpp)
  }
  // The micro-batches of a step: the schedule's, or those given (a trial's
  // --batches-per-step 8 without a schedule left the bars at memory's 1).
  if (!a.schedule.empty() || a.batches_per_step > 0) {
    f.batches_per_step =
        std::to_string(a.batches_per_step > 0 ? a.batches_per_step : 2 * std::max(stages, 1));
  }
  return f;
}

// The nodes without a stage in a sharding with stages (a model's own
// attributes may leave some out, and validate lets them be): how many, and
// the first.
std::pair<std::size_t, std::size_t> unstaged(const sharding_result& r) {
  std::size_t count = 0;
  std::size_t first = 0;
  for (std::size_t v = 0; r.has_stages() && v < r.size(); ++v) {
    if (!r.stage(v)) {
      first = count++ == 0 ? v : first;
    }
  }
  return {count, first};
}

} // namespace

draw_outcome draw(model_source& source, const points& where, const draw_request& a) {
  check_request(a);
  const cost_model cost = cost_named(a.cost);
  parallel_config c = a.plan.config();
  std::optional<std::int64_t> capacity;
  if (!a.device_memory.empty()) {
    capacity = io::parse_capacity("--device-memory", a.device_memory);
  }
  if (a.plan.automatic()) {
    throw usage_error("draw plans memory at a given sharded data parallel degree, not auto");
  }
  check_memory_rules(c, 1);
  // The timeline's run: its training options need a schedule, as simulate's.
  simulate_request run;
  static_cast<schedule_flags&>(run) = a;
  run.batches_per_step = a.batches_per_step;
  detail::check_applicable(run);
  // Step 1.
  io::output_set outputs;
  source.declare_inputs(outputs);
  if (!where.config.empty()) {
    outputs.input(where.config, "the sharding config");
  }
  if (!a.plan.layout.empty()) {
    outputs.input(a.plan.layout, "the layout file");
  }
  detail::picture_output output;
  if (!a.report.file.empty()) {
    output = detail::declare_picture(outputs, a.report, a.force, "--output");
  }
  source.load(outputs);
  const sharding_result result = sharding_of(source, where, true);
  // Step 2 (none when a node has no stage: the planner counts by stage).
  const memory_flags flags = planned(a, result.num_stages());
  c = flags.config();
  io::memory_report memory;
  const auto [without_stage, first_without] = unstaged(result);
  std::optional<std::string> unplannable = unplanned_schedule(a);
  if (without_stage == 0 && !unplannable) {
    const auto stages = detail::stage_inputs(source, result, flags, c, memory);
    unplannable = shardpoint::unplannable_schedule(stages, c);
    if (!unplannable) {
      memory.plan = shardpoint::plan_memory(stages, c, capacity);
    }
  }
  // Steps 3 and 4.
  draw_outcome out;
  detail::picture_inputs in;
  in.cost = cost;
  in.rounding_then = "and the stages' costs that much too large"; // (a trial's: unsaid)
  in.memory = without_stage == 0 && !unplannable ? &memory : nullptr;
  in.capacity = capacity ? std::optional<double>(*capacity) : std::nullopt;
  in.lay_out = a.report.lay_out;
  in.most_nodes_drawn = a.most_nodes_drawn;
  out.picture = detail::picture_of(source, result, in);
  if (result.num_devices() == 0 && result.num_stages() == 0) { // (a trial's: drawn unsaid)
    out.picture.notes.emplace_back("the model has no sharding (no --shard, no "
                                   "--manual-sharding-config, no sharding attributes of its "
                                   "own): drawn as one stage on one device");
  }
  if (unplannable) { // drawn, as every sharding is; the bars are memory's
    out.picture.notes.push_back("No memory bars: " + *unplannable +
                                (unplanned_schedule(a) ? "." : " (memory refuses it)."));
  }
  if (without_stage > 0) {
    out.picture.notes.push_back(shardpoint::detail::cat(
        "No memory bars: ", without_stage,
        " node(s) have no stage (the first: ", io::quote(source.names()[first_without]),
        "), and the memory planner counts a device's bytes by its stages."));
  }
  run.micro_batch_size = c.micro_batch_size; // the memory plan's, for the bars too
  detail::add_run(out.picture, source, result, cost, run);
  pipeline_options checks; // as simulate runs the timeline: PopRT's rules with pipelining
  checks.enable_pipelining = result.has_stages();
  const int staged = std::max(result.num_stages(), 1);
  checks.batches_per_step = !a.schedule.empty()      ? staged // the schedule's own rule
                            : a.batches_per_step > 0 ? a.batches_per_step
                                                     : 2 * staged;
  checks.spelling = flag_spelling;
  out.diagnostics = source.validate(result, checks);
  // Every note, said as well as drawn: SVG files have no place for them (a
  // trial's folder lacked its timeline.svg, unsaid). The findings are
  // printed as findings.
  out.notes = out.picture.notes;
  detail::add_findings(out.picture, out.diagnostics);
  // Step 5.
  out.picture.command = "draw";
  out.picture.title = a.report.title;
  detail::add_estimates(out.picture, memory.estimates);
  out.warnings = out.picture.estimates;
  if (!a.report.file.empty()) {
    detail::write_picture(out.picture, output, a.report, out.written);
    outputs.commit();
  }
  return out;
}

} // namespace shardpoint::app
