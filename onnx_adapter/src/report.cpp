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

#include "shapes.hpp"

namespace shardpoint::onnx {

using shapes::inferred_shapes;
using shapes::value_bytes;

report make_report(::onnx::ModelProto& model, const node_graph& nodes,
                   const sharding_result& result, std::vector<diagnostic> diagnostics) {
  const auto& g = model.graph();
  report r;
  r.diagnostics = std::move(diagnostics);
  const std::vector<std::int64_t> initializer_bytes = shapes::initializer_sizes(g, nodes);
  std::map<std::pair<int, int>, std::pair<std::size_t, std::vector<std::uint32_t>>> groups;
  for (std::size_t v = 0; v < result.size(); ++v) {
    auto& [count, params] = groups[{result.device(v).value_or(-1), result.stage(v).value_or(-1)}];
    ++count;
    for (auto t : nodes.reads(v)) {
      if (initializer_bytes[t] >= 0) {
        params.push_back(t);
      }
    }
  }
  for (auto& [key, group] : groups) {
    auto& params = group.second;
    std::sort(params.begin(), params.end());
    params.erase(std::unique(params.begin(), params.end()), params.end());
    group_report gr{key.first, key.second, group.first, 0};
    for (auto t : params) {
      gr.parameter_bytes += initializer_bytes[t];
    }
    r.groups.push_back(gr);
  }

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
  if (!crossings.empty()) {
    const inferred_shapes types(model);
    for (const auto& [from, to, name] : crossings) {
      crossing_tensor c{std::string(name), from, to, std::nullopt, ""};
      if (const auto* type = types.find(name)) {
        if (const auto b = value_bytes(*type)) {
          c.bytes = b->bytes;
          c.per = b->per;
        }
      }
      r.crossings.push_back(std::move(c));
    }
  }
  return r;
}

} // namespace shardpoint::onnx
