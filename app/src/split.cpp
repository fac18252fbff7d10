// split: one runnable ONNX model per stage, and pipeline.json.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/split_plan.hpp>
#include <shardpoint/onnx/split.hpp>

namespace shardpoint::app {

split_outcome split_model(const split_options& a) {
  io::output_set outputs;
  protect_inputs(outputs, a.model.input, nullptr, {{a.model.config, "the sharding config"}});
  auto& folder = outputs.folder(a.output_dir, "--output-dir", a.force);
  // Nodes read as views where the model allows it, the initializers parsed:
  // each stage's nodes are then copied from the input, none parsed.
  auto [file, nodes, result, from_attributes, renamed] =
      load_sharded(a.model, false, reading::graph_views_measured);
  protect_inputs(outputs, a.model.input, &file);
  // Nodes named only to resolve the config keep their empty names (naming
  // them parsed the nodes).
  for (auto v : renamed) {
    file.proto().mutable_graph()->mutable_node(static_cast<int>(v))->clear_name();
  }
  onnx::split_options options = a.split;
  options.by_device = a.by == "device";
  const auto plan = onnx::plan_split(file, nodes, result, options);
  const std::size_t data_files =
      onnx::write_split(file, nodes, plan, folder, a.model.input, options);
  outputs.commit();
  split_outcome out{"", plan.stages.size(), {}};
  // The same files as without the flag: said, not left to be found (a
  // trial's Paddle export, weights in Constant nodes, got no data file).
  if (options.external_data && data_files == 0) {
    out.warnings.push_back(
        "--external-data: no stage has an initializer of 1024 bytes or more, so no .data file "
        "was written (weights held in Constant nodes stay in their nodes; smaller tensors stay "
        "in the stage's file)");
  }
  if (a.report.format != "none") {
    out.report = a.report.format == "json" ? io::to_json(plan) : io::to_table(plan);
  }
  return out;
}

} // namespace shardpoint::app
