// The application: one typed function per command -- a request struct in,
// an outcome out (the report rendered as asked, the findings, the files
// written) -- with no option parsing, no printing and no exit codes. The
// command line (cli/) parses into these requests and prints the outcomes;
// the Python package (python/) binds the same functions, so both say and
// write exactly the same. Errors are shardpoint::error by category, plus
// app/errors.hpp's usage_error and check_failed.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_COMMANDS_HPP
#define SHARDPOINT_APP_COMMANDS_HPP

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/app/requests.hpp>
#include <shardpoint/io/memory_report.hpp>
#include <shardpoint/onnx/split.hpp>
#include <shardpoint/onnx/weights.hpp>

namespace shardpoint::app {

// ---- shard --------------------------------------------------------------

struct shard_options {
  model_points model;
  std::string output;
  std::string output_dir;
  pipeline_flags pipeline;
  report_flag report;
  shape_flags shapes; ///< the report's crossing bytes measured with them
  bool in_place = false;
  bool force = false;
};

/// A model sharded as `m` says, annotated, and its validation findings.
struct shard_outcome {
  sharded_model sharded;
  std::vector<diagnostic> diagnostics;
  [[nodiscard]] bool failed() const { return has_errors(diagnostics); }
};

[[nodiscard]] inline verdict verdict_of(const shard_outcome& o) {
  return o.failed() ? verdict::rule_broken : verdict::ok;
}

/// What `shard` does before writing (and the Python Sharder all it does).
shard_outcome shard_model(const model_points& m, const pipeline_flags& checks);

struct shard_file_outcome {
  std::string report; ///< empty for --report none
  std::vector<diagnostic> diagnostics;
  bool written = false; ///< not when validation failed without force
  std::filesystem::path output;
};

/// `shard`: shards, reports, and writes the model unless validation failed
/// (without force).
shard_file_outcome shard_file(const shard_options& a);

/// Rule broken when validation failed, written or not (--force).
[[nodiscard]] inline verdict verdict_of(const shard_file_outcome& o) {
  return has_errors(o.diagnostics) ? verdict::rule_broken : verdict::ok;
}

// ---- validate, inspect --------------------------------------------------

struct validate_options {
  std::string model;
  std::string_view data; ///< the bindings' model bytes, instead of `model`
  pipeline_flags pipeline;
  report_flag report;
  shape_flags shapes; ///< the report's crossing bytes measured with them
};

struct validate_outcome {
  std::string report;
  std::vector<diagnostic> diagnostics;
  std::vector<std::vector<std::string>> node_names; ///< per diagnostic, of its vertices
};

validate_outcome validate_model(const validate_options& a);

[[nodiscard]] inline verdict verdict_of(const validate_outcome& o) {
  return has_errors(o.diagnostics) ? verdict::rule_broken : verdict::ok;
}

struct inspect_options {
  std::string model;
  std::string_view data;
  std::string grep;
  report_flag report;
};

/// One line per node (table) or [{"index", "name", "op_type", "device",
/// "stage", "inputs", "outputs"}] (JSON; device and stage null when unset).
std::string inspect_model(const inspect_options& a);

// ---- suggest, simulate, memory, draw: app/plans.hpp on an ONNX model ---------

/// `suggest` on the ONNX model `input` (or the bindings' bytes `data`).
struct suggest_options : suggest_request {
  std::string input;
  std::string_view data;
  shape_flags shapes;
};

suggest_outcome suggest_split(const suggest_options& a);

struct simulate_options : simulate_request {
  model_points model;
  shape_flags shapes;
  std::string batch_dim; ///< --batch-dim: where the batch is, for the activations
};

simulate_outcome simulate_model(const simulate_options& a);

/// `plan` on an ONNX model, or (no model) on a transformer's counts.
struct plan_options : plan_request {
  std::string input;
  std::string_view data;
  shape_flags shapes;
  std::string batch_dim; ///< --batch-dim: where the batch is, for the activations
};

plan_outcome plan_model(const plan_options& a);

struct memory_options : memory_request {
  model_points model; ///< none given: planned from `parameters`
  shape_flags shapes;
};

memory_outcome plan_model_memory(const memory_options& a);

/// `draw` on an ONNX model: its sharding (points, or the model's own) as
/// a page or SVGs.
struct draw_options : draw_request {
  model_points model;
  shape_flags shapes;
};

draw_outcome draw_model(const draw_options& a);

// ---- split --------------------------------------------------------------

struct split_options {
  model_points model;
  std::string output_dir;
  std::string by = "stage"; ///< or "device"
  onnx::split_options split;
  report_flag report;
  bool force = false;
};

struct split_outcome {
  std::string report;
  std::size_t stages = 0; ///< stage models written
};

/// `split`: one runnable model per stage and pipeline.json, in a new folder.
split_outcome split_model(const split_options& a);

// ---- strip --------------------------------------------------------------

struct strip_options {
  std::string input;
  std::string output;
};

/// `strip`: the model without sharding attributes; how many were removed.
std::size_t strip_model(const strip_options& a);

// ---- synth --------------------------------------------------------------

struct synth_options {
  std::string what; ///< resnet50 or decoder
  std::string output;
  int layers = 12;
  int hidden = 8;
  int sequence = 16;
};

/// `synth`: writes the generated model.
void synth_model(const synth_options& a);

// ---- weights strategy | split | merge -----------------------------------

struct weights_options {
  // strategy
  model_points model;
  int tensor_parallel = 1;
  std::optional<int> devices_per_stage;
  std::string layout;
  std::string layout_out;
  std::string strategy_dir;
  std::string format = "ckpt";
  std::string layout_form = "mindspore"; ///< weights::layout_form: mindspore | tutorial
  bool replicate_shared = false;
  // split and merge
  std::string ranks_dir;
  std::string output;
  bool force = false;
  // split's source when not the model: merged weights, or ranks and their strategies
  std::string from_weights;
  std::string from_ranks;
  std::string from_strategy_dir;
};

struct strategy_outcome {
  std::vector<onnx::weight_decision> decisions;
  std::size_t files = 0; ///< strategy files written
};

/// `weights strategy`: the decision for every weight, the strategy files.
strategy_outcome write_strategy(const weights_options& a);

/// `weights split`: every rank's weights, cut as the strategy files say,
/// from the model, merged weights (`from_weights`) or the ranks of another
/// strategy (`from_ranks`, `from_strategy_dir`). Returns the warnings
/// (tensors of the source no strategy lists, left out).
std::vector<std::string> split_weights(const weights_options& a);

/// `weights merge`: the whole weights again, from every rank's files, as
/// a MindSpore checkpoint when the output ends in .ckpt, else safetensors.
/// Returns the warnings (tensors of the ranks no strategy lists, left out).
std::vector<std::string> merge_weights(const weights_options& a);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_COMMANDS_HPP
