// validate: check the sharding attributes already in a model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/report.hpp>

namespace shardpoint::app {

validate_outcome validate_model(const validate_options& a) {
  a.pipeline.check();
  const onnx::input_sizes sizes = a.shapes.sizes();
  auto file = load_model(a.model, a.data, reading::graph);
  auto& model = file.proto();
  const auto& g = model.graph();
  const onnx::node_graph nodes = onnx::build_graph(g);
  const auto result = onnx::read_annotations(g);
  validate_outcome out;
  out.diagnostics = onnx::validate(g, nodes, result, a.pipeline.options(result));
  for (const auto& d : out.diagnostics) {
    auto& names = out.node_names.emplace_back();
    for (auto v : d.vertices) {
      names.push_back(v < static_cast<std::size_t>(g.node_size())
                          ? g.node(static_cast<int>(v)).name()
                          : std::string());
    }
  }
  if (a.report.format != "none") { // none: the verdict and the findings alone
    const auto r = onnx::make_report(model, nodes, result, out.diagnostics, &sizes);
    out.report = a.report.format == "json" ? io::to_json(r) : io::to_table(r);
  } else {
    onnx::check_input_sizes(file, sizes); // what they would size is not made
  }
  return out;
}

} // namespace shardpoint::app
