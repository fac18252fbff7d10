// A training step through a pipeline schedule (runtime/schedules.hpp), for
// `simulate --schedule`: from a sharded model's stages or from plain stage
// times. Internal to app_core (simulate.cpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROCEDURE
//
//   1. Stage times: forward = the stage's cost (the model's costs, as the
//      forward emulator uses them, or the given times); backward =
//      backward_ratio x forward, of which weight_share is the weight
//      gradient (zb-h1 runs it as W) -- or, measured, backward_times and
//      weight_times, one a stage. Activation bytes a micro-batch: as the
//      memory planner counts a training stage's (stage_memory_inputs), what
//      its nodes output for micro_batch_size samples (the model's
//      activations()) and what it reads of other stages' nodes, or the given
//      bytes; with recomputation, only what it reads.
//   2. Placement: S stages, v virtual stages a device: p = S / v devices,
//      stage s on device s mod p. A model's own devices must say the same
//      (stage s on the device of stage s mod p, the first p on p different
//      devices), else check_failed naming the stage.
//   3. Run: run_schedule (virtual) or run_schedule_threads (threads, a
//      unit of unit_us); report (io::training_run) and Chrome trace.
#ifndef SHARDPOINT_APP_CORE_TRAINING_HPP
#define SHARDPOINT_APP_CORE_TRAINING_HPP

#include <cstdint>
#include <vector>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/metrics.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/runtime/plan.hpp>
#include <shardpoint/runtime/schedules.hpp>

namespace shardpoint::app::detail {

/// Refuses (usage_error) an option of the other kind of run, which would be
/// silently ignored: a training option without a schedule, the forward
/// queue's depth with one, zb-h1's weight split with another schedule,
/// --unit-us outside threads mode. A value equal to its default cannot be
/// told from none given. simulate's and draw's.
void check_applicable(const simulate_request& a);

/// The stage times of `plan` (step 1), activation bytes from `activations`
/// (a node's, for a micro-batch) as `result` stages the nodes of `graph`.
std::vector<runtime::stage_times> training_stages(const runtime::pipeline_plan& plan,
                                                  const sharding_result& result,
                                                  const model_source::graph_type& graph,
                                                  const std::vector<std::int64_t>& activations,
                                                  const simulate_request& a);

/// Step 1 without a model: the request's stage_times and activation_bytes;
/// bad_parameter_error for counts or values out of range.
std::vector<runtime::stage_times> given_stages(const simulate_request& a);

/// Step 2 for a model: check_failed when its devices are not the
/// schedule's.
void check_placement(const runtime::pipeline_plan& plan, const simulate_request& a);

/// The run `a` asks of `stages`, checked and with the measured times
/// applied, not yet run.
io::training_run prepared_run(std::vector<runtime::stage_times> stages, const simulate_request& a);

/// Step 3: runs `stages` as `a` asks, writes the trace to `trace` (a
/// staged file, or none) and renders the report (or, for a
/// picture, the outcome's timeline). The caller commits `outputs`.
simulate_outcome run_training(std::vector<runtime::stage_times> stages, const simulate_request& a,
                              const io::staged_file* trace, std::vector<std::string> warnings);

/// Refuses a threaded run that would take more than 10 minutes of real
/// time: `makespan` cost units (the virtual run's) of `unit_us` each.
void check_thread_seconds(double makespan, int unit_us);

} // namespace shardpoint::app::detail

#endif // SHARDPOINT_APP_CORE_TRAINING_HPP
