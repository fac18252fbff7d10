// shardpoint shard: annotate a model with __ipu_number / __pipeline_stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>
#include <memory>

#include "api.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {
namespace fs = std::filesystem;

namespace {

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
  return output;
}

int run(const shard_options& a) {
  const auto r = shard_file(a);
  if (a.report.format == "none") {
    print_findings(r.diagnostics);
  }
  std::cout << r.report;
  if (!r.written) {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
    return exit_invalid;
  }
  std::cerr << "shardpoint: wrote " << r.output.string() << '\n';
  return has_errors(r.diagnostics) ? exit_invalid : exit_ok;
}

} // namespace

shard_outcome shard_model(const model_points& m, const pipeline_flags& checks) {
  shard_outcome out{load_sharded(m), {}};
  auto& graph = *out.sharded.model.proto().mutable_graph();
  onnx::annotate(graph, out.sharded.result);
  out.diagnostics = onnx::validate(graph, out.sharded.nodes, out.sharded.result,
                                   checks.options(out.sharded.result));
  return out;
}

shard_file_outcome shard_file(const shard_options& a) {
  shard_file_outcome out;
  out.output = output_path(a);
  io::output_set outputs;
  // --in-place replaces the model (atomically: the new file is renamed over
  // it); otherwise the model is one of the inputs no output may touch.
  protect_inputs(outputs, a.in_place ? std::string() : a.model.input, nullptr,
                 {{a.model.config, "the sharding config"}});
  auto& output = outputs.file(out.output, a.in_place ? "--in-place" : "--output-model");
  auto [sharded, diagnostics] = shard_model(a.model, a.pipeline);
  if (!a.in_place) {
    protect_inputs(outputs, a.model.input, &sharded.model);
  }
  const bool failed = has_errors(diagnostics);
  auto& model = sharded.model.proto();
  out.diagnostics = diagnostics;
  if (a.report.format != "none") {
    const auto r = onnx::make_report(model, sharded.nodes, sharded.result, std::move(diagnostics));
    out.report = a.report.format == "json" ? io::to_json(r) : io::to_table(r);
  }
  if (!failed || a.force) {
    onnx::save_model(sharded.model, output.staging());
    outputs.commit();
    out.written = true;
  }
  return out;
}

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
