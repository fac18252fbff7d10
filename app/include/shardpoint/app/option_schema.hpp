// The commands' options, declared once: each option's flag (and PopRT's
// underscore alias), its Python keyword, the value it takes, its choices or
// range, and its help. A command lists the options it takes, and the field
// each fills, in one function of its request (`options(b, request)`,
// app/commands.hpp and app/plans.hpp); whoever reads options renders that
// list:
//   - the command line adds each to CLI11 (cli/options.cpp: `cli_options`),
//     which checks choices and ranges as it parses and prints --help;
//   - the Python bindings read each from a keyword argument
//     (python/src/module.cpp), checked by `check_option` here, so a bad value
//     is the same BadParameterError whichever spelling it came in;
//   - docs/options.md is made from the command line's list (tests/docs:
//     ctest `docs_options` fails when the two differ).
// A binder `b` is called as `b(spec, field)` for each option, `b.group(name,
// description)` before the options of a group (an empty name ends it), and
// `b.exclusive(a, c)` for two options that exclude each other.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_OPTION_SCHEMA_HPP
#define SHARDPOINT_APP_OPTION_SCHEMA_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardpoint::app {

/// One option of the commands.
struct option_spec {
  std::string_view flag;    ///< "--schedule"; without dashes, a positional argument
  std::string_view alias;   ///< PopRT's underscore spelling, when it has one
  std::string_view keyword; ///< the Python keyword; empty when Python has none
  std::string_view value;   ///< what it takes ("N", "SIZE", "FILE", ...); empty: a flag
  std::string_view help = {};
  std::string_view choices = {}; ///< the values it takes, comma-separated; empty: any
  double min = 0;                ///< a number's range, when min < max
  double max = 0;
  bool required = false;

  /// The same option with a command's own help, choices, range, Python
  /// keyword, or required.
  [[nodiscard]] constexpr option_spec saying(std::string_view h) const {
    auto o = *this;
    o.help = h;
    return o;
  }
  [[nodiscard]] constexpr option_spec taking(std::string_view c) const {
    auto o = *this;
    o.choices = c;
    return o;
  }
  [[nodiscard]] constexpr option_spec within(double lo, double hi) const {
    auto o = *this;
    o.min = lo;
    o.max = hi;
    return o;
  }
  [[nodiscard]] constexpr option_spec keyed(std::string_view k) const {
    auto o = *this;
    o.keyword = k;
    return o;
  }
  [[nodiscard]] constexpr option_spec needed() const {
    auto o = *this;
    o.required = true;
    return o;
  }
  [[nodiscard]] constexpr bool ranged() const { return min < max; }
  [[nodiscard]] constexpr bool is_flag() const { return value.empty(); }
  [[nodiscard]] constexpr bool positional() const { return !flag.starts_with("-"); }
};

/// The values `o` takes (its `choices`, split); empty when it takes any.
std::vector<std::string> choices_of(const option_spec& o);

/// Why `value` is not one of `o`'s choices ("'zb-h2' is not one of gpipe,
/// 1f1b"), or empty when it is (or `o` takes any value): the words of the
/// command line and of check_option.
std::string choice_error(const option_spec& o, const std::string& value);

/// Why an empty value of `o` is a mistake ("an empty size; give one, e.g.
/// 16GiB"), never "not given"; empty for the one kind an empty value means
/// something to (a REGEX: every name).
std::string empty_value_error(const option_spec& o);

/// `value` against `o`'s choices and range; bad_parameter_error naming it as
/// `name` (the flag, or the Python keyword) otherwise -- for every caller
/// that does not parse a command line. Text values are checked against the
/// choices only (numbers given as text are parsed, and checked, where used).
void check_option(const option_spec& o, std::string_view name, const std::string& value);
void check_option(const option_spec& o, std::string_view name, double value);

/// "1 to 1073741824": a ranged option's bounds, as its messages say them.
std::string range_text(const option_spec& o);

/// The domains of counts: devices and stages (ids run to max_group_id,
/// 65535), micro-batches per step. A value outside is a bad parameter.
inline constexpr int max_devices = 65536;
inline constexpr int max_batches = 1 << 30;

/// Every option, by its name in the schema.
namespace opt {

// ---- the model and where to cut it ----------------------------------------
inline constexpr option_spec input_model{"--input-model", "--input_model", "model", "FILE",
                                         "Model to shard"};
inline constexpr option_spec model{"model", "", "model", "FILE", "Model to read"};
inline constexpr option_spec manual_sharding_config{
    "--manual-sharding-config", "--manual_sharding_config", "config", "FILE",
    "shard.yaml (list of {node, device, stage}) or a sharding_info / pipelining_info mapping "
    "(YAML or .json); without it and --shard, the model's own __ipu_number / __pipeline_stage "
    "attributes"};
inline constexpr option_spec shard{"--shard", "", "shard", "NODE=DEVICE[:STAGE]",
                                   "A sharding point NODE=DEVICE[:STAGE] (repeatable)"};
inline constexpr option_spec only_manual_sharding{
    "--only_manual_sharding", "--only-manual-sharding", "only_manual_sharding", "",
    "Require unique names on every node; rename nothing"};
inline constexpr option_spec input_shape{
    "--input-shape", "--input_shape", "input_shapes", "NAME=D0,D1,...",
    "Sizes of an input, NAME=D0,D1,... (or D0,D1,... for a model with one input; repeatable): "
    "costs, bytes and activations are measured with them"};
inline constexpr option_spec dim{
    "--dim", "", "dims", "SYMBOL=N",
    "A symbolic input dimension's size, SYMBOL=N (repeatable), e.g. --dim batch=8"};
inline constexpr option_spec batch_dim{
    "--batch-dim", "", "batch_dim", "NAME|INPUT:AXIS",
    "Where the model's batch is, for the activations: a symbolic dimension's name or "
    "INPUT:AXIS (default: found by name)"};

// ---- PopRT's pipelining checks --------------------------------------------
inline constexpr option_spec num_ipus{
    "--num-ipus", "--num_ipus", "num_ipus", "N", "Devices available (checked)", "", 1, max_devices};
inline constexpr option_spec enable_pipelining{"--enable-pipelining", "--enable_pipelining",
                                               "enable_pipelining", "",
                                               "Validate for pipelined execution"};
inline constexpr option_spec batches_per_step{"--batches-per-step",
                                              "--batches_per_step",
                                              "batches_per_step",
                                              "N",
                                              "Micro-batches per step M (default 1)",
                                              "",
                                              1,
                                              max_batches};

// ---- reports and outputs ----------------------------------------------------
inline constexpr option_spec report{"--report", "", "", "FORMAT", "Report format"};
inline constexpr option_spec report_file{
    "--report-file", "", "", "FILE|DIR",
    "With --report html: the page to write; with svg: a new folder of SVG files"};
inline constexpr option_spec output_model{"--output-model", "--output_model", "output_model",
                                          "FILE", "Where to write the model"};
inline constexpr option_spec output_dir{"--output-dir", "--output_dir", "output_dir", "DIR",
                                        "The folder to write"};
inline constexpr option_spec output{"--output", "", "output", "FILE", "The file to write"};
inline constexpr option_spec force{"--force", "", "force", "",
                                   "Replace an output folder shardpoint wrote before"};

// ---- costs and the emulator -------------------------------------------------
inline constexpr option_spec cost{
    "--cost",
    "",
    "cost",
    "KIND",
    "flops: estimated MFLOPs per node; unit: 1 per node; params: parameter bytes",
    "flops,unit,params"};
/// The emulator's costs: no weight bytes (simulate).
inline constexpr option_spec run_cost =
    cost.taking("unit,flops").saying("unit: 1 per node; flops: estimated MFLOPs per node");
inline constexpr option_spec mode{"--mode",
                                  "",
                                  "mode",
                                  "MODE",
                                  "virtual: discrete events in cost units; threads: a thread per "
                                  "device, --unit-us per cost unit",
                                  "virtual,threads"};
inline constexpr option_spec unit_us{
    "--unit-us", "", "unit_us", "N", "threads mode: microseconds per cost unit", "", 1, 10'000'000};
inline constexpr option_spec queue_depth{
    "--queue-depth",
    "",
    "queue_depth",
    "N",
    "Ring buffer entries between stages (rounded up to a power of two)",
    "",
    1,
    1 << 20};
inline constexpr option_spec trace{"--trace", "", "trace", "FILE",
                                   "Write Chrome trace-event JSON (Perfetto, chrome://tracing)"};

// ---- training schedules -----------------------------------------------------
inline constexpr option_spec schedule{"--schedule",
                                      "",
                                      "schedule",
                                      "NAME",
                                      "gpipe, 1f1b, interleaved or zb-h1 (zero-bubble H1)",
                                      "gpipe,1f1b,interleaved,zb-h1"};
inline constexpr option_spec virtual_stages{
    "--virtual-stages",
    "",
    "virtual_stages",
    "V",
    "v: the stages are virtual stages, stage s on device s mod (stages / v) (interleaved)",
    "",
    1,
    4096};
inline constexpr option_spec backward_ratio{"--backward-ratio",
                                            "",
                                            "backward_ratio",
                                            "X",
                                            "A stage's backward time in forward times (default 2)",
                                            "",
                                            0.0,
                                            1e6};
inline constexpr option_spec weight_share{
    "--weight-share",
    "",
    "weight_share",
    "X",
    "zb-h1: the weight gradient's part of the backward (default 0.5)",
    "",
    0.0,
    1.0};
inline constexpr option_spec backward_times{
    "--backward-times", "", "backward_times", "T,T,...",
    "Measured backward times, one a stage (instead of --backward-ratio)"};
inline constexpr option_spec weight_times{
    "--weight-times", "", "weight_times", "T,T,...",
    "Measured weight-gradient times, one a stage, each part of its backward (zb-h1's W; instead "
    "of --weight-share)"};
inline constexpr option_spec recompute{
    "--recompute", "", "recompute", "",
    "Backwards recompute their forward; a stage holds only its inputs"};
inline constexpr option_spec micro_batch_size{
    "--micro-batch-size",
    "",
    "micro_batch_size",
    "N",
    "Samples per micro-batch: the batch dimension of the activations (default 1)",
    "",
    1,
    2147483647.0}; // a dimension: below 2^31, as the memory planner's rule
inline constexpr option_spec stage_times{
    "--stage-times", "", "stage_times", "T,T,...",
    "Without a model: each stage's forward time, e.g. 1,1,2,1"};
inline constexpr option_spec activation_bytes{
    "--activation-bytes", "", "activation_bytes", "B[,B,...]",
    "With --stage-times: a stage's activation bytes a micro-batch (one value, or one a stage)"};

// ---- memory -------------------------------------------------------------------
inline constexpr option_spec device_memory{"--device-memory", "", "device_memory", "SIZE",
                                           "Memory of each device (32GiB, 16GB, 123456789)"};
inline constexpr option_spec tensor_parallel{"--tensor-parallel", "", "tensor_parallel", "T",
                                             "Tensor-parallel degree T"};
inline constexpr option_spec layout{
    "--layout", "", "layout", "FILE",
    "Layout file: initializer -> column | row | vocab | replicated | [shard tuple]"};
inline constexpr option_spec data_parallel{"--data-parallel", "", "data_parallel", "N",
                                           "Data-parallel degree DP"};
inline constexpr option_spec sharded_data_parallel{
    "--sharded-data-parallel", "", "sharded_data_parallel", "N|auto",
    "SageMaker's sharded data parallel degree: divides DP; or auto (the smallest that fits "
    "--device-memory)"};
inline constexpr option_spec inference{"--inference", "", "", "",
                                       "Weights in their stored types, no training state"};
inline constexpr option_spec training{"--training", "", "training", "",
                                      "Parameters, gradients and optimizer states (the default)"};
inline constexpr option_spec optimizer{
    "--optimizer", "", "optimizer", "NAME", "Training: adam (default), sgd, none", "adam,sgd,none"};
inline constexpr option_spec precision{
    "--precision",   "", "precision", "TYPE", "Training: fp16 (mixed, default), bf16 (mixed), fp32",
    "fp32,fp16,bf16"};
inline constexpr option_spec fp16{"--fp16", "", "fp16", "", "SageMaker's fp16: --precision fp16"};
inline constexpr option_spec bf16{"--bf16", "", "bf16", "", "SageMaker's bf16: --precision bf16"};
inline constexpr option_spec shard_optimizer_states{
    "--shard-optimizer-states", "", "shard_optimizer_states", "",
    "Optimizer states divided over the data-parallel ranks (ZeRO stage 1)"};
inline constexpr option_spec param_persistence_threshold{
    "--param-persistence-threshold", "", "param_persistence_threshold", "N",
    "Weights with fewer elements stay whole under sharding (default 1e6)"};
inline constexpr option_spec max_live_parameters{
    "--max-live-parameters", "", "max_live_parameters", "N",
    "Most elements gathered at once under sharding (default 1e9)"};
inline constexpr option_spec parameters{
    "--parameters", "", "parameters", "N",
    "Plan from counts alone, without a model: N parameters (e.g. 7.5e9)"};
inline constexpr option_spec largest_layer_parameters{
    "--largest-layer-parameters", "", "largest_layer_parameters", "N",
    "With --parameters: the largest layer's parameters (default all, a guess the report marks)"};
inline constexpr option_spec pipeline_parallel{
    "--pipeline-parallel", "", "pipeline_parallel", "P",
    "With --parameters: P pipeline stages, the parameters split evenly"};
inline constexpr option_spec compare_stages{
    "--compare-stages", "", "compare_stages", "",
    "Also the model states of the largest device under each ZeRO stage"};
inline constexpr option_spec compare_deepspeed{
    "--compare-deepspeed", "", "compare_deepspeed", "",
    "Also DeepSpeed's estimator (estimate_zero2/zero3_model_states_mem_needs) for the same "
    "counts, and where shardpoint counts differently"};
inline constexpr option_spec gpus_per_node{
    "--gpus-per-node", "", "gpus_per_node", "N",
    "With --compare-deepspeed: GPUs a node (default: the whole group on one)"};

// ---- suggest ------------------------------------------------------------------
inline constexpr option_spec stages{
    "--stages", "", "stages",    "S", "Pipeline stages (stage s on device s)",
    "",         1,  max_devices, true};
inline constexpr option_spec memory_per_device{
    "--memory-per-device", "--device-memory", "memory_per_device", "SIZE",
    "Cap on each stage's parameter bytes (900MiB, 16GB, 123456789); with any memory plan option, "
    "on the planner's total for each device"};
inline constexpr option_spec communication_weight{
    "--communication-weight",
    "",
    "communication_weight",
    "X",
    "Cost units per byte a stage receives from earlier stages",
    "",
    0.0,
    1e12};
inline constexpr option_spec output_config{"--output-config", "", "output_config", "FILE",
                                           "Write the split as a PopRT shard.yaml"};

// ---- plan -----------------------------------------------------------------------
/// A transformer's counts (layers, hidden, sequence, vocabulary): at most
/// 2^24, so that the byte counts they make stay within 64 bits.
inline constexpr double max_model_count = 16777216;
inline constexpr option_spec layers{"--layers",           "", "layers", "N",
                                    "Transformer layers", "", 1,        max_model_count};
inline constexpr option_spec hidden{"--hidden",    "", "hidden", "N",
                                    "Hidden size", "", 1,        max_model_count};
inline constexpr option_spec sequence{"--sequence",      "", "sequence", "N",
                                      "Sequence length", "", 1,          max_model_count};
inline constexpr option_spec vocabulary{
    "--vocabulary", "", "vocabulary", "N", "Vocabulary size", "", 1, max_model_count};
inline constexpr option_spec heads{"--heads", "", "heads", "N",
                                   "Attention heads (default hidden / 64, marked a guess)"};
inline constexpr option_spec cluster{"--cluster", "", "cluster", "FILE",
                                     "A YAML file of the keys below (docs/plan.md)"};
/// The devices of a cluster: at most 2^20 (a cluster file's are checked
/// against the same bound where it is read).
inline constexpr double max_cluster_devices = 1048576;
inline constexpr option_spec devices{"--devices",      "", "devices", "N",
                                     "Devices in all", "", 1,         max_cluster_devices};
inline constexpr option_spec devices_per_node{
    "--devices-per-node", "", "devices_per_node", "N", "Devices a node (default: all)", "", 1,
    max_cluster_devices};
inline constexpr option_spec device_flops{
    "--device-flops", "", "device_flops", "FLOP/S",
    "FLOP/s a device sustains (312e12, 312T, 19.5 TFLOPS; at least 1)"};
inline constexpr option_spec intra_node_bandwidth{
    "--intra-node-bandwidth", "", "intra_node_bandwidth", "BYTES/S",
    "Bytes a second between devices of a node (300GB/s; at least 1)"};
inline constexpr option_spec inter_node_bandwidth{
    "--inter-node-bandwidth", "", "inter_node_bandwidth", "BYTES/S",
    "Bytes a second between nodes (25GB/s; at least 1)"};
inline constexpr option_spec global_batch{
    "--global-batch", "",  "global_batch", "N", "Samples a training step", "", 1,
    2147483648.0,     true};
inline constexpr option_spec dtype{
    "--dtype", "", "dtype", "TYPE", "fp16 (default), bf16 or fp32", "fp16,bf16,fp32"};
inline constexpr option_spec max_micro_batch_size{"--max-micro-batch-size",
                                                  "",
                                                  "max_micro_batch_size",
                                                  "N",
                                                  "The largest micro-batch tried (default 64)",
                                                  "",
                                                  1,
                                                  2147483647.0};
inline constexpr option_spec schedules{
    "--schedules",
    "",
    "schedules",
    "NAME,...",
    "Schedules tried (default all: gpipe,1f1b,interleaved,zb-h1)",
    "gpipe,1f1b,interleaved,zb-h1"};
inline constexpr option_spec top_k{"--top-k", "", "top_k", "N|all",
                                   "Layouts listed: N (default 10) or all"};
inline constexpr option_spec emit{"--emit", "", "emit", "DIR",
                                  "A new folder for the files that run the best layout (plan.json, "
                                  "shard.yaml, the sharded model, MindSpore strategy files)"};

// ---- draw -----------------------------------------------------------------------
inline constexpr option_spec picture_format{
    "--format",
    "",
    "format",
    "FORMAT",
    "html: one self-contained page; svg: a new folder of SVG files",
    "html,svg"};

// ---- shard, split, strip, synth, inspect --------------------------------------
inline constexpr option_spec in_place{"--in-place", "--in_place", "in_place", "",
                                      "Overwrite the input model"};
inline constexpr option_spec by{
    "--by", "", "by", "KIND", "Group nodes by pipeline stage or by device", "stage,device"};
inline constexpr option_spec external_data{
    "--external-data", "", "external_data", "",
    "Give each stage its own data file with only its weights"};
inline constexpr option_spec relay{
    "--relay", "", "relay", "",
    "Pass a tensor through every stage between its producer and a consumer"};
inline constexpr option_spec keep_sharding_attributes{
    "--keep-sharding-attributes", "", "keep_sharding_attributes", "",
    "Keep __ipu_number / __pipeline_stage on the stages' nodes"};
inline constexpr option_spec grep{"--grep", "", "grep", "REGEX",
                                  "Only nodes whose name or op type matches REGEX"};
inline constexpr option_spec synth_what{"model",           "", "what", "KIND", "What to generate",
                                        "resnet50,decoder"};
inline constexpr option_spec synth_output{"output", "", "output", "FILE", "Output .onnx file"};

// ---- weights --------------------------------------------------------------------
inline constexpr option_spec devices_per_stage{"--devices-per-stage",
                                               "",
                                               "devices_per_stage",
                                               "N",
                                               "Devices a stage (a multiple of T; default T)",
                                               "",
                                               1,
                                               max_devices};
inline constexpr option_spec layout_out{"--layout-out", "", "layout_out", "FILE",
                                        "Write the decisions as a layout file"};
inline constexpr option_spec weight_format{
    "--format", "", "format", "FORMAT", "ckpt: protobuf; json: MindSpore's JSON form", "ckpt,json"};
inline constexpr option_spec layout_form{
    "--layout-form",
    "",
    "layout_form",
    "FORM",
    "mindspore: as MindSpore's own writer (default); tutorial: as the tutorial's "
    "save_strategy_file, byte for byte (protobuf only)",
    "mindspore,tutorial"};
inline constexpr option_spec replicate_shared{"--replicate-shared", "", "replicate_shared", "",
                                              "Write a weight read by two stages to both"};
inline constexpr option_spec strategy_dir{"--strategy-dir", "", "strategy_dir", "DIR",
                                          "Strategy files to cut by"};
inline constexpr option_spec from_weights{
    "--from-weights", "", "from_weights", "FILE",
    "Whole weights instead of a model: a .safetensors (weights merge's) or .ckpt"};
inline constexpr option_spec from_ranks{
    "--from-ranks", "", "from_ranks", "DIR",
    "Re-shard: the rank_<r>/ folders of another strategy (with --from-strategy-dir)"};
inline constexpr option_spec from_strategy_dir{"--from-strategy-dir", "", "from_strategy_dir",
                                               "DIR",
                                               "The strategy files --from-ranks was cut with"};
inline constexpr option_spec ranks_dir{"--ranks-dir", "", "ranks_dir", "DIR",
                                       "Folder of rank_<r>/"};

} // namespace opt

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_OPTION_SCHEMA_HPP
