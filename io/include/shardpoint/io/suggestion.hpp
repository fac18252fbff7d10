// shardpoint/io/suggestion.hpp -- what `shardpoint suggest` prints: the
// balanced split stage by stage, against the baselines, as a table or JSON.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_SUGGESTION_HPP
#define SHARDPOINT_IO_SUGGESTION_HPP

#include <optional>
#include <string>
#include <vector>

#include <shardpoint/evaluate.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/pipeline_rules.hpp>

namespace shardpoint::io {

/// A split with a name and its measures.
struct named_split {
  std::string name;
  partition_metrics metrics;
  /// The memory planner's largest device total, when the cap is on it.
  std::optional<double> planned_largest = std::nullopt;
};

struct suggestion {
  std::string cost_model;                ///< what a cost unit is: "flops", "unit", "params"
  std::optional<double> memory_capacity; ///< per stage, when capped
  double communication_weight = 0;
  bool exact = false;           ///< proven optimal among all splits
  bool exact_intervals = false; ///< proven optimal among interval splits
  /// What the figures rest on that is a guess (unknown or symbolic shapes,
  /// uncounted weights), a sentence each; empty when all are measured. The
  /// optimality is then claimed only for the estimates.
  std::vector<std::string> estimates;
  std::string method; ///< balanced_sharding::method
  named_split plan;   ///< the suggestion
  std::vector<named_split> baselines;
  std::vector<config::entry> points; ///< the split as a PopRT config
  std::vector<diagnostic> diagnostics;
  /// With a memory plan (the cap on the planner's totals): the parameter
  /// bytes of each stage of `plan` (its metrics' memory is then the
  /// planner's bound), and how the planner measured the activations.
  std::vector<double> stage_parameter_bytes;
  std::vector<std::string> memory_notes;
  /// Nodes without a node input (a Constant, a ConstantOfShape of an
  /// initializer) in an earlier stage than every node that reads them, by
  /// stage, then node order: their outputs cross a cut as runtime tensors. The split
  /// leaves one there only where moving it to its readers' stage would raise
  /// the bottleneck, break the cap or empty a stage.
  std::vector<std::string> sources_behind;
};

std::string to_table(const suggestion& s);
/// {"stages": [{"stage", "device", "nodes", "cost", "parameter_bytes",
///  "memory_bytes" (what the cap holds on), "received_bytes", "load",
///  "share"}], "bottleneck", "lower_bound", "exact", "exact_intervals",
///  "estimated" (a figure rests on a guess), "estimates" (what, in words),
///  "method", "cost_model", "memory_capacity", "communication_weight",
///  "sources_behind" (node names: see above),
///  "memory_plan" (null, or {"largest_total_bytes", "notes"}: the planner's
///  largest device), "points": [{"node", "device", "stage"}],
///  "baselines": [{"name", "bottleneck", "ratio_to_lower_bound",
///  "ratio_to_suggestion", "largest_parameter_bytes" (the cap's measure),
///  "largest_total_bytes" (with a memory plan), "fits", "empty_stages"}],
///  "diagnostics": [...]}
std::string to_json(const suggestion& s);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_SUGGESTION_HPP
