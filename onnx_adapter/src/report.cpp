// The report of a sharded model: groups, parameter bytes, crossings.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <shardpoint/onnx/report.hpp>

#include "graph_nodes.hpp"
#include "infer.hpp"
#include "node_view.hpp"
#include "shapes.hpp"

namespace shardpoint::onnx {

using shapes::inferred_shapes;
using shapes::value_bytes;

namespace {

// The report, and `also` run beside its shape inference when the model is
// not sized (sized inputs are written into the model while the report is
// made): whether it ran in `ran`. On `model`'s nodes, or on views
// (`views`; `model` then their skeleton, sizes none).
report make(::onnx::ModelProto& model, const wire::node_views* views, const node_graph& nodes,
            const sharding_result& result, std::vector<diagnostic> diagnostics,
            const input_sizes* sizes, const std::function<void()>& also, bool& ran) {
  const shapes::sized_inputs sized(model, sizes); // checked whether or not anything crosses
  const auto& g = model.graph();
  report r;
  r.diagnostics = std::move(diagnostics);
  r.boundary = result.has_stages() ? "stage" : "device";
  const auto side = [&](std::size_t v) {
    return (result.has_stages() ? result.stage(v) : result.device(v)).value_or(-1);
  };
  std::set<std::tuple<int, int, std::string_view>> crossings;
  for (std::size_t v = 0; v < result.size(); ++v) {
    for (auto t : nodes.reads(v)) {
      const auto p = nodes.producer[t];
      if (p != node_graph::no_producer && side(p) != side(v)) {
        crossings.emplace(side(p), side(v), nodes.tensors[t]);
      }
    }
  }
  // The groups: every weight counted (shapes::model_weights): a group holds
  // each weight tensor its nodes read once, and what its nodes hold
  // themselves. They need no shapes: found beside shape inference where
  // it can (inferred_shapes).
  const auto find_groups = [&] {
    const shapes::model_weights weights =
        views != nullptr ? shapes::weights_of(*views, g, nodes) : shapes::weights_of(g, nodes);
    struct group {
      std::size_t nodes = 0;
      std::vector<std::uint32_t> params;
      std::int64_t held = 0;
    };
    std::map<std::pair<int, int>, group> groups;
    for (std::size_t v = 0; v < result.size(); ++v) {
      auto& gr = groups[{result.device(v).value_or(-1), result.stage(v).value_or(-1)}];
      ++gr.nodes;
      gr.held += weights.held_bytes(v);
      for (auto t : nodes.reads(v)) {
        if (weights.tensors[t].bytes >= 0) {
          gr.params.push_back(t);
        }
      }
    }
    for (auto& [key, group] : groups) {
      auto& params = group.params;
      std::sort(params.begin(), params.end());
      params.erase(std::unique(params.begin(), params.end()), params.end());
      group_report gr{key.first, key.second, group.nodes, group.held};
      for (auto t : params) {
        gr.parameter_bytes += weights.tensors[t].bytes;
      }
      r.groups.push_back(gr);
    }
  };
  const auto unshaped = [&] {
    find_groups();
    if (also && !sized.active()) {
      also();
      ran = true;
    }
  };
  if (crossings.empty()) {
    unshaped();
    return r;
  }
  const auto types_made = views != nullptr
                              ? std::make_unique<inferred_shapes>(model, *views, unshaped)
                              : std::make_unique<inferred_shapes>(model, sized.active(), unshaped);
  const inferred_shapes& types = *types_made;
  for (const auto& [from, to, name] : crossings) {
    crossing_tensor c{std::string(name), from, to, std::nullopt, ""};
    if (const auto* type = types.find(name)) {
      if (const auto b = value_bytes(*type, name)) {
        c.bytes = b->bytes;
        c.per = b->per;
      }
    }
    r.crossings.push_back(std::move(c));
  }
  return r;
}

} // namespace

report make_report(::onnx::ModelProto& model, const node_graph& nodes,
                   const sharding_result& result, std::vector<diagnostic> diagnostics,
                   const input_sizes* sizes, const std::function<void()>& also) {
  bool ran = false;
  report r = make(model, nullptr, nodes, result, std::move(diagnostics), sizes, also, ran);
  if (also && !ran) {
    also(); // the model as it was given
  }
  return r;
}

report make_report(loaded_model& model, const node_graph& nodes, const sharding_result& result,
                   std::vector<diagnostic> diagnostics, const input_sizes* sizes,
                   const std::function<void()>& also) {
  const wire::node_views* views = shapes::inferable_views(model, sizes);
  if (views == nullptr) {
    return make_report(model.proto(), nodes, result, std::move(diagnostics), sizes, also);
  }
  // As measure_nodes(loaded_model&): on the views, nothing parsed.
  bool ran = false;
  report r = make(model.mutable_proto_without_nodes(), views, nodes, result, std::move(diagnostics),
                  sizes, also, ran);
  if (also && !ran) {
    also();
  }
  return r;
}

} // namespace shardpoint::onnx
