// The commands' work as functions: each command's run() is one of these
// plus printing and its exit code, and the Python bindings (python/) call
// the same functions, so both say and write exactly the same. Each returns
// what the command prints on stdout, rendered as its options ask (table or
// JSON), and writes the files the command writes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_CLI_API_HPP
#define SHARDPOINT_CLI_API_HPP

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <shardpoint/io/memory_report.hpp>

#include "options.hpp"

namespace shardpoint::cli {

// ---- shard --------------------------------------------------------------

struct shard_options {
  model_points model;
  std::string output;
  std::string output_dir;
  pipeline_flags pipeline;
  report_flag report;
  bool in_place = false;
  bool force = false;
};

/// A model sharded as `m` says, annotated, and its validation findings.
struct shard_outcome {
  sharded_model sharded;
  std::vector<diagnostic> diagnostics;
  [[nodiscard]] bool failed() const { return has_errors(diagnostics); }
};

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

// ---- validate, inspect --------------------------------------------------

struct validate_options {
  std::string model;
  std::string_view data; ///< the bindings' model bytes, instead of `model`
  pipeline_flags pipeline;
  report_flag report;
};

struct validate_outcome {
  std::string report;
  std::vector<diagnostic> diagnostics;
  std::vector<std::vector<std::string>> node_names; ///< per diagnostic, of its vertices
};

validate_outcome validate_model(const validate_options& a);

struct inspect_options {
  std::string model;
  std::string_view data;
  std::string grep;
  report_flag report;
};

/// One line per node (table) or [{"index", "name", "op_type", "device",
/// "stage", "inputs", "outputs"}] (JSON; device and stage null when unset).
std::string inspect_model(const inspect_options& a);

// ---- simulate -----------------------------------------------------------

struct simulate_options {
  model_points model;
  int batches_per_step = 0;
  std::optional<int> num_ipus;
  std::string mode = "virtual";
  std::string cost = "unit";
  int unit_us = 100;
  int queue_depth = 4;
  report_flag report;
  std::string trace;
};

/// The emulator's metrics; check_failed when the sharding cannot run as a
/// pipeline.
std::string simulate_model(const simulate_options& a);

// ---- suggest ------------------------------------------------------------

struct suggest_options {
  std::string input;
  std::string_view data;
  int stages = 0;
  std::optional<int> num_ipus;
  std::string memory_per_device;
  std::string cost = "flops";
  double communication_weight = 0;
  std::string output_config;
  std::string output_model;
  memory_flags plan;
  bool planned = false; ///< the cap holds on the memory planner's totals
  report_flag report;
  bool strict = false;
  bool force = false;
};

struct suggest_outcome {
  std::string report;
  std::vector<diagnostic> diagnostics;
  std::vector<std::string> written; ///< files written, none when validation failed
};

suggest_outcome suggest_split(const suggest_options& a);

// ---- memory -------------------------------------------------------------

struct memory_options {
  model_points model;
  memory_flags plan;
  std::string parameters;
  std::string largest_layer;
  std::string device_memory;
  bool compare_stages = false;
  report_flag report;
};

struct memory_outcome {
  std::string report;
  io::memory_report plan;
  /// When a device does not fit: by how much, in words; empty otherwise.
  std::string shortfall;
};

memory_outcome plan_model_memory(const memory_options& a);

// ---- weights strategy ---------------------------------------------------

struct weights_options {
  // strategy
  model_points model;
  int tensor_parallel = 1;
  std::optional<int> devices_per_stage;
  std::string layout;
  std::string layout_out;
  std::string strategy_dir;
  std::string format = "ckpt";
  bool replicate_shared = false;
  // split and merge
  std::string ranks_dir;
  std::string output;
  bool force = false;
};

struct strategy_outcome {
  std::vector<onnx::weight_decision> decisions;
  std::size_t files = 0; ///< strategy files written
};

/// `weights strategy`: the decision for every weight, the strategy files.
strategy_outcome write_strategy(const weights_options& a);

} // namespace shardpoint::cli

#endif // SHARDPOINT_CLI_API_HPP
