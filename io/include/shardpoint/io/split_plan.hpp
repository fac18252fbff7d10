// shardpoint/io/split_plan.hpp -- a model cut into one model per stage: what
// each stage reads and writes, as pipeline.json and as a table.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_SPLIT_PLAN_HPP
#define SHARDPOINT_IO_SPLIT_PLAN_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardpoint::io {

/// A tensor a stage reads from outside itself.
struct stage_input {
  std::string name;
  std::optional<int> from_stage; ///< nothing: a graph input
};

/// A tensor a stage writes for later stages or as a graph output.
struct stage_output {
  std::string name;
  std::vector<int> to_stages;
  bool graph_output = false;
};

/// One stage model.
struct stage_part {
  int stage = 0;  ///< place in the chain, 0..k-1
  int device = 0; ///< its device
  std::string file;
  std::vector<std::size_t> nodes;     ///< top-level node indices, in model order
  std::vector<std::uint32_t> tensors; ///< initializers it reads (ids the adapter gives)
  std::size_t initializer_bytes = 0;  ///< of the initializers copied into its file
  /// Every weight it holds, as every report counts them: initializers and
  /// Constant values its nodes read, and its nodes' subgraphs' weights.
  std::int64_t weight_bytes = 0;
  std::vector<stage_input> inputs;
  std::vector<stage_output> outputs;
};

struct split_plan {
  std::vector<stage_part> stages;
  struct graph_input {
    std::string name;
    std::vector<int> to_stages;
  };
  struct graph_output {
    std::string name;
    std::optional<int> from_stage; ///< nothing: a graph input passed through
  };
  std::vector<graph_input> inputs;
  std::vector<graph_output> outputs;
};

/// pipeline.json: {"stages": [{"stage", "device", "file", "nodes",
/// "initializer_bytes", "weight_bytes",
/// "inputs": [{"name", "from_stage"}], "outputs": [{"name", "to_stages"}]}],
/// "inputs": [{"name", "to_stages"}], "outputs": [{"name", "from_stage"}]}.
std::string to_json(const split_plan& plan);

/// Per stage: file, device, nodes, weights, inputs and outputs.
std::string to_table(const split_plan& plan);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_SPLIT_PLAN_HPP
