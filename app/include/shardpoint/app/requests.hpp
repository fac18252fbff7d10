// The parts of a request several commands share -- a model with its
// sharding points, the pipelining checks, the report format, the memory
// planner's options -- and the steps they share: loading a model (confined
// to what it names), sharding it, declaring the inputs no output may touch.
// Plain data: the command line fills them from its options
// (cli/options.hpp), the Python package from keyword arguments.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_REQUESTS_HPP
#define SHARDPOINT_APP_REQUESTS_HPP

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/app/errors.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/onnx/adapter.hpp>

namespace shardpoint::app {

/// What the option names say in messages: the flags' own spelling.
inline constexpr option_spelling flag_spelling{"--num-ipus", "--batches-per-step"};

/// The domains of counts: devices and stages (ids run to max_group_id,
/// 65535), micro-batches per step. A value outside is a bad parameter.
inline constexpr int max_devices = 65536;
inline constexpr int max_batches = 1 << 30;

/// What a command reads of a model: its graph (onnx::read_graph, the weights'
/// bytes left in the file and copied verbatim to any output), or all of it.
enum class reading { graph, whole };

/// A model file, or its serialised bytes already in memory (the Python
/// bindings), which then take the place of the file (and must outlive the
/// model when read as a graph). External-data locations are checked to stay
/// in the model's folder.
onnx::loaded_model load_model(const std::string& path, std::string_view data, reading what);

/// A model and where to cut it: --input-model, --manual-sharding-config,
/// --shard, --only-manual-sharding.
struct model_points {
  std::string input;
  std::string config;
  std::vector<std::string> shard_flags;
  bool strict = false;
  /// The bindings' model bytes (instead of reading `input`) and points
  /// (after the config's and the flags').
  std::string_view data;
  std::vector<config::entry> entries;

  [[nodiscard]] bool has_points() const {
    return !config.empty() || !shard_flags.empty() || !entries.empty();
  }
};

/// A model with the sharding of every node.
struct sharded_model {
  onnx::loaded_model model;
  onnx::node_graph nodes;
  sharding_result result;
  bool from_attributes = false;     ///< read from the model, not from points
  std::vector<std::size_t> renamed; ///< unnamed nodes given names to resolve the config
};

/// Reads the model and shards it by the config then the --shard flags.
/// With neither, the model's own __ipu_number / __pipeline_stage attributes
/// are its sharding when it has any; otherwise a usage error, or with
/// `unsharded_ok` no sharding at all (one stage).
sharded_model load_sharded(const model_points& m, bool unsharded_ok = false,
                           reading what = reading::graph);

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

/// --report: table, json or none (each command says which it takes).
struct report_flag {
  std::string format = "table";
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

  [[nodiscard]] bool automatic() const { return sharded_data_parallel == "auto"; }
  /// The configuration they describe (the sharding degree 1 under auto);
  /// usage_error for flags that contradict each other, bad_parameter_error
  /// for a number that is not an integer. The planner's rules are checked
  /// where the stages are known.
  [[nodiscard]] parallel_config config() const;
};

/// `text` as a whole number (1000000, 1e6); bad_parameter_error naming
/// `flag` otherwise.
std::int64_t parse_count(const std::string& flag, const std::string& text);

/// Declares what a command reads as inputs of `outputs` (io/outputs.hpp), so
/// that none of its outputs can touch them: the model file `path` (unless
/// empty: bytes from Python) with the external data files `model` names, and
/// each of `files` that is given (configs, layouts).
void protect_inputs(
    io::output_set& outputs, const std::string& path, const onnx::loaded_model* model,
    std::initializer_list<std::pair<std::string_view, std::string_view>> files = {});

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_REQUESTS_HPP
