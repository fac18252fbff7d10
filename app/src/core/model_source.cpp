// What every graph format gets without writing it: points resolved by
// name, the core's validation, and the sharding of a request.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/app/model_source.hpp>
#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/topological_order.hpp>

namespace shardpoint::app {

cost_model cost_named(const std::string& name) {
  constexpr shardpoint::detail::enum_names<cost_model, 3> names{{"flops", "unit", "params"}};
  if (const auto c = names.find(name)) {
    return *c;
  }
  throw bad_parameter_error("cost " + io::quote(name) + " is not " + names.listed(" or "));
}

std::optional<std::string> rounding_estimate(const model_source& source,
                                             const std::vector<std::int64_t>& costs,
                                             std::string_view then) {
  const double unit = source.flops_per_cost_unit();
  const auto nodes = costs.size();
  double total = 0;
  for (const auto c : costs) {
    total += static_cast<double>(c);
  }
  if (!(unit > 1) || nodes == 0 || static_cast<double>(nodes) < 0.05 * total) {
    return std::nullopt;
  }
  const std::string units =
      unit == 1e6
          ? "MFLOPs"
          : shardpoint::detail::cat("units of ", shardpoint::detail::number(unit), " FLOPs");
  return shardpoint::detail::cat(
      "each node's FLOPs are counted in whole ", units, ", rounded up (at least 1): up to ", nodes,
      " of the ", static_cast<std::int64_t>(total), " counted (",
      static_cast<int>(std::lround(100.0 * static_cast<double>(nodes) / total)),
      "%) may be that rounding, ", then);
}

std::string_view no_split_pair() {
  return "the graph has no Megatron column/row pair (two MatMul or Gemm weights, one feeding the "
         "other) nor a vocabulary table";
}

std::string splits_no_weight(std::int64_t tensor_parallel, bool layout_given) {
  return "--tensor-parallel " + std::to_string(tensor_parallel) + " splits no weight: " +
         std::string(layout_given ? "the --layout file cuts none of them" : no_split_pair()) +
         ", so every rank holds every weight whole; give the cuts with --layout";
}

std::optional<std::string> unsplit_weights(const parameter_uses& uses, std::int64_t tensor_parallel,
                                           bool layout_given) {
  if (tensor_parallel <= 1 || uses.tensors.empty() ||
      std::any_of(uses.tensors.begin(), uses.tensors.end(),
                  [](const parameter_tensor& t) { return t.tensor_parallel_parts > 1; })) {
    return std::nullopt;
  }
  return splits_no_weight(tensor_parallel, layout_given);
}

void model_source::declare_inputs(io::output_set& /*outputs*/) const {}

void model_source::name_nodes(bool /*strict*/) {}

std::vector<std::int64_t> model_source::costs(cost_model how, std::vector<std::string>& estimates) {
  node_measures m = measure(how);
  estimates = std::move(m.estimates);
  return std::move(m.cost);
}

std::vector<tp_output> tensor_parallel_outputs(const parameter_uses& uses) {
  const bool roles = std::any_of(uses.tensors.begin(), uses.tensors.end(),
                                 [](const parameter_tensor& t) { return t.row_parallel; });
  std::vector<tp_output> out;
  out.reserve(uses.used.size());
  bool row = false; // without roles: the next splitting node is a row layer
  for (const auto& weights : uses.used) {
    bool splits = false;
    bool reduces = false;
    for (const auto w : weights) {
      splits = splits || uses.tensors[w].tensor_parallel_parts > 1;
      reduces = reduces || uses.tensors[w].row_parallel;
    }
    if (!roles) {
      reduces = splits && row;
      row = splits ? !row : row;
    }
    out.push_back(reduces ? tp_output::reduced : splits ? tp_output::split : tp_output::whole);
  }
  return out;
}

tensor_parallel_probe model_source::probe_tensor_parallel() {
  const auto n = num_vertices(graph());
  const sharding_result one(n, std::vector<int>(n, 0), std::vector<int>(n, 0));
  return {parameters(one, 2, nullptr), {}};
}

std::vector<std::string> model_source::weight_estimates() {
  return {};
}

std::optional<sharding_result> model_source::annotated() {
  return std::nullopt;
}

sharding_result model_source::shard(const std::vector<config::entry>& entries) {
  const auto& g = graph();
  const std::vector<std::string> all = names();
  const auto points = config::resolve(entries, num_vertices(g),
                                      [&](std::size_t v) -> std::string_view { return all[v]; });
  const auto index = get(boost::vertex_index, g);
  return manual_shard(indexed(g, index, boost::make_iterator_property_map(all.begin(), index)),
                      points);
}

std::vector<diagnostic> model_source::validate(const sharding_result& r,
                                               const pipeline_options& options) {
  const auto& g = graph();
  const std::vector<std::string> all = names();
  const auto index = get(boost::vertex_index, g);
  return shardpoint::validate(
      indexed(g, index, boost::make_iterator_property_map(all.begin(), index)), r, options);
}

void model_source::write_sharded(const sharding_result& /*r*/,
                                 const std::filesystem::path& /*path*/) {
  throw unsupported_error("this graph format cannot store a sharding: give no output model");
}

std::vector<std::string> model_source::write_tensor_parallel(const sharding_result& /*r*/,
                                                             int /*tensor_parallel*/,
                                                             io::staged_folder& /*folder*/,
                                                             const std::string& /*prefix*/) {
  return {};
}

void model_source::check_acyclic() {
  const auto& g = graph();
  const auto index = get(boost::vertex_index, g);
  if (is_topologically_labelled(indexed(g, index))) {
    return;
  }
  const std::vector<std::string> all = names();
  (void)topological_order(indexed(g, index, boost::make_iterator_property_map(all.begin(), index)));
}

sharding_result sharding_of(model_source& source, const points& where, bool unsharded_ok) {
  if (where.has_points()) {
    const std::vector<config::entry> entries = where.read();
    source.name_nodes(where.strict);
    return source.shard(entries);
  }
  if (auto stored = source.annotated()) {
    source.check_acyclic(); // a graph with a cycle is no model to plan
    return std::move(*stored);
  }
  if (!unsharded_ok) {
    throw usage_error("give --manual-sharding-config FILE or at least one --shard "
                      "NODE=DEVICE[:STAGE] (the model has no sharding attributes)");
  }
  source.check_acyclic();
  return sharding_result(num_vertices(source.graph()), {}, {});
}

} // namespace shardpoint::app
