// simulate: run a sharded graph, in any format, through the pipeline
// emulator.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/metrics.hpp>
#include <shardpoint/runtime/pipeline.hpp>

namespace shardpoint::app {

simulate_outcome simulate(model_source& source, const points& where, const simulate_request& a) {
  namespace rt = shardpoint::runtime;
  // The command line checks these as it parses; the bindings come here.
  if (a.mode != "virtual" && a.mode != "threads") {
    throw bad_parameter_error("mode " + io::quote(a.mode) + " is not virtual or threads");
  }
  if (a.cost != "unit" && a.cost != "flops") {
    throw bad_parameter_error("cost " + io::quote(a.cost) + " is not unit or flops");
  }
  // The command line's own checks (device_count, batch_count), for the
  // callers that do not parse a command line (Python).
  if (a.batches_per_step < 1 || a.batches_per_step > max_batches) {
    throw bad_parameter_error("batches per step must be in [1, " + std::to_string(max_batches) +
                              "], not " + std::to_string(a.batches_per_step));
  }
  if (a.num_ipus && (*a.num_ipus < 1 || *a.num_ipus > max_devices)) {
    throw bad_parameter_error("the number of devices must be in [1, " +
                              std::to_string(max_devices) + "], not " +
                              std::to_string(*a.num_ipus));
  }
  if (a.unit_us < 1 || a.unit_us > 10'000'000 || a.queue_depth < 1 || a.queue_depth > (1 << 20)) {
    throw bad_parameter_error("unit_us must be in [1, 10000000] and queue_depth in [1, 1048576]");
  }
  io::output_set outputs;
  source.declare_inputs(outputs);
  if (!where.config.empty()) {
    outputs.input(where.config, "the sharding config");
  }
  const io::staged_file* trace = a.trace.empty() ? nullptr : &outputs.file(a.trace, "--trace");
  source.load(outputs);
  const sharding_result result = sharding_of(source, where);
  simulate_outcome out;
  const auto costs =
      source.costs(a.cost == "flops" ? cost_model::flops : cost_model::unit, out.warnings);
  pipeline_options options;
  options.enable_pipelining = true;
  options.batches_per_step = a.batches_per_step;
  options.num_devices = a.num_ipus;
  options.spelling = flag_spelling;
  rt::pipeline_plan plan;
  try {
    plan = rt::make_plan(result, costs.data(), options);
  } catch (const rt::config_error& e) {
    throw check_failed(std::string("cannot run as a pipeline: ") + e.what());
  }
  const rt::session session(plan, rt::device_manager(plan.num_devices));
  rt::run_options run;
  run.micro_batches = a.batches_per_step;
  run.queue_depth = static_cast<std::size_t>(a.queue_depth);
  run.unit = std::chrono::microseconds(a.unit_us);
  run.keep_items = plan.stages.size() * static_cast<std::size_t>(a.batches_per_step) <= 4'000'000;
  const auto m = a.mode == "threads" ? session.run_threads(run) : session.run_virtual(run);
  if (trace != nullptr) {
    io::write_file_atomically(trace->staging(),
                              rt::chrome_trace(m, a.mode == "threads" ? a.unit_us : 1.0));
    outputs.commit();
  }
  out.report =
      a.report.format == "json" ? io::to_json(m, out.warnings) : io::to_table(m, out.warnings);
  return out;
}

} // namespace shardpoint::app
