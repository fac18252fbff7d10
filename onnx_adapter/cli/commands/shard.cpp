// shardpoint shard: annotate a model with __ipu_number / __pipeline_stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {
namespace fs = std::filesystem;

namespace {

struct shard_options {
  model_points model;
  std::string output;
  std::string output_dir;
  pipeline_flags pipeline;
  report_flag report;
  bool in_place = false;
  bool force = false;
};

fs::path output_path(const shard_options& a) {
  if (a.in_place) {
    if (!a.output.empty() && fs::path(a.output) != fs::path(a.model.input)) {
      throw usage_error("--in-place writes the input model; do not give --output-model too");
    }
    return a.model.input;
  }
  if (a.output.empty()) {
    throw usage_error("--output-model is required (or --in-place)");
  }
  fs::path output = a.output;
  if (!a.output_dir.empty() && output.is_relative()) {
    output = fs::path(a.output_dir) / output;
  }
  check_output_is_not_input(output, a.model.input);
  return output;
}

int run(const shard_options& a) {
  const fs::path output = output_path(a);
  auto [file, nodes, result, from_attributes, renamed] = load_sharded(a.model);
  auto& model = file.proto();
  auto& graph = *model.mutable_graph();
  onnx::annotate(graph, result);
  auto diagnostics = onnx::validate(graph, nodes, result, a.pipeline.options(result));
  const bool failed = has_errors(diagnostics);
  if (a.report.format == "none") {
    print_findings(diagnostics);
  } else {
    const auto r = onnx::make_report(model, nodes, result, std::move(diagnostics));
    std::cout << (a.report.format == "json" ? io::to_json(r) : io::to_table(r));
  }
  if (failed && !a.force) {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
    return exit_invalid;
  }
  onnx::save_model(model, output);
  std::cerr << "shardpoint: wrote " << output.string() << '\n';
  return failed ? exit_invalid : exit_ok;
}

} // namespace

action add_shard(CLI::App& app) {
  auto a = std::make_shared<shard_options>();
  auto* cmd = app.add_subcommand("shard", "Annotate a model with __ipu_number / __pipeline_stage");
  a->model.add_to(*cmd);
  cmd->add_option("--output-model,--output_model", a->output, "Where to write the sharded model");
  cmd->add_option("--output-dir,--output_dir", a->output_dir,
                  "Folder for a relative --output-model");
  a->pipeline.add_to(*cmd, "Micro-batches per step (with pipelining: a multiple of the stages)");
  a->report.add_to(*cmd, {"table", "json", "none"},
                   "Report format; none prints only validation findings (on stderr) and skips "
                   "the shape inference that sizes the crossing tensors");
  cmd->add_flag("--in-place,--in_place", a->in_place, "Overwrite the input model");
  cmd->add_flag("--force", a->force, "Write the model even when validation fails");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
