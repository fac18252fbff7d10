// model_source: what the application needs of a graph format, so that
// `suggest`, `simulate` and `memory` (app/plans.hpp) run on any format.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// A format implements the pure virtual functions: its node graph (vertex i
// is node i, in the format's order), the nodes' display names, their costs
// and bytes, the weights each node reads (as the tensor-parallel degree
// splits them) and the activation bytes each node's outputs hold. The other
// functions have defaults that need nothing more: points resolve by name
// (shardpoint::config), validation is the core's, and the format has no
// sharding of its own and cannot write one.
//
// The application calls, in this order: declare_inputs (before any output
// is declared, so no output can touch an input), load (reads the model;
// may declare more files it found), name_nodes (only when points are to be
// resolved or written), then any of the rest. ONNX's implementation is
// app/onnx_source.hpp; examples/custom_format/ is a second, with no ONNX.
#ifndef SHARDPOINT_APP_MODEL_SOURCE_HPP
#define SHARDPOINT_APP_MODEL_SOURCE_HPP

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <shardpoint/app/flags.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/shardpoint.hpp>

namespace shardpoint::app {

/// How a node's cost is counted: FLOPs from the shapes, 1 per node, or the
/// bytes of the weights it reads.
enum class cost_model { flops, unit, params };

/// A cost model by the name the commands take ("flops", "unit",
/// "params"); bad_parameter_error for another.
cost_model cost_named(const std::string& name);

/// What the balanced partitioner weighs, per node.
struct node_measures {
  /// flops: the format's own cost unit; unit: 1 each; params: the weight
  /// bytes, at least 1.
  std::vector<std::int64_t> cost;
  /// The bytes of the weights each node reads (a shared weight in each).
  std::vector<std::int64_t> parameter_bytes;
  /// The bytes of each node's outputs that other nodes read.
  std::vector<std::int64_t> output_bytes;
  /// Every weight once, with the nodes that read it: what a stage holds.
  memory_items parameters;
  /// What of the above is a guess, a sentence each (unknown shapes, weights
  /// not counted, ...); empty when every figure is measured. The commands
  /// then warn, mark their reports and claim optimality only for the
  /// estimates.
  std::vector<std::string> estimates;
};

/// A batch a model holds at a number of samples: that number, and where,
/// in words ("input 'x' has its batch sized to 4 (dimension 'N')").
struct held_batch {
  std::int64_t size = 1;
  std::string where;
};

/// What tensor parallelism splits of a graph's weights
/// (model_source::probe_tensor_parallel).
struct tensor_parallel_probe {
  /// The weights each node reads at degree 2, every split one in 2 parts.
  parameter_uses uses;
  /// Lengths every degree must divide, each with what it is ("along
  /// dimension 1 of weight 'w'"): runtime::layout_model::tensor_divides.
  std::vector<std::pair<std::string, std::int64_t>> divides;
};

class model_source {
public:
  /// The node graph's type: edges from producer to consumer (parallel edges
  /// allowed), vertex i = node i.
  using graph_type = boost::compressed_sparse_row_graph<boost::directedS>;

  model_source() = default;
  model_source(const model_source&) = delete;
  model_source& operator=(const model_source&) = delete;
  virtual ~model_source() = default;

  // ---- reading

  /// Declares the files load() will read as inputs of `outputs`.
  virtual void declare_inputs(io::output_set& outputs) const;
  /// Reads the model. `outputs` takes the inputs found while reading
  /// (another file the model names).
  virtual void load(io::output_set& outputs) = 0;
  /// Gives every unnamed node a name, so that points can name every node
  /// (`strict`: refuses unnamed nodes instead). Names must then be unique.
  virtual void name_nodes(bool strict);

  // ---- the graph

  [[nodiscard]] virtual const graph_type& graph() = 0;
  /// Throws (a bad_input_error category: cycle_error by default, naming a
  /// node on the cycle as the format names it) when the graph has a cycle:
  /// no sharding or plan of it is valid. O(V + E) where the nodes are in
  /// topological order, as a format's usually are.
  virtual void check_acyclic();
  /// Each node's name as messages, reports and points spell it.
  [[nodiscard]] virtual std::vector<std::string> names() = 0;
  /// Each node's operation ("Conv", "MatMul"), for pictures; by default
  /// none (every node drawn as a plain node).
  [[nodiscard]] virtual std::vector<std::string> op_types() { return {}; }
  /// Costs, parameter and output bytes, the weights. May be called before
  /// graph() (suggest does: a source may build its graph meanwhile).
  [[nodiscard]] virtual node_measures measure(cost_model how) = 0;
  /// Floating-point operations in one unit of measure(cost_model::flops)'s
  /// costs (ONNX: 10^6); by default 1.
  [[nodiscard]] virtual double flops_per_cost_unit() const { return 1; }
  /// The samples measure()'s costs count, when the model holds a batch of
  /// more than one (ONNX: an input's batch fixed, or sized by --dim); by
  /// default, and for a batch left free, nothing: one sample. plan, which
  /// counts one sample, divides by it.
  [[nodiscard]] virtual std::optional<held_batch> measured_batch() { return std::nullopt; }
  /// Measures one sample where the model leaves its batch free (ONNX: a
  /// symbolic dimension named as the batch, not sized by the user, sized
  /// 1), so that counting it as 1 is no guess; called by plan after load().
  /// By default nothing.
  virtual void count_one_sample() {}
  /// Only the costs (the emulator's), and what of them is a guess; by
  /// default measure(how)'s.
  [[nodiscard]] virtual std::vector<std::int64_t> costs(cost_model how,
                                                        std::vector<std::string>& estimates);

  // ---- sharding

  /// The sharding the model itself stores, when it stores one.
  [[nodiscard]] virtual std::optional<sharding_result> annotated();
  /// The sharding the points give (config::resolve by name, manual_shard).
  [[nodiscard]] virtual sharding_result shard(const std::vector<config::entry>& entries);
  /// PopRT's rules (the core's validate, with the nodes' names), and any
  /// rule the format adds.
  [[nodiscard]] virtual std::vector<diagnostic> validate(const sharding_result& r,
                                                         const pipeline_options& options);
  /// Whether write_sharded can store a sharding in this format.
  [[nodiscard]] virtual bool writes_sharding() const { return false; }
  /// The name a sharded model takes in a folder of outputs (`plan --emit`).
  [[nodiscard]] virtual std::string sharded_file_name() const { return "sharded_model"; }
  /// Writes the model with `r` stored in it to `path` (a staging file of
  /// the output set). By default unsupported_error: the format cannot.
  virtual void write_sharded(const sharding_result& r, const std::filesystem::path& path);
  /// Writes into `folder`, under `prefix`, what runs the stages of `r` with
  /// `tensor_parallel` ranks each (ONNX: MindSpore strategy files), and
  /// returns the files' names; by default nothing.
  virtual std::vector<std::string> write_tensor_parallel(const sharding_result& r,
                                                         int tensor_parallel,
                                                         io::staged_folder& folder,
                                                         const std::string& prefix);

  // ---- the memory planner

  /// The weights each node reads, each with the parts the tensor-parallel
  /// degree splits it into (`layout`: the user's choices, when given), as
  /// the nodes are staged in `stages`.
  [[nodiscard]] virtual parameter_uses parameters(const sharding_result& stages,
                                                  std::int64_t tensor_parallel,
                                                  const std::vector<io::layout_choice>* layout) = 0;
  /// The weights at tensor-parallel degree 2, the nodes as one stage --
  /// which of them any degree splits --, and what a degree must divide to
  /// split them (plan's search refuses a degree that does not). By default
  /// parameters(one stage, 2, nullptr), dividing nothing.
  [[nodiscard]] virtual tensor_parallel_probe probe_tensor_parallel();
  /// What the weights parameters() gives leave out (weights the format
  /// holds elsewhere), a sentence each; by default nothing.
  [[nodiscard]] virtual std::vector<std::string> weight_estimates();
  /// The bytes each node's outputs hold for one micro-batch of
  /// `micro_batch_size` samples. `notes` takes what the figures assume,
  /// `estimates` what of them is a guess (node_measures::estimates).
  [[nodiscard]] virtual std::vector<std::int64_t>
  activations(std::int64_t micro_batch_size, std::vector<std::string>& notes,
              std::vector<std::string>& estimates) = 0;
};

/// What counting FLOPs in whole cost units can weigh (each node rounded up,
/// at least 1 unit: up to one unit a node may be rounding), a sentence for
/// the estimates ending with `then`; nothing when that is under 5% of the
/// `costs` counted, or a unit is one FLOP. A trial's 4-layer, hidden-8
/// decoder was counted 116 MFLOPs for 0.14.
std::optional<std::string> rounding_estimate(const model_source& source,
                                             const std::vector<std::int64_t>& costs,
                                             std::string_view then);

/// The sentence for a tensor-parallel degree `tensor_parallel` > 1 that
/// splits no weight (every rank holds every weight whole), `weights
/// strategy`'s and the memory planner's: from the graph's pairs, or from a
/// --layout file (`layout_given`).
std::string splits_no_weight(std::int64_t tensor_parallel, bool layout_given);
/// Why a graph has no weight tensor parallelism splits, in words.
std::string_view no_split_pair();
/// That sentence when `uses` has weights and none is split in parts.
std::optional<std::string> unsplit_weights(const parameter_uses& uses, std::int64_t tensor_parallel,
                                           bool layout_given);

/// How tensor parallelism holds a node's outputs.
enum class tp_output {
  whole,   ///< it reads no weight split in parts: every rank computes it whole
  split,   ///< a column layer: each rank holds its part of the outputs
  reduced, ///< a row layer: partial sums all-reduced, then held whole
};
/// Each node's, from the weights it reads (`uses`, parameters() at a degree
/// above 1): split when it reads a weight split in parts and none
/// row-parallel (parameter_tensor::row_parallel), reduced when it reads a
/// row-parallel one. A source that marks no weight row-parallel has its
/// splitting nodes paired in index order: split, reduced, split, ... The
/// one rule of `plan` (its activations and all-reduces) and `memory` (its
/// activations).
std::vector<tp_output> tensor_parallel_outputs(const parameter_uses& uses);

/// The sharding of every node: by the points when there are any (naming
/// the nodes first), else the model's own, else -- with `unsharded_ok` --
/// none (one stage); otherwise a usage_error.
sharding_result sharding_of(model_source& source, const points& where, bool unsharded_ok = false);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_MODEL_SOURCE_HPP
