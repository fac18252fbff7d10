// shard: annotate a model with __ipu_number / __pipeline_stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/report.hpp>

namespace shardpoint::app {
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

} // namespace

shard_outcome shard_model(const model_points& m, const pipeline_flags& checks, reading what) {
  checks.check();
  shard_outcome out{load_sharded(m, false, what), {}};
  onnx::annotate(out.sharded.model, out.sharded.result);
  out.diagnostics = onnx::validate(out.sharded.model, out.sharded.nodes, out.sharded.result,
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
  const onnx::input_sizes sizes = a.shapes.sizes(); // (flags checked before any work)
  // Without a report the nodes are needed only for their names and edges:
  // read as views where the model allows it (onnx::node_reading::views).
  const bool report = a.report.format != "none";
  shard_outcome done = shard_model(a.model, a.pipeline,
                                   report ? reading::graph_views_measured : reading::graph_views);
  auto& sharded = done.sharded; // (a reference, not a binding: the lambda below captures it)
  auto& diagnostics = done.diagnostics;
  if (!a.in_place) {
    protect_inputs(outputs, a.model.input, &sharded.model);
  }
  const bool write = !has_errors(diagnostics) || a.force;
  out.diagnostics = diagnostics;
  const auto save = [&] { onnx::save_model(sharded.model, output.staging()); };
  if (report) {
    // The model is written beside the report's shape inference where it can.
    const auto r =
        onnx::make_report(sharded.model, sharded.nodes, sharded.result, std::move(diagnostics),
                          &sizes, write ? save : std::function<void()>());
    out.report = a.report.format == "json" ? io::to_json(r) : io::to_table(r);
  } else {
    onnx::check_input_sizes(sharded.model, sizes); // what they would size is not made
    if (write) {
      save();
    }
  }
  if (write) {
    outputs.commit();
    out.written = true;
  }
  return out;
}

} // namespace shardpoint::app
