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

/// A command's name and its line of help (the command line's --help), held
/// by its request as `static constexpr command_about about`.
struct command_about {
  std::string_view name;
  std::string_view summary;
};

// ---- shard --------------------------------------------------------------

struct shard_options {
  static constexpr command_about about{"shard",
                                       "Annotate a model with __ipu_number / __pipeline_stage"};
  model_points model;
  std::string output;
  std::string output_dir;
  pipeline_flags pipeline;
  report_flag report;
  shape_flags shapes; ///< the report's crossing bytes measured with them
  bool in_place = false;
  bool force = false;
};

/// The options of each command (app/option_schema.hpp), next to its request.

/// --report of the commands that validate (shard, validate).
inline constexpr std::string_view findings_only_help =
    "Report format; none prints only validation findings (on stderr) and skips the shape "
    "inference that sizes the crossing tensors";

template <class B>
void options(B& b, shard_options& a) {
  options(b, a.model, opt::input_model.help, true, "input");
  b(opt::output_model.saying("Where to write the sharded model").keyed("output"), a.output);
  b(opt::output_dir.saying("Folder for a relative --output-model"), a.output_dir);
  options(b, a.pipeline, "Micro-batches per step (with pipelining: a multiple of the stages)");
  options(b, a.report, "table,json,none", findings_only_help);
  options(b, a.shapes);
  b(opt::in_place, a.in_place);
  b(opt::force.saying("Write the model even when validation fails"), a.force);
}

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
shard_outcome shard_model(const model_points& m, const pipeline_flags& checks,
                          reading what = reading::graph);

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
  static constexpr command_about about{"validate",
                                       "Check the sharding attributes already in a model"};
  std::string model;
  std::string_view data; ///< the bindings' model bytes, instead of `model`
  /// --batches-per-step alone turns the pipelining checks on, as validate
  /// has it.
  pipeline_flags pipeline = [] {
    pipeline_flags p;
    p.batches_enable_pipelining = true;
    return p;
  }();
  report_flag report;
  shape_flags shapes; ///< the report's crossing bytes measured with them
};

template <class B>
void options(B& b, validate_options& a) {
  b(opt::model.saying("Model to check").needed(), a.model);
  options(b, a.pipeline, "Micro-batches per step (turns on the pipelining checks)");
  options(b, a.report, "table,json,none", findings_only_help);
  options(b, a.shapes);
}

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
  static constexpr command_about about{
      "inspect", "List nodes: index, name, op type, [device, stage,] inputs -> outputs"};
  std::string model;
  std::string_view data;
  std::string grep;
  report_flag report;
};

template <class B>
void options(B& b, inspect_options& a) {
  b(opt::model.saying("Model to list").needed(), a.model);
  b(opt::grep, a.grep);
  options(b, a.report, "table,json",
          "table: a tab-separated line per node; json: a list of objects");
}

/// `inspect`: one line per node (table) or [{"index", "name", "op_type",
/// "device", "stage", "inputs", "outputs"}] (JSON; device and stage null
/// when unset). `what` is how the model is read: its nodes as views where
/// it allows (the default), or parsed (reading::graph; the tests hold the
/// two to each other).
std::string inspect_model(const inspect_options& a, reading what = reading::graph_views);

// ---- suggest, simulate, memory, draw: app/plans.hpp on an ONNX model ---------

/// `suggest` on the ONNX model `input` (or the bindings' bytes `data`).
struct suggest_options : suggest_request {
  static constexpr command_about about{
      "suggest", "Find the balanced split into pipeline stages (smallest bottleneck, under a "
                 "memory cap) and compare it with DeepSpeed's and PiPPy's"};
  std::string input;
  std::string_view data;
  shape_flags shapes;
};

suggest_outcome suggest_split(const suggest_options& a);

template <class B>
void options(B& b, suggest_options& a) {
  b(opt::input_model.saying("Model to split").needed(), a.input);
  options(b, a.shapes);
  b(opt::stages, a.stages);
  b(opt::num_ipus, a.num_ipus);
  b(opt::memory_per_device, a.memory_per_device);
  b(opt::cost, a.cost);
  b(opt::communication_weight, a.communication_weight);
  b(opt::output_config, a.output_config);
  b(opt::output_model.saying("Write the model annotated with the split"), a.output_model);
  options(b, a.report, planning_reports, planning_report_help);
  b(opt::only_manual_sharding, a.strict);
  b(opt::force.saying("Write even when validation fails"), a.force);
  options(b, a.plan);
}

struct simulate_options : simulate_request, measured_model {
  static constexpr command_about about{
      "simulate", "Emulate the pipelined execution of a sharded model (virtual or threads mode)"};
  std::string batch_dim; ///< --batch-dim: where the batch is, for the activations
};

simulate_outcome simulate_model(const simulate_options& a);

template <class B>
void options(B& b, simulate_options& a) {
  options(b, static_cast<measured_model&>(a), "Model to shard and run (or give --stage-times)",
          false);
  b(opt::batches_per_step
        .saying("Micro-batches to run (a multiple of the stages; with --schedule, the "
                "schedule's rule)")
        .needed(),
    a.batches_per_step);
  b(opt::num_ipus, a.num_ipus);
  b(opt::mode, a.mode);
  b(opt::run_cost, a.cost);
  b(opt::unit_us, a.unit_us);
  b(opt::queue_depth, a.queue_depth);
  options(b, a.report, planning_reports, planning_report_help);
  b(opt::force.saying("Replace an earlier svg folder of shardpoint's (--report svg)"), a.force);
  b(opt::trace, a.trace);
  b.group("training step",
          "A training schedule's forward and backward passes instead of forward passes");
  options(b, static_cast<schedule_flags&>(a), opt::schedule.help);
  b(opt::backward_times, a.backward_times);
  b(opt::weight_times, a.weight_times);
  b.exclusive(opt::backward_times, opt::backward_ratio);
  b.exclusive(opt::weight_times, opt::weight_share);
  b(opt::recompute, a.recompute);
  b(opt::micro_batch_size.saying("Samples a micro-batch, for the activation bytes (default 1)"),
    a.micro_batch_size);
  b(opt::batch_dim, a.batch_dim);
  b(opt::stage_times, a.stage_times);
  b(opt::activation_bytes, a.activation_bytes);
  b.group("", "");
}

/// `plan` on an ONNX model, or (no model) on a transformer's counts.
struct plan_options : plan_request {
  static constexpr command_about about{
      "plan", "The best training layout (pipeline x tensor x data parallel, ZeRO stage, "
              "micro-batch, schedule) of a model on a cluster, under its memory"};
  std::string input;
  std::string_view data;
  shape_flags shapes;
  std::string batch_dim; ///< --batch-dim: where the batch is, for the activations
};

plan_outcome plan_model(const plan_options& a);

template <class B>
void options(B& b, plan_options& a) {
  b(opt::input_model.saying("Model to lay out (or give a transformer's counts)"), a.input);
  options(b, a.shapes);
  b(opt::batch_dim, a.batch_dim);
  b.group("transformer", "A GPT-like transformer by its counts, instead of a model");
  b(opt::layers, a.layers);
  b(opt::hidden, a.hidden);
  b(opt::sequence, a.sequence);
  b(opt::vocabulary, a.vocabulary);
  b(opt::heads, a.heads);
  b.group("cluster", "The devices (flags win over --cluster)");
  b(opt::cluster, a.cluster_file);
  b(opt::devices, a.devices);
  b(opt::devices_per_node, a.devices_per_node);
  b(opt::device_memory.saying("Memory of a device (80GiB, 16GB, ...)"), a.device_memory);
  b(opt::device_flops, a.device_flops);
  b(opt::intra_node_bandwidth, a.intra_node_bandwidth);
  b(opt::inter_node_bandwidth, a.inter_node_bandwidth);
  b.group("", "");
  b(opt::global_batch, a.global_batch);
  b(opt::optimizer.saying("adam (default), sgd or none"), a.optimizer);
  b(opt::dtype, a.dtype);
  b(opt::max_micro_batch_size, a.max_micro_batch_size);
  b(opt::schedules, a.schedules);
  b(opt::virtual_stages.saying("v of the interleaved schedule (default 2)").within(2, 64),
    a.virtual_stages);
  b(opt::backward_ratio.saying("A backward's compute in forwards (default 2)"), a.backward_ratio);
  b(opt::weight_share, a.weight_share);
  b(opt::top_k, a.top_k);
  options(b, a.report, planning_reports,
          "Report: table, json, or the best layout drawn (html, svg) to --report-file");
  b(opt::emit, a.emit);
  b(opt::force.saying("Replace an --emit folder shardpoint wrote before"), a.force);
}

/// Without a model: planned from `parameters`.
struct memory_options : memory_request, measured_model {
  static constexpr command_about about{"memory", "The bytes every device holds (pipeline stages x "
                                                 "tensor parallelism x sharded data parallelism) "
                                                 "and whether they fit"};
};

memory_outcome plan_model_memory(const memory_options& a);

template <class B>
void options(B& b, memory_options& a) {
  options(b, static_cast<measured_model&>(a),
          "Model, sharded into pipeline stages (or give --parameters)", false);
  b(opt::parameters, a.parameters);
  b(opt::largest_layer_parameters, a.largest_layer);
  b(opt::pipeline_parallel, a.pipeline_parallel);
  b(opt::device_memory.saying(
        "Memory of each device (32GiB, 16GB, 123456789): exit 3 when one does not fit"),
    a.device_memory);
  b(opt::compare_stages, a.compare_stages);
  b(opt::compare_deepspeed, a.compare_deepspeed);
  b(opt::gpus_per_node, a.gpus_per_node);
  options(b, a.plan);
  options(b, a.report, planning_reports, planning_report_help);
  b(opt::force.saying("Replace an earlier svg folder of shardpoint's (--report svg)"), a.force);
}

/// `draw` on an ONNX model: its sharding (points, or the model's own) as
/// a page or SVGs.
struct draw_options : draw_request, measured_model {
  static constexpr command_about about{
      "draw", "Draw a sharded model: where the split is, what each stage costs and holds, what "
              "crosses, how the pipeline runs (one HTML page, or SVG files)"};
};

draw_outcome draw_model(const draw_options& a);

template <class B>
void options(B& b, draw_options& a) {
  options(b, static_cast<measured_model&>(a), "Model to draw", true);
  b(opt::picture_format, a.report.format);
  b(opt::output.saying("The page (html) or the new folder (svg) to write").needed(), a.report.file);
  b(opt::force.saying("Replace an earlier svg folder of shardpoint's"), a.force);
  b(opt::cost.saying("flops: estimated MFLOPs per node (default); unit: 1 per node; params: "
                     "parameter bytes"),
    a.cost);
  b(opt::batches_per_step.saying("Micro-batches in the timeline (default: twice the stages)"),
    a.batches_per_step);
  options(b, static_cast<schedule_flags&>(a),
          "The timeline of a training step: gpipe, 1f1b, interleaved or zb-h1 (default: forward "
          "passes)");
  b(opt::device_memory.saying("Memory of each device (32GiB, 16GB, 123456789): the memory bars' "
                              "capacity"),
    a.device_memory);
  options(b, a.plan, {"--batches-per-step", "--schedule"});
}

// ---- split --------------------------------------------------------------

struct split_options {
  static constexpr command_about about{
      "split", "Write one runnable ONNX model per stage, and pipeline.json to chain them"};
  model_points model;
  std::string output_dir;
  std::string by = "stage"; ///< or "device"
  onnx::split_options split;
  report_flag report;
  bool force = false;
};

template <class B>
void options(B& b, split_options& a) {
  options(b, a.model, "Model to split");
  b(opt::output_dir
        .saying("Folder for stage_<s>.onnx and pipeline.json (new, or empty unless --force)")
        .needed(),
    a.output_dir);
  b(opt::by, a.by);
  b(opt::external_data, a.split.external_data);
  b(opt::relay, a.split.relay);
  b(opt::keep_sharding_attributes, a.split.keep_sharding_attributes);
  options(b, a.report, "table,json,none");
  b(opt::force.saying("Replace an output folder that is not empty"), a.force);
}

struct split_outcome {
  std::string report;
  std::size_t stages = 0; ///< stage models written
  /// What the user would not otherwise see: --external-data that moved no
  /// tensor out (the weights are in Constant nodes, or all small).
  std::vector<std::string> warnings;
};

/// `split`: one runnable model per stage and pipeline.json, in a new folder.
split_outcome split_model(const split_options& a);

// ---- strip --------------------------------------------------------------

struct strip_options {
  static constexpr command_about about{
      "strip", "Remove the __ipu_number / __pipeline_stage attributes from every node"};
  std::string input;
  std::string output;
};

template <class B>
void options(B& b, strip_options& a) {
  b(opt::input_model.saying("Sharded model").needed(), a.input);
  b(opt::output_model.needed(), a.output);
}

/// `strip`: the model without sharding attributes; how many were removed.
std::size_t strip_model(const strip_options& a);

// ---- synth --------------------------------------------------------------

struct synth_options {
  static constexpr command_about about{"synth",
                                       "Generate a synthetic model: resnet50 (the seed example's "
                                       "ResNet-50 v1) or decoder (29 nodes per layer)"};
  std::string what; ///< resnet50 or decoder
  std::string output;
  int layers = 12;
  int hidden = 8;
  int sequence = 16;
};

template <class B>
void options(B& b, synth_options& a) {
  b(opt::synth_what.needed(), a.what);
  b(opt::synth_output.needed(), a.output);
  b(opt::layers.saying("decoder: number of layers").within(1, 10'000'000), a.layers);
  b(opt::hidden.saying("decoder: hidden size").within(1, 4096), a.hidden);
  b(opt::sequence.saying("decoder: sequence length").within(1, 4096), a.sequence);
}

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

/// The options of `weights strategy`, `weights split`, `weights merge`.
template <class B>
void strategy_options(B& b, weights_options& a) {
  options(b, a.model, "Model (its pipeline stages from its attributes or a config)");
  b(opt::tensor_parallel.within(1, max_devices).needed(), a.tensor_parallel);
  b(opt::devices_per_stage, a.devices_per_stage);
  b(opt::layout.saying("Layout file (name: column|row|vocab|replicated|[shard]); default: derived "
                       "from the graph"),
    a.layout);
  b(opt::layout_out, a.layout_out);
  b(opt::output_dir.saying("Folder for stage<s>.ckpt / .json").needed(), a.strategy_dir);
  b(opt::weight_format, a.format);
  b(opt::layout_form, a.layout_form);
  b(opt::replicate_shared, a.replicate_shared);
  b(opt::force.saying("Replace an output folder that is not empty"), a.force);
}
template <class B>
void split_weights_options(B& b, weights_options& a) {
  b(opt::input_model.saying("Model with the weights (or --from-weights, or --from-ranks)"),
    a.model.input);
  b(opt::from_weights, a.from_weights);
  b(opt::from_ranks, a.from_ranks);
  b(opt::from_strategy_dir, a.from_strategy_dir);
  b(opt::strategy_dir.needed(), a.strategy_dir);
  b(opt::output_dir.saying("Folder for rank_<r>/").needed(), a.ranks_dir);
  b(opt::weight_format.taking("ckpt,safetensors")
        .saying("ckpt: MindSpore checkpoints; safetensors"),
    a.format);
  b(opt::force.saying("Replace an output folder that is not empty"), a.force);
}
template <class B>
void merge_weights_options(B& b, weights_options& a) {
  b(opt::strategy_dir.saying("Strategy files").needed(), a.strategy_dir);
  b(opt::ranks_dir.needed(), a.ranks_dir);
  b(opt::output
        .saying("The weights: a MindSpore checkpoint when it ends in .ckpt, else safetensors")
        .needed(),
    a.output);
  b(opt::force.saying("Replace the output file when it exists"), a.force);
}

struct strategy_outcome {
  std::vector<onnx::weight_decision> decisions;
  std::size_t files = 0;             ///< strategy files written
  std::vector<std::string> warnings; ///< e.g. a tensor parallelism that splits no weight
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
