// shardpoint split: one runnable ONNX model per stage, and pipeline.json.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include <shardpoint/io/split_plan.hpp>
#include <shardpoint/onnx/split.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

struct split_command_options {
  model_points model;
  std::string output_dir;
  std::string by = "stage";
  onnx::split_options split;
  report_flag report;
  bool force = false;
};

int run(const split_command_options& a) {
  io::output_set outputs;
  protect_inputs(outputs, a.model.input, nullptr, {{a.model.config, "the sharding config"}});
  auto& folder = outputs.folder(a.output_dir, "--output-dir", a.force);
  auto [file, nodes, result, from_attributes, renamed] = load_sharded(a.model);
  protect_inputs(outputs, a.model.input, &file);
  auto& model = file.proto();
  // Nodes named only to resolve the config keep their empty names.
  for (auto v : renamed) {
    model.mutable_graph()->mutable_node(static_cast<int>(v))->clear_name();
  }
  onnx::split_options options = a.split;
  options.by_device = a.by == "device";
  const auto plan = onnx::plan_split(model.graph(), nodes, result, options);
  onnx::write_split(file, nodes, plan, folder, a.model.input, options);
  outputs.commit();
  std::cout << (a.report.format == "json" ? io::to_json(plan) : io::to_table(plan));
  std::cerr << "shardpoint: wrote " << plan.stages.size() << " stage model(s) and pipeline.json to "
            << a.output_dir << '\n';
  return exit_ok;
}

} // namespace

action add_split(CLI::App& app) {
  auto a = std::make_shared<split_command_options>();
  auto* cmd = app.add_subcommand(
      "split", "Write one runnable ONNX model per stage, and pipeline.json to chain them");
  a->model.add_to(*cmd, "Model to split");
  cmd->add_option("--output-dir,--output_dir", a->output_dir,
                  "Folder for stage_<s>.onnx and pipeline.json (new, or empty unless --force)")
      ->required();
  cmd->add_option("--by", a->by, "Group nodes by pipeline stage or by device")
      ->check(CLI::IsMember({"stage", "device"}));
  cmd->add_flag("--external-data", a->split.external_data,
                "Give each stage its own data file with only its weights");
  cmd->add_flag("--relay", a->split.relay,
                "Pass a tensor through every stage between its producer and a consumer");
  cmd->add_flag("--keep-sharding-attributes", a->split.keep_sharding_attributes,
                "Keep __ipu_number / __pipeline_stage on the stages' nodes");
  a->report.add_to(*cmd, {"table", "json"});
  cmd->add_flag("--force", a->force, "Replace an output folder that is not empty");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
