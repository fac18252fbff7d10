// The pictures of the planning commands (io/picture.hpp): a sharded graph's
// blocks, crossings and stage bars, a run's timeline, and the output that
// holds them. Internal to app_core (draw.cpp, suggest.cpp, simulate.cpp,
// memory.cpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROCEDURE (picture_of)
//
//   1. Lay the nodes out with producers late (laid_out.hpp), as suggest
//      does; a block is a maximal run of consecutive positions in one stage,
//      with its node count, cost, op types and the bytes of the weights its
//      nodes read (each weight once a block).
//   2. A crossing is every (producer block, consumer block) pair of
//      different blocks joined by an edge, with the output bytes of each
//      producer counted once a consumer block: what evaluate() counts as
//      received, split by where it comes from.
//   3. The stage bars are evaluate()'s figures for the sharding (cost,
//      parameter bytes -- each weight once a stage --, received bytes, lower
//      bound, bottleneck: the same numbers `suggest --report json` gives for
//      a split) and, when a memory report is given, its largest device per
//      stage (total and activation bytes: `memory --report json`'s).
//   4. The node graph, when the request lays nodes out and the graph has at
//      most `most_nodes_drawn` nodes: every node coloured by its stage.
//   O(V + E) but for the layout engine's own time.
#ifndef SHARDPOINT_APP_CORE_PICTURE_HPP
#define SHARDPOINT_APP_CORE_PICTURE_HPP

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/memory_report.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/io/picture.hpp>
#include <shardpoint/runtime/metrics.hpp>
#include <shardpoint/runtime/schedules.hpp>

namespace shardpoint::app::detail {

struct picture_inputs {
  cost_model cost = cost_model::flops;
  /// Stage memory (the planner's report for the same sharding), when drawn.
  const io::memory_report* memory = nullptr;
  /// The memory bars' capacity line.
  std::optional<double> capacity;
  /// Above 0, the stage bars and the bottleneck are loads, cost + this much
  /// a byte received (evaluate's), as `suggest --communication-weight`
  /// balances them.
  double communication_weight = 0;
  node_layout lay_out = nullptr;
  std::size_t most_nodes_drawn = 5000;
  /// When the costs are FLOPs, the end of rounding_estimate's sentence, for
  /// a command whose own report does not say it already (draw); empty:
  /// not said.
  std::string_view rounding_then;
};

/// Steps 1-4 for a loaded `source` sharded by `r` (indexed by node; a
/// sharding of nothing is one stage).
io::picture picture_of(model_source& source, const sharding_result& r, const picture_inputs& in);

/// The memory planner's report of `source` sharded by `result` as `flags`
/// configure it (`c`: their configuration), as `memory` plans it
/// (memory.cpp): its stages' inputs, with its notes and estimates in `r`.
std::vector<stage_memory_input> stage_inputs(model_source& source, const sharding_result& result,
                                             const memory_flags& flags, const parallel_config& c,
                                             io::memory_report& r);

/// `stages` (stage_memory_inputs of `result`) with each column layer's
/// outputs held in parts over `T` tensor-parallel ranks, ⌈bytes / T⌉ a
/// rank (`held`: tensor_parallel_outputs; empty when T is 1); what a stage
/// receives from another stays whole, as plan counts it. `result`, `held`
/// and `produced` index the vertices alike. memory's rule, which suggest's
/// figure of memory's result keeps too.
void hold_column_outputs(std::vector<stage_memory_input>& stages, const sharding_result& result,
                         const std::vector<tp_output>& held,
                         const std::vector<std::int64_t>& produced, std::int64_t T);

/// A command whose only folder is its picture's (memory, simulate):
/// usage_error for a `force` without --report svg, as nothing else could
/// be replaced.
void check_picture_force(const report_flag& report, bool force);

/// Validation findings as the picture's notes, one a finding.
void add_findings(io::picture& p, const std::vector<diagnostic>& found);

/// `more` added to the picture's estimates, each sentence once.
void add_estimates(io::picture& p, const std::vector<std::string>& more);

/// What a cost unit is, in words, for a source and a cost model.
std::string cost_unit(const model_source& source, cost_model cost);

/// A forward run's work items as the picture's timeline.
void add_timeline(io::picture& p, const runtime::run_metrics& m);
/// A training step's operations as the picture's timeline, and the
/// activation bytes each device holds over time (a stage's from the start
/// of its forward to the end of its backward; its input bytes with
/// recomputation).
void add_timeline(io::picture& p, const runtime::schedule_result& r,
                  const std::vector<runtime::stage_times>& stages, bool recompute);

/// The emulator's virtual run of `result` with `cost`'s costs, as the
/// picture's timeline: forward passes, or `s.schedule`'s training step
/// (its knobs from `s`); `s.batches_per_step` micro-batches, twice the
/// stages when 0. A sharding that cannot run as a pipeline gets a note.
void add_run(io::picture& p, model_source& source, const sharding_result& result, cost_model cost,
             simulate_request s);

/// The output a picture report goes to (`report.file`, the option `what`),
/// declared on `outputs`: a file for html, a new folder for svg, none for
/// "picture". usage_error for html or svg without a file, or a file
/// without them.
struct picture_output {
  io::staged_file* file = nullptr;
  io::staged_folder* folder = nullptr;
};
picture_output declare_picture(io::output_set& outputs, const report_flag& report, bool force,
                               std::string_view what = "--report-file");

/// Writes `p` to `out` (as the report asks) and adds the path to
/// `written`; nothing for the report "picture" (returned, not written).
void write_picture(const io::picture& p, const picture_output& out, const report_flag& report,
                   std::vector<std::string>& written);

} // namespace shardpoint::app::detail

#endif // SHARDPOINT_APP_CORE_PICTURE_HPP
