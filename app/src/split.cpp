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
  onnx::write_split(file, nodes, plan, folder, a.model.input, options);
  outputs.commit();
  if (a.report.format == "none") {
    return {"", plan.stages.size()};
  }
  return {a.report.format == "json" ? io::to_json(plan) : io::to_table(plan), plan.stages.size()};
}

} // namespace shardpoint::app
