// The commands that plan -- `suggest`, `simulate`, `memory` -- on a graph in
// any format (app/model_source.hpp): a request in, an outcome out, no
// parsing, no printing, no exit codes. ONNX's commands (app/commands.hpp)
// are these on app/onnx_source.hpp; examples/custom_format runs them on a
// text format.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_PLANS_HPP
#define SHARDPOINT_APP_PLANS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <shardpoint/app/flags.hpp>
#include <shardpoint/app/model_source.hpp>
#include <shardpoint/io/memory_report.hpp>
#include <shardpoint/io/picture.hpp>

namespace shardpoint::app {

// ---- suggest ------------------------------------------------------------

struct suggest_request {
  int stages = 0;
  std::optional<int> num_ipus;
  std::string memory_per_device;
  std::string cost = "flops"; ///< or unit, params
  double communication_weight = 0;
  std::string output_config; ///< the points, as a shard.yaml
  std::string output_model;  ///< the model with its sharding (model_source::write_sharded)
  memory_flags plan;
  bool planned = false; ///< the cap holds on the memory planner's totals
  report_flag report;
  bool strict = false;
  bool force = false;
};

struct suggest_outcome {
  std::string report;
  std::vector<diagnostic> diagnostics;
  /// Files written: the picture (--report html or svg) always, the outputs
  /// only when the split passes validation (or with force).
  std::vector<std::string> written;
  /// The split drawn, when the report is a picture.
  io::picture picture;
  /// What the figures rest on that is a guess (node_measures::estimates):
  /// for the command line's stderr, Python's warnings; also in the report.
  std::vector<std::string> warnings;
};

/// The balanced split of `source` into `a.stages` stages, measured against
/// the splits other frameworks would give; writes the points and the model
/// as asked, unless the split fails validation (without force).
suggest_outcome suggest(model_source& source, const suggest_request& a);

/// Rule broken when the split fails validation (then nothing is written
/// without force).
[[nodiscard]] inline verdict verdict_of(const suggest_outcome& o) {
  return has_errors(o.diagnostics) ? verdict::rule_broken : verdict::ok;
}

// ---- simulate -----------------------------------------------------------

/// A training step's schedule (the base), or forward passes.
struct simulate_request : schedule_flags {
  int batches_per_step = 0; ///< required: micro-batches, a multiple of the stages
  std::optional<int> num_ipus = {};
  std::string mode = "virtual"; ///< or threads
  std::string cost = "unit";    ///< or flops
  int unit_us = 100;
  int queue_depth = 4;
  report_flag report = {};
  std::string trace = {}; ///< a Chrome trace file to write
  bool force = false;     ///< replace an earlier SVG folder of shardpoint's

  // A training step instead of forward passes: its schedule (the base),
  // and:
  bool recompute = false; ///< backwards recompute their forward; stages hold their inputs
  /// Samples a micro-batch, for the activation bytes a stage holds.
  std::int64_t micro_batch_size = 1;
  /// Measured times instead of the ratio and the share, one a stage (with
  /// or without a model): each stage's backward time, and of it the
  /// weight gradient's (zb-h1's W).
  std::vector<double> backward_times = {};
  std::vector<double> weight_times = {};
  /// Without a model (simulate_times): each stage's forward time.
  std::vector<double> stage_times = {};
  /// With stage_times: each stage's activation bytes a micro-batch (one
  /// value: every stage's; none: 0).
  std::vector<std::int64_t> activation_bytes = {};
};

struct simulate_outcome {
  std::string report; ///< the metrics, as the request's report asks
  /// The run drawn (its timeline; with a model, its stages too); the
  /// report's file holds it with --report html or svg.
  io::picture picture;
  std::vector<std::string> written; ///< the trace and the picture, when written
  /// What the costs rest on that is a guess (also in the report).
  std::vector<std::string> warnings;
};

/// `source` sharded by `where` (or its own sharding) run through the
/// pipeline emulator. check_failed when the sharding cannot run as a
/// pipeline.
simulate_outcome simulate(model_source& source, const points& where, const simulate_request& a);

/// A training schedule (`a.schedule`) on `a.stage_times` alone: a
/// synthetic study, no model.
simulate_outcome simulate_times(const simulate_request& a);

// ---- memory -------------------------------------------------------------

struct memory_request {
  memory_flags plan;
  std::string parameters;    ///< a count, planned without a model
  std::string largest_layer; ///< with `parameters`
  /// With `parameters`: P pipeline stages holding the parameters evenly.
  std::string pipeline_parallel;
  std::string device_memory;
  bool compare_stages = false;
  /// DeepSpeed's estimator for the same counts, beside the plan; its GPUs
  /// per node (empty: all on one node).
  bool compare_deepspeed = false;
  std::string gpus_per_node;
  report_flag report;
  bool force = false; ///< replace an earlier SVG folder of shardpoint's
};

struct memory_outcome {
  std::string report;
  std::vector<std::string> written; ///< the picture, with --report html or svg
  io::picture picture;              ///< the stages drawn, when the report is a picture
  io::memory_report plan;
  /// When a device does not fit: by how much, in words; empty otherwise.
  std::string shortfall;
  /// What the figures rest on that is a guess (plan.estimates): for the
  /// command line's stderr, Python's warnings.
  std::vector<std::string> warnings;
};

/// The bytes every device holds, for `source` sharded by `where` (or its
/// own sharding, or one stage), or -- without a source -- for
/// `a.parameters` alone.
memory_outcome plan_memory(model_source* source, const points& where, const memory_request& a);

/// Rule broken when a device does not fit.
[[nodiscard]] inline verdict verdict_of(const memory_outcome& o) {
  return o.shortfall.empty() ? verdict::ok : verdict::rule_broken;
}

// ---- draw ---------------------------------------------------------------

/// A report_flag for one HTML page.
inline report_flag html_report() {
  report_flag r;
  r.format = "html";
  return r;
}

/// A training step's timeline (the base: simulate's schedules) instead of
/// forward passes.
struct draw_request : schedule_flags {
  std::string cost = "flops"; ///< or unit, params: as suggest measures
  /// The timeline's micro-batches; 0: twice the stages.
  int batches_per_step = 0;
  /// The memory planner's options (as `memory`): the memory bars.
  memory_flags plan;
  std::string device_memory; ///< the capacity line, as typed ("32GiB")
  /// html (one page) or svg (a new folder of SVG files), written to its file.
  report_flag report = html_report();
  bool force = false;
  /// Models up to this many nodes get every node drawn too.
  std::size_t most_nodes_drawn = 5000;
};

struct draw_outcome {
  io::picture picture;
  std::vector<std::string> written;
  /// PopRT's rules on the sharding (also on the page); draw draws anyway.
  std::vector<diagnostic> diagnostics;
  /// What the figures rest on that is a guess (also on the page).
  std::vector<std::string> warnings;
  /// What the user should know of what was drawn (also on the page): a
  /// model without a sharding, drawn as one stage.
  std::vector<std::string> notes;
};

/// `source` sharded by `where` (or its own sharding) drawn: the graph
/// condensed to stages, the per-stage bars (costs as suggest measures them,
/// memory as the planner counts it), the emulator's timeline. Writes
/// `a.report.file` (a page, or a folder of SVGs); with an empty file name,
/// only returns the picture.
draw_outcome draw(model_source& source, const points& where, const draw_request& a);

// ---- plan ---------------------------------------------------------------

struct plan_request {
  /// Without a model: a GPT-like transformer by its counts (layers, hidden
  /// size, sequence length, vocabulary; heads: hidden / 64 when not given,
  /// a guess the report marks). 0: not given.
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t sequence = 0;
  std::int64_t vocabulary = 0;
  std::optional<std::int64_t> heads;
  /// The cluster: a YAML file (io/cluster_file.hpp), then the flags over it,
  /// as typed ("80GiB", "312e12", "300GB/s").
  std::string cluster_file;
  std::optional<int> devices;
  std::optional<int> devices_per_node;
  std::string device_memory;
  std::string device_flops;
  std::string intra_node_bandwidth;
  std::string inter_node_bandwidth;
  /// Training.
  std::int64_t global_batch = 0;
  std::string dtype = "fp16";     ///< or bf16, fp32
  std::string optimizer = "adam"; ///< or sgd, none
  std::int64_t max_micro_batch_size = 64;
  std::vector<std::string> schedules; ///< empty: all four
  int virtual_stages = 2;             ///< v of the interleaved schedule
  double backward_ratio = 2;
  double weight_share = 0.5;
  /// Feasible layouts listed: a number or "all".
  std::string top_k = "10";
  report_flag report;
  /// A new folder for the files that run the best layout (plan.json and,
  /// from a model, shard.yaml, the sharded model, tensor-parallel files).
  std::string emit;
  bool force = false;
};

struct plan_outcome {
  std::string report;
  std::vector<std::string> written; ///< files --emit wrote, and the picture
  io::picture picture;              ///< the best layout drawn, when the report is a picture
  /// What the figures rest on that is a guess (also in the report).
  std::vector<std::string> warnings;
  bool fits = false; ///< some layout fits the devices' memory
};

/// The layouts of `source` (or, when null, of the transformer the request
/// counts) on the request's cluster, best first; writes --emit's files for
/// the best. Nothing fits: rule broken, nothing written.
plan_outcome plan_layouts(model_source* source, const plan_request& a);

[[nodiscard]] inline verdict verdict_of(const plan_outcome& o) {
  return o.fits ? verdict::ok : verdict::rule_broken;
}

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_PLANS_HPP
