// The steps ONNX commands share: loading a model, sharding it, declaring
// the inputs.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <filesystem>

#include <shardpoint/app/graphviz.hpp>
#include <shardpoint/app/requests.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::app {
namespace fs = std::filesystem;

onnx::loaded_model load_model(const std::string& path, std::string_view data, reading what) {
  const auto nodes = what == reading::graph_views ? onnx::node_reading::views
                     : what == reading::graph_views_measured
                         ? onnx::node_reading::views_with_initializers
                         : onnx::node_reading::parsed;
  if (data.data() != nullptr) {
    const std::string name = path.empty() ? "<bytes>" : path;
    return what == reading::whole ? onnx::parse_model(data, name)
                                  : onnx::parse_graph(data, name, nodes);
  }
  auto model = what == reading::whole ? onnx::read_model(path) : onnx::read_graph(path, nodes);
  onnx::check_external_locations(model, fs::path(path).parent_path());
  return model;
}

sharded_model load_sharded(const model_points& m, bool unsharded_ok, reading what) {
  sharded_model out{load_model(m.input, m.data, what), {}, {}, false, {}};
  if (!m.has_points()) { // (through the loaded model: nodes read as views stay views)
    const bool annotated = onnx::has_annotations(out.model);
    if (!annotated && !unsharded_ok) {
      throw usage_error("give --manual-sharding-config FILE or at least one --shard "
                        "NODE=DEVICE[:STAGE] (the model has no sharding attributes)");
    }
    out.nodes = onnx::build_graph(out.model);
    onnx::check_acyclic(out.model, out.nodes);      // (points would have refused a cycle)
    out.result = onnx::read_annotations(out.model); // (none: every node unsharded)
    out.from_attributes = annotated;
    return out;
  }
  const std::vector<onnx::config_entry> entries = m.read();
  // (Through the loaded model: nodes read as views stay views.)
  out.renamed =
      onnx::assign_names(out.model, m.strict ? onnx::naming::strict : onnx::naming::rename_empty);
  out.nodes = onnx::build_graph(out.model);
  out.result = onnx::shard(out.model, out.nodes, onnx::resolve(out.model, entries));
  return out;
}

namespace {

// A dimension of --input-shape / --dim: a whole number in [1, 2^31).
std::int64_t dimension(const std::string& flag, const std::string& text) {
  const std::int64_t d = parse_count(flag, text);
  if (d < 1 || d >= (std::int64_t{1} << 31)) {
    throw bad_parameter_error(flag + ": a dimension must be in [1, 2^31), not " + io::quote(text));
  }
  return d;
}

} // namespace

onnx::input_sizes shape_flags::sizes() const {
  onnx::input_sizes out;
  for (const auto& text : input_shapes) {
    const auto eq = text.rfind('=');
    const std::string flag = "--input-shape " + io::quote(text);
    std::vector<std::int64_t> dims;
    std::string rest = eq == std::string::npos ? text : text.substr(eq + 1);
    for (std::size_t at = 0; at <= rest.size();) {
      const auto comma = std::min(rest.find(',', at), rest.size());
      dims.push_back(dimension(flag, rest.substr(at, comma - at)));
      at = comma + 1;
    }
    if (eq == 0) {
      throw bad_parameter_error(flag + ": give NAME=D0,D1,... or D0,D1,...");
    }
    out.shapes.emplace_back(eq == std::string::npos ? "" : text.substr(0, eq), std::move(dims));
  }
  for (const auto& text : dims) {
    const auto eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      throw bad_parameter_error("--dim " + io::quote(text) + ": give SYMBOL=N");
    }
    out.dims.emplace_back(text.substr(0, eq),
                          dimension("--dim " + io::quote(text), text.substr(eq + 1)));
  }
  return out;
}

void protect_inputs(io::output_set& outputs, const std::string& path,
                    const onnx::loaded_model* model,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> files) {
  if (!path.empty()) {
    if (model != nullptr) { // (load_model checked its locations: inside its folder)
      onnx::declare_model_inputs(outputs, path, *model);
    } else {
      outputs.input(path, "the input model");
    }
  }
  for (const auto& [file, what] : files) {
    if (!file.empty()) {
      outputs.input(std::string(file), what);
    }
  }
}

report_flag drawn(report_flag report, const std::string& path) {
  if (report.lay_out == nullptr) {
    report.lay_out = graphviz_layout;
  }
  if (report.title.empty()) {
    report.title =
        path.empty() ? std::string("model") : std::filesystem::path(path).filename().string();
  }
  return report;
}

} // namespace shardpoint::app
