// The parts of a request that do not depend on a graph format: where to
// cut (points), the pipelining checks, the report format, the memory
// planner's options declared once (the command line adds them from
// memory_plan_options, the Python package reads its keywords from it), and
// the numbers' parsing. Plain data: the command line fills them from its
// options (cli/options.hpp), the Python package from keyword arguments.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_FLAGS_HPP
#define SHARDPOINT_APP_FLAGS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/app/errors.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/shardpoint.hpp>

namespace shardpoint::app {

/// What the option names say in messages: the flags' own spelling.
inline constexpr option_spelling flag_spelling{"--num-ipus", "--batches-per-step"};

/// The domains of counts: devices and stages (ids run to max_group_id,
/// 65535), micro-batches per step. A value outside is a bad parameter.
inline constexpr int max_devices = 65536;
inline constexpr int max_batches = 1 << 30;

/// Where to cut a graph, in any format: --manual-sharding-config, --shard,
/// --only-manual-sharding, and the bindings' entries.
struct points {
  std::string config;
  std::vector<std::string> shard_flags;
  bool strict = false;
  /// The bindings' points (after the config's and the flags').
  std::vector<config::entry> entries;

  [[nodiscard]] bool has_points() const {
    return !config.empty() || !shard_flags.empty() || !entries.empty();
  }
  /// Every entry, in the order they apply: the config file's, the flags',
  /// the bindings'.
  [[nodiscard]] std::vector<config::entry> read() const;
};

/// --num-ipus, --enable-pipelining, --batches-per-step.
struct pipeline_flags {
  std::optional<int> num_ipus;
  bool pipelining = false;
  std::optional<int> batches_per_step;

  /// Whether --batches-per-step alone turns the pipelining checks on (when
  /// the sharding has stages), as `validate` has it; `shard` needs
  /// --enable-pipelining, as PopRT does.
  bool batches_enable_pipelining = false;

  [[nodiscard]] pipeline_options options(const sharding_result& r) const;
};

/// Every node of a graph, for a layout engine to draw: names, op types,
/// stages, edges from producer to consumer.
struct node_graph {
  std::vector<std::string> names;
  std::vector<std::string> ops;
  std::vector<int> stages;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
};
/// Draws a node_graph as an SVG document, or returns "" when it cannot (the
/// command line's and Python's: Graphviz's dot, app/graphviz.hpp).
using node_layout = std::string (*)(const node_graph&);

/// --report: table, json or none, or a picture -- html or svg -- written to
/// --report-file (each command says which it takes); for the bindings,
/// "picture": the outcome's picture, nothing written.
struct report_flag {
  std::string format = "table";
  /// With html: the page; with svg: a new folder of SVG files.
  std::string file;
  /// Draws every node in the picture; null: the picture leaves them out.
  node_layout lay_out = nullptr;
  /// What the picture is of (the model's file name).
  std::string title;

  [[nodiscard]] bool picture() const {
    return format == "html" || format == "svg" || format == "picture";
  }
};

/// The memory planner's options (`memory`, and `suggest` whose cap then
/// holds on the planner's totals): parallelism, training or inference,
/// precision, SageMaker's sharded data parallelism, activations. Numbers are
/// read as text so that 1e6 works and a bad one is a parameter error (exit
/// 2), as the planner's rules are.
struct memory_flags {
  std::string tensor_parallel = "1";
  std::string data_parallel = "1";
  std::string sharded_data_parallel = "1"; ///< or "auto"
  std::string layout;
  bool inference = false;
  bool training = false;
  std::string optimizer;
  std::string precision;
  bool fp16 = false;
  bool bf16 = false;
  bool shard_optimizer_states = false;
  std::string persistence_threshold = "1e6";
  std::string max_live_parameters = "1e9";
  std::string micro_batch_size = "1";
  std::string batches_per_step = "1";
  std::string schedule = "gpipe";
  std::string queue_depth = "4";
  std::string batch_dim; ///< where a model's batch is (a format's own words)

  [[nodiscard]] bool automatic() const { return sharded_data_parallel == "auto"; }
  /// The configuration they describe (the sharding degree 1 under auto);
  /// usage_error for flags that contradict each other, bad_parameter_error
  /// for a number that is not an integer. The planner's rules are checked
  /// where the stages are known.
  [[nodiscard]] parallel_config config() const;
};

/// One option of the memory planner, declared once: the command line adds
/// it from here (cli/options.cpp), the Python package reads its keyword
/// argument from here (python/src/module.cpp), and memory_flags holds it.
struct memory_option {
  std::string_view flag;                     ///< "--tensor-parallel" (the command line's spelling)
  std::string_view alias;                    ///< PopRT's underscore spelling, when there is one
  std::string_view keyword;                  ///< the Python keyword; empty when Python has none
  std::string memory_flags::*text = nullptr; ///< a value, read as text ...
  bool memory_flags::*set = nullptr;         ///< ... or a flag
  std::string_view help;
  std::string_view choices; ///< the values it takes, comma-separated; empty: any
};

/// The memory planner's options, in the order --help lists them. Python's
/// `training=` is special: False means --inference.
inline constexpr memory_option memory_plan_options[] = {
    {"--tensor-parallel", "", "tensor_parallel", &memory_flags::tensor_parallel, nullptr,
     "Tensor-parallel degree T: weights split by their shard tuples (Megatron pairs from the "
     "graph, or --layout)",
     ""},
    {"--layout", "", "layout", &memory_flags::layout, nullptr,
     "Layout file: initializer -> column | row | vocab | replicated | [shard tuple]", ""},
    {"--data-parallel", "", "data_parallel", &memory_flags::data_parallel, nullptr,
     "Data-parallel degree DP", ""},
    {"--sharded-data-parallel", "", "sharded_data_parallel", &memory_flags::sharded_data_parallel,
     nullptr,
     "SageMaker's sharded data parallel degree: divides DP; or auto (the smallest that fits "
     "--device-memory)",
     ""},
    {"--inference", "", "", nullptr, &memory_flags::inference,
     "Weights in their stored types, no training state", ""},
    {"--training", "", "training", nullptr, &memory_flags::training,
     "Parameters, gradients and optimizer states (the default)", ""},
    {"--optimizer", "", "optimizer", &memory_flags::optimizer, nullptr,
     "Training: adam (default), sgd, none", "adam,sgd,none"},
    {"--precision", "", "precision", &memory_flags::precision, nullptr,
     "Training: fp16 (mixed, default), bf16 (mixed), fp32", "fp32,fp16,bf16"},
    {"--fp16", "", "fp16", nullptr, &memory_flags::fp16, "SageMaker's fp16: --precision fp16", ""},
    {"--bf16", "", "bf16", nullptr, &memory_flags::bf16, "SageMaker's bf16: --precision bf16", ""},
    {"--shard-optimizer-states", "", "shard_optimizer_states", nullptr,
     &memory_flags::shard_optimizer_states,
     "Optimizer states divided over the data-parallel ranks (ZeRO stage 1)", ""},
    {"--param-persistence-threshold", "", "param_persistence_threshold",
     &memory_flags::persistence_threshold, nullptr,
     "Weights with fewer elements stay whole under sharding (default 1e6)", ""},
    {"--max-live-parameters", "", "max_live_parameters", &memory_flags::max_live_parameters,
     nullptr, "Most elements gathered at once under sharding (default 1e9)", ""},
    {"--micro-batch-size", "", "micro_batch_size", &memory_flags::micro_batch_size, nullptr,
     "Samples per micro-batch: the batch dimension of the activations (default 1)", ""},
    {"--batch-dim", "", "batch_dim", &memory_flags::batch_dim, nullptr,
     "The batch of the activations: a symbolic input dimension's name or INPUT:AXIS (default: a "
     "dimension named like a batch)",
     ""},
    {"--batches-per-step", "--batches_per_step", "batches_per_step",
     &memory_flags::batches_per_step, nullptr, "Micro-batches per step M (default 1)", ""},
    {"--schedule", "", "schedule", &memory_flags::schedule, nullptr,
     "Training pipeline schedule: gpipe (default) or 1f1b", "gpipe,1f1b"},
    {"--queue-depth", "", "queue_depth", &memory_flags::queue_depth, nullptr,
     "Inference: entries queued between stages (default 4, as simulate)", ""},
};

/// The values `o` takes (its `choices`, split); empty when it takes any.
inline std::vector<std::string> choices_of(const memory_option& o) {
  std::vector<std::string> out;
  for (std::string_view rest = o.choices; !rest.empty();) {
    const auto comma = rest.find(',');
    out.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

/// `text` as a whole number (1000000, 1e6); bad_parameter_error naming
/// `flag` otherwise.
std::int64_t parse_count(const std::string& flag, const std::string& text);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_FLAGS_HPP
