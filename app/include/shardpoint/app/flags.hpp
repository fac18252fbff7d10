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

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/app/errors.hpp>
#include <shardpoint/app/option_schema.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/shardpoint.hpp>

namespace shardpoint::app {

/// What the option names say in messages: the flags' own spelling.
inline constexpr option_spelling flag_spelling{"--num-ipus", "--batches-per-step"};

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

  /// The options' ranges (--num-ipus, --batches-per-step), in the command
  /// line's words: bad_parameter_error. `shard_model` and `validate_model`
  /// call it first, so every caller of app/ (Python too) is held to them.
  void check() const;

  [[nodiscard]] pipeline_options options(const sharding_result& r) const;
};

/// --num-ipus, --enable-pipelining, --batches-per-step (with the command's
/// own help for the last).
template <class B>
void options(B& b, pipeline_flags& f, std::string_view batches_help) {
  b(opt::num_ipus, f.num_ipus);
  b(opt::enable_pipelining, f.pipelining);
  b(opt::batches_per_step.saying(batches_help), f.batches_per_step);
}

/// A training step's schedule and its knobs (runtime/schedules.hpp), as
/// simulate runs it and draw draws its timeline.
struct schedule_flags {
  /// gpipe, 1f1b, interleaved or zb-h1; empty: forward passes only.
  std::string schedule;
  /// v: the stages are virtual stages, stage s on device s mod (S / v).
  int virtual_stages = 1;
  double backward_ratio = 2; ///< a stage's backward time, in forward times
  double weight_share = 0.5; ///< zb-h1: the weight gradient's part of the backward
};

/// --schedule (with the command's own help), --virtual-stages,
/// --backward-ratio, --weight-share.
template <class B>
void options(B& b, schedule_flags& f, std::string_view schedule_help) {
  b(opt::schedule.saying(schedule_help), f.schedule);
  b(opt::virtual_stages, f.virtual_stages);
  b(opt::backward_ratio, f.backward_ratio);
  b(opt::weight_share, f.weight_share);
}

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

/// --report taking `formats` ("table,json,html,svg"), and --report-file when
/// they include the pictures.
template <class B>
void options(B& b, report_flag& r, std::string_view formats,
             std::string_view help = "Report format") {
  b(opt::report.taking(formats).saying(help), r.format);
  if (formats.find("html") != std::string_view::npos) {
    b(opt::report_file, r.file);
  }
}

/// The report formats of the planning commands: theirs and the pictures.
inline constexpr std::string_view planning_reports = "table,json,html,svg";
inline constexpr std::string_view planning_report_help =
    "Report: table, json, or a picture (html, svg) to --report-file";

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
  std::string batches_per_step; ///< training's M; empty: 1
  std::string schedule;         ///< training: gpipe (empty: the default), 1f1b or zb-h1
  std::string queue_depth;      ///< inference; empty: 4
  std::string batch_dim;        ///< where a model's batch is (a format's own words)

  [[nodiscard]] bool automatic() const { return sharded_data_parallel == "auto"; }
  /// The configuration they describe (the sharding degree 1 under auto);
  /// usage_error for flags that contradict each other, bad_parameter_error
  /// for a number that is not an integer. The planner's rules are checked
  /// where the stages are known.
  [[nodiscard]] parallel_config config() const;
};

/// One option of the memory planner: its spec (app/option_schema.hpp) and
/// the field of memory_flags it fills -- a value, read as text, or a flag.
struct memory_option {
  option_spec spec;
  std::string memory_flags::*text = nullptr;
  bool memory_flags::*set = nullptr;
};

/// The memory planner's options, in the order --help lists them. Python's
/// `training=` is special: False means --inference.
inline constexpr memory_option memory_plan_options[] = {
    {opt::tensor_parallel.saying("Tensor-parallel degree T: weights split by their shard tuples "
                                 "(Megatron pairs from the graph, or --layout)"),
     &memory_flags::tensor_parallel},
    {opt::layout, &memory_flags::layout},
    {opt::data_parallel, &memory_flags::data_parallel},
    {opt::sharded_data_parallel, &memory_flags::sharded_data_parallel},
    {opt::inference, nullptr, &memory_flags::inference},
    {opt::training, nullptr, &memory_flags::training},
    {opt::optimizer, &memory_flags::optimizer},
    {opt::precision, &memory_flags::precision},
    {opt::fp16, nullptr, &memory_flags::fp16},
    {opt::bf16, nullptr, &memory_flags::bf16},
    {opt::shard_optimizer_states, nullptr, &memory_flags::shard_optimizer_states},
    {opt::param_persistence_threshold, &memory_flags::persistence_threshold},
    {opt::max_live_parameters, &memory_flags::max_live_parameters},
    {opt::micro_batch_size, &memory_flags::micro_batch_size},
    {opt::batch_dim, &memory_flags::batch_dim},
    {opt::batches_per_step, &memory_flags::batches_per_step},
    {opt::schedule.taking("gpipe,1f1b,zb-h1")
         .saying("Training pipeline schedule: gpipe (default), 1f1b or zb-h1 (1f1b's activations)"),
     &memory_flags::schedule},
    {opt::queue_depth.saying("Inference: entries queued between stages (default 4, as simulate)"),
     &memory_flags::queue_depth},
};

/// The memory planner's options but those in `leave_out` (a command that
/// has its own --batches-per-step or --schedule leaves the planner's out),
/// as an option group (app/option_schema.hpp).
template <class B>
void options(B& b, memory_flags& f, std::initializer_list<std::string_view> leave_out = {}) {
  b.group("memory plan", "What each device holds (shardpoint memory)");
  for (const auto& o : memory_plan_options) {
    if (std::find(leave_out.begin(), leave_out.end(), o.spec.flag) != leave_out.end()) {
      continue;
    }
    if (o.text != nullptr) {
      b(o.spec, f.*o.text);
    } else {
      b(o.spec, f.*o.set);
    }
  }
  b.exclusive(opt::inference, opt::training);
  b.group("", "");
}

/// Whether `flag` is one of the memory planner's options.
[[nodiscard]] inline bool is_memory_option(std::string_view flag) {
  return std::any_of(std::begin(memory_plan_options), std::end(memory_plan_options),
                     [&](const memory_option& o) { return o.spec.flag == flag; });
}

/// `text` as a whole number (1000000, 1e6, -3), or nothing and `why` it is
/// not one ("'2.5' is not a whole number (e.g. 8, 1e6)", "... is too large").
std::optional<std::int64_t> read_count(const std::string& text, std::string& why);

/// read_count for option `o`: a whole number beyond 64 bits, for an
/// option with a range, is said as out of it ("Value 1e400 not in range 1
/// to 2147483647"), as the command line's check says it.
std::optional<std::int64_t> read_count(const option_spec& o, const std::string& text,
                                       std::string& why);

/// `text` as a whole number (1000000, 1e6); bad_parameter_error naming
/// `flag` otherwise.
std::int64_t parse_count(const std::string& flag, const std::string& text);

/// The same for option `o` (read_count(o, ...)), named by its flag.
std::int64_t parse_count(const option_spec& o, const std::string& text);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_FLAGS_HPP
