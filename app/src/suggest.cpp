// suggest: the balanced split of a model into pipeline stages, against the
// splits other frameworks would give.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/io/suggestion.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::app {

namespace {

// The planner's view of the model for `suggest`: its items (the cap's
// measure) and how to plan any split, by layout position.
struct planner {
  parallel_config config;
  parameter_uses uses; // by position
  std::vector<std::int64_t> produced;
  std::vector<std::string> notes;
};

onnx::cost_model cost_of(const std::string& name) {
  return name == "unit"     ? onnx::cost_model::unit
         : name == "params" ? onnx::cost_model::params
                            : onnx::cost_model::flops;
}

} // namespace

suggest_outcome suggest_split(const suggest_options& a) {
  if (a.cost != "flops" && a.cost != "unit" && a.cost != "params") {
    throw bad_parameter_error("cost " + io::quote(a.cost) + " is not flops, unit or params");
  }
  std::optional<double> cap;
  if (!a.memory_per_device.empty()) {
    cap = static_cast<double>(io::parse_size("--memory-per-device", a.memory_per_device));
  }
  if (!std::isfinite(a.communication_weight) || a.communication_weight < 0 ||
      a.communication_weight > 1e12) {
    throw bad_parameter_error("--communication-weight " +
                              io::quote(detail::number(a.communication_weight)) +
                              " is not a number of cost units per byte in [0, 1e12]");
  }
  // Every output declared, and checked against every input, before the
  // model is read; written only once everything has worked.
  io::output_set outputs;
  protect_inputs(outputs, a.data.data() != nullptr ? std::string() : a.input, nullptr,
                 {{a.plan.layout, "the layout file"}});
  const io::staged_file* output_config =
      a.output_config.empty() ? nullptr : &outputs.file(a.output_config, "--output-config");
  const io::staged_file* output_model =
      a.output_model.empty() ? nullptr : &outputs.file(a.output_model, "--output-model");
  auto file = load_model(a.input, a.data, reading::graph);
  protect_inputs(outputs, a.data.data() != nullptr ? std::string() : a.input, &file);
  auto& model = file.proto();
  auto& graph = *model.mutable_graph();
  onnx::assign_names(graph, a.strict ? onnx::naming::strict : onnx::naming::rename_empty);
  const onnx::node_graph nodes = onnx::build_graph(graph);
  const onnx::node_weights w = onnx::measure_nodes(model, nodes, cost_of(a.cost));
  const auto names = onnx::node_names(graph);
  const auto index = get(boost::vertex_index, nodes.graph);
  // Laid out with producers late, so that a Constant joins the stage that
  // reads it: the algorithms index vertices by these positions (results,
  // points and memory items alike); node_order maps them back.
  const auto positions = onnx::producers_late_positions(nodes);
  std::vector<std::size_t> node_order(positions.size());
  memory_items params;
  {
    memory_items by_node = onnx::parameter_items(nodes, w);
    params.bytes = std::move(by_node.bytes);
    params.used.resize(positions.size());
    for (std::size_t v = 0; v < positions.size(); ++v) {
      node_order[positions[v]] = v;
      params.used[positions[v]] = std::move(by_node.used[v]);
    }
  }
  const auto view =
      indexed(nodes.graph, boost::make_iterator_property_map(positions.begin(), index),
              boost::make_iterator_property_map(names.begin(), index));
  const auto cost = boost::make_iterator_property_map(w.cost.begin(), index);
  const auto bytes = boost::make_iterator_property_map(w.output_bytes.begin(), index);
  const auto param_bytes = boost::make_iterator_property_map(w.parameter_bytes.begin(), index);
  std::optional<planner> mem;
  memory_items planner_items;
  if (a.planned) {
    mem.emplace();
    mem->config = a.plan.config();
    std::vector<io::layout_choice> layout;
    if (!a.plan.layout.empty()) {
      layout = io::read_layout_file(a.plan.layout);
    }
    const sharding_result one_stage(positions.size(), {}, {});
    const onnx::weight_options wo{static_cast<int>(mem->config.tensor_parallel), std::nullopt,
                                  true};
    const auto decisions =
        onnx::decide(graph, nodes, one_stage, wo, a.plan.layout.empty() ? nullptr : &layout);
    auto by_node = onnx::parameter_uses_of(nodes, decisions);
    mem->uses.tensors = std::move(by_node.tensors);
    mem->uses.used.resize(positions.size());
    for (std::size_t v = 0; v < positions.size(); ++v) {
      mem->uses.used[positions[v]] = std::move(by_node.used[v]);
    }
    mem->produced = onnx::activation_bytes(model, nodes, mem->config.micro_batch_size, mem->notes);
    const auto produced = boost::make_iterator_property_map(mem->produced.begin(), index);
    planner_items = plan_memory_items(view, mem->uses, produced, mem->config, a.stages);
  }
  // What the cap holds on: parameter bytes, or the planner's bound.
  const memory_items& capped = mem ? planner_items : params;
  // The planner's largest device for a split (by node index), when planning.
  const auto planned_largest = [&](const sharding_result& r) -> std::optional<double> {
    if (!mem) {
      return std::nullopt;
    }
    const auto produced = boost::make_iterator_property_map(mem->produced.begin(), index);
    const auto plan = plan_memory(stage_memory_inputs(view, r, mem->uses, produced), mem->config);
    return static_cast<double>(plan.largest_total_bytes);
  };

  balance_options options{
      .stages = a.stages, .memory_capacity = cap, .communication_weight = a.communication_weight};
  const balanced_sharding best = balanced_shard(view, cost, capped, bytes, options);

  io::suggestion s;
  s.cost_model = a.cost;
  s.memory_capacity = cap;
  s.communication_weight = a.communication_weight;
  s.exact = best.exact;
  s.exact_intervals = best.exact_intervals;
  s.method = best.method;
  const evaluate_options eo{.communication_weight = a.communication_weight};
  const auto measured = [&](std::string name, const sharding_result& r) {
    return io::named_split{std::move(name), evaluate(view, r, cost, capped, bytes, eo),
                           planned_largest(r)};
  };
  s.plan = measured("shardpoint", best.result);
  s.baselines.push_back(measured("uniform (DeepSpeed)", baselines::uniform(view, a.stages)));
  s.baselines.push_back(
      measured("parameters (DeepSpeed)", baselines::by_weight(view, param_bytes, a.stages)));
  s.baselines.push_back(
      measured("equal cost, greedy (PiPPy)", baselines::greedy_threshold(view, cost, a.stages)));
  if (mem) {
    s.memory_notes = mem->notes;
    for (const auto& g : evaluate(view, best.result, cost, params).stages) {
      s.stage_parameter_bytes.push_back(g.memory);
    }
  }
  for (const auto& p : best.points) {
    s.points.push_back({names[node_order[p.vertex]], p.device, p.stage, ""});
  }
  std::vector<int> stage_of(positions.size());
  for (std::size_t v = 0; v < positions.size(); ++v) {
    stage_of[v] = *best.result.stage(positions[v]);
  }
  const sharding_result by_node(positions.size(), stage_of, stage_of);

  pipeline_options checks;
  checks.num_devices = a.num_ipus;
  checks.spelling = flag_spelling;
  s.diagnostics = onnx::validate(graph, nodes, by_node, checks);
  suggest_outcome out;
  out.diagnostics = s.diagnostics;
  out.report = a.report.format == "json" ? io::to_json(s) : io::to_table(s);
  if (has_errors(s.diagnostics) && !a.force) {
    return out;
  }
  if (output_config != nullptr) {
    io::write_file_atomically(output_config->staging(), config::to_shard_yaml(s.points));
    out.written.push_back(a.output_config);
  }
  if (output_model != nullptr) {
    onnx::annotate(graph, by_node);
    onnx::save_model(file, output_model->staging());
    out.written.push_back(a.output_model);
  }
  outputs.commit();
  return out;
}

} // namespace shardpoint::app
