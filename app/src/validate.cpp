// validate: check the sharding attributes already in a model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/report.hpp>

namespace shardpoint::app {

namespace {

// The names (as the model holds them) of the nodes the findings name, per
// finding: one pass over the nodes, from the views where they were read so.
std::vector<std::vector<std::string>> names_in(const onnx::loaded_model& file,
                                               const std::vector<diagnostic>& diagnostics) {
  std::vector<std::size_t> wanted;
  for (const auto& d : diagnostics) {
    wanted.insert(wanted.end(), d.vertices.begin(), d.vertices.end());
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<std::string> name(wanted.size());
  if (!wanted.empty()) {
    onnx::for_each_node(file, [&](std::size_t v, const onnx::node_fields& n) {
      const auto at = std::lower_bound(wanted.begin(), wanted.end(), v);
      if (at != wanted.end() && *at == v) {
        name[static_cast<std::size_t>(at - wanted.begin())] = n.name;
      }
    });
  }
  std::vector<std::vector<std::string>> out;
  for (const auto& d : diagnostics) {
    auto& names = out.emplace_back();
    for (auto v : d.vertices) {
      const auto at = std::lower_bound(wanted.begin(), wanted.end(), v);
      names.push_back(name[static_cast<std::size_t>(at - wanted.begin())]);
    }
  }
  return out;
}

} // namespace

validate_outcome validate_model(const validate_options& a) {
  a.pipeline.check();
  const onnx::input_sizes sizes = a.shapes.sizes();
  // Without a report the nodes are read as views where the model allows it
  // (their names, edges and sharding attributes are all the checks need).
  const bool report = a.report.format != "none";
  auto file =
      load_model(a.model, a.data, report ? reading::graph_views_measured : reading::graph_views);
  const onnx::node_graph nodes = onnx::build_graph(file);
  const auto result = onnx::read_annotations(file);
  validate_outcome out;
  out.diagnostics = onnx::validate(file, nodes, result, a.pipeline.options(result));
  out.node_names = names_in(file, out.diagnostics);
  if (report) {
    const auto r = onnx::make_report(file, nodes, result, out.diagnostics, &sizes);
    out.report = a.report.format == "json" ? io::to_json(r) : io::to_table(r);
  } else {
    onnx::check_input_sizes(file, sizes); // what they would size is not made
  }
  return out;
}

} // namespace shardpoint::app
