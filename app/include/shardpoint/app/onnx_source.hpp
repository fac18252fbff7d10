// onnx_source: an ONNX model as a model_source (app/model_source.hpp) --
// the format the command line and the Python package plan on.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_ONNX_SOURCE_HPP
#define SHARDPOINT_APP_ONNX_SOURCE_HPP

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <shardpoint/app/model_source.hpp>
#include <shardpoint/app/requests.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/onnx/costs.hpp>
#include <shardpoint/onnx/weight_files.hpp>

namespace shardpoint::app {

class onnx_source final : public model_source {
public:
  /// The model file `path`, or the bindings' bytes `data` (when not null;
  /// `path` then only names them), read as a graph: the weights' bytes stay
  /// in the file (onnx::read_graph).
  onnx_source(std::string path, std::string_view data, onnx::input_sizes sizes = {});

  void declare_inputs(io::output_set& outputs) const override;
  void load(io::output_set& outputs) override;
  void name_nodes(bool strict) override;

  const graph_type& graph() override;
  void check_acyclic() override; ///< "the model's nodes form a cycle through node N 'x'"
  std::vector<std::string> names() override;
  std::vector<std::string> op_types() override;
  node_measures measure(cost_model how) override;
  std::vector<std::int64_t> costs(cost_model how, std::vector<std::string>& estimates) override;

  std::optional<sharding_result> annotated() override;
  sharding_result shard(const std::vector<config::entry>& entries) override;
  std::vector<diagnostic> validate(const sharding_result& r,
                                   const pipeline_options& options) override;
  bool writes_sharding() const override { return true; }
  std::string sharded_file_name() const override { return "sharded.onnx"; }
  double flops_per_cost_unit() const override { return 1e6; } // estimate_costs' MFLOPs
  std::optional<held_batch> measured_batch() override;
  void count_one_sample() override;
  std::vector<std::string> write_tensor_parallel(const sharding_result& r, int tensor_parallel,
                                                 io::staged_folder& folder,
                                                 const std::string& prefix) override;
  void write_sharded(const sharding_result& r, const std::filesystem::path& path) override;

  parameter_uses parameters(const sharding_result& stages, std::int64_t tensor_parallel,
                            const std::vector<io::layout_choice>* layout) override;
  /// The split dimensions' lengths as `weights strategy` decides them.
  tensor_parallel_probe probe_tensor_parallel() override;
  /// ConstantOfShape nodes making tensors from initializer shapes (a model
  /// whose weights were replaced by their shapes): not counted as weights.
  std::vector<std::string> weight_estimates() override;
  std::vector<std::int64_t> activations(std::int64_t micro_batch_size,
                                        std::vector<std::string>& notes,
                                        std::vector<std::string>& estimates) override;

private:
  [[nodiscard]] const std::string& file_path() const; ///< empty for the bindings' bytes
  ::onnx::ModelProto& proto();
  /// The graph's inputs, outputs and initializers, without parsing nodes
  /// read as views (its nodes then empty: not to be read).
  const ::onnx::GraphProto& tensors();
  /// The model without its nodes where they are views (onnx::loaded_model::
  /// mutable_proto_without_nodes: its inputs may change for a while), else
  /// proto().
  ::onnx::ModelProto& skeleton();
  const onnx::node_graph& nodes();

  std::string path_;
  std::string_view data_;
  onnx::input_sizes sizes_; ///< the user's sizes for the free input dimensions
  std::optional<onnx::loaded_model> model_;
  std::optional<onnx::node_graph> nodes_; ///< built when first asked for
  /// What of the weights is a guess (onnx::node_weights' unsized_weights,
  /// made_from_shapes), once measured.
  std::optional<std::pair<std::size_t, onnx::shape_made_tensors>> weight_guesses_;
};

/// MindSpore strategy files of `strategies` into `folder`, under `prefix`:
/// stage<N>.ckpt (or .json), none for a stage without weights (MindSpore
/// refuses an empty one). Returns their names (with the prefix).
std::vector<std::string>
write_strategy_files(const std::vector<weights::stage_strategy>& strategies,
                     io::staged_folder& folder, const std::string& prefix, bool json,
                     weights::layout_form form);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_ONNX_SOURCE_HPP
