// shardpoint split: one runnable ONNX model per stage, and pipeline.json.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const split_options& a) {
  const auto r = split_model(a);
  std::cout << r.report;
  std::cerr << "shardpoint: wrote " << r.stages << " stage model(s) and pipeline.json to "
            << a.output_dir << '\n';
  return exit_ok;
}

} // namespace

action add_split(CLI::App& app) {
  auto a = std::make_shared<split_options>();
  auto* cmd = app.add_subcommand(
      "split", "Write one runnable ONNX model per stage, and pipeline.json to chain them");
  add_to(*cmd, a->model, "Model to split");
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
  add_to(*cmd, a->report, {"table", "json"});
  cmd->add_flag("--force", a->force, "Replace an output folder that is not empty");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
