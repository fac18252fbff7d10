// suggest: the balanced split of a graph, in any format, into pipeline
// stages, against the splits other frameworks would give.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <limits>

#include <boost/property_map/property_map.hpp>
#include <boost/range/iterator_range.hpp>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/io/suggestion.hpp>
#include <shardpoint/io/units.hpp>

#include "laid_out.hpp"
#include "picture.hpp"

namespace shardpoint::app {

namespace {

using detail::laid_out_model;
using shardpoint::detail::cat;

// The request's numbers; the memory cap, when given.
std::optional<double> checked_request(const suggest_request& a) {
  cost_named(a.cost); // checked before anything is read
  if (!a.output_config.empty() && config::is_json_file(a.output_config)) {
    // What suggest writes, shard must read back: a .json name is read as JSON.
    throw bad_parameter_error("--output-config " + io::quote(a.output_config) +
                              ": suggest writes PopRT's shard.yaml (YAML), and a .json config is "
                              "read as JSON; name it .yaml");
  }
  if (!std::isfinite(a.communication_weight) || a.communication_weight < 0 ||
      a.communication_weight > 1e12) {
    throw bad_parameter_error("--communication-weight " +
                              io::quote(shardpoint::detail::number(a.communication_weight)) +
                              " is not a number of cost units per byte in [0, 1e12]");
  }
  if (a.memory_per_device.empty()) {
    return std::nullopt;
  }
  return static_cast<double>(io::parse_capacity("--memory-per-device", a.memory_per_device));
}

// The memory planner's view of the model, when a planner option is given:
// what the cap holds on (`items`) and how to plan any split.
struct planner {
  parallel_config config;
  parameter_uses uses; ///< by position
  std::vector<std::int64_t> produced;
  /// How tensor parallelism holds each node's outputs, by node as memory
  /// pairs them (empty when T is 1).
  std::vector<tp_output> held;
  std::vector<std::string> notes;
  std::vector<std::string> estimates; ///< of the activations
  memory_items items;
};

planner make_planner(const laid_out_model& m, model_source& source, const suggest_request& a) {
  planner p;
  p.config = a.plan.config();
  std::vector<io::layout_choice> layout;
  if (!a.plan.layout.empty()) {
    layout = io::read_layout_file(a.plan.layout);
  }
  const sharding_result one_stage(m.positions.size(), {}, {});
  auto by_node = source.parameters(one_stage, p.config.tensor_parallel,
                                   a.plan.layout.empty() ? nullptr : &layout);
  if (auto none = unsplit_weights(by_node, p.config.tensor_parallel, !a.plan.layout.empty())) {
    p.notes.push_back(std::move(*none));
  }
  if (p.config.tensor_parallel > 1) {
    p.held = tensor_parallel_outputs(by_node);
  }
  p.uses.tensors = std::move(by_node.tensors);
  p.uses.used = m.to_positions(std::move(by_node.used));
  p.produced = source.activations(p.config.micro_batch_size, p.notes, p.estimates);
  p.items = plan_memory_items(m.view(), p.uses, m.by_node(p.produced), p.config, a.stages);
  return p;
}

// The report: the split found, the same model split as other frameworks
// would split it (each measured alike), and the points that give it.
io::suggestion describe(const laid_out_model& m, const std::optional<planner>& mem,
                        const memory_items& capped, const balanced_sharding& best,
                        const suggest_request& a, std::optional<double> cap) {
  const auto view = m.view();
  const auto cost = m.by_node(m.w.cost);
  const auto bytes = m.by_node(m.w.output_bytes);
  io::suggestion s;
  s.cost_model = a.cost;
  s.memory_capacity = cap;
  s.communication_weight = a.communication_weight;
  s.exact = best.exact;
  s.exact_intervals = best.exact_intervals;
  s.method = best.method;
  s.estimates = m.w.estimates;
  if (mem) { // the activations the cap holds on, when planning
    s.estimates.insert(s.estimates.end(), mem->estimates.begin(), mem->estimates.end());
  }
  // The planner's largest device for a split, when planning.
  const auto planned_largest = [&](const sharding_result& r) -> std::optional<double> {
    if (!mem) {
      return std::nullopt;
    }
    auto inputs = stage_memory_inputs(view, r, mem->uses, m.by_node(mem->produced));
    detail::hold_column_outputs(inputs, m.by_node_index(r), mem->held, mem->produced,
                                mem->config.tensor_parallel);
    return static_cast<double>(plan_memory(inputs, mem->config).largest_total_bytes);
  };
  const evaluate_options eo{.communication_weight = a.communication_weight};
  const auto measured = [&](std::string name, const sharding_result& r) {
    return io::named_split{std::move(name), evaluate(view, r, cost, capped, bytes, eo),
                           planned_largest(r)};
  };
  // The baselines, each a pass over every node or more, side by side (all
  // read the model only); taken in order, so that an error is the first
  // one's, as one after the other.
  const auto beside = [&](std::string name, auto split) {
    return std::async(std::launch::async, [&measured, name = std::move(name), split] {
      return measured(name, split());
    });
  };
  std::future<io::named_split> others[] = {
      beside("uniform (DeepSpeed)", [&] { return baselines::uniform(view, a.stages); }),
      beside("parameters (DeepSpeed)",
             [&] { return baselines::by_weight(view, m.by_node(m.w.parameter_bytes), a.stages); }),
      beside("equal cost, greedy (PiPPy)",
             [&] { return baselines::greedy_threshold(view, cost, a.stages); })};
  s.plan = measured("shardpoint", best.result);
  for (auto& f : others) {
    s.baselines.push_back(f.get());
  }
  if (mem) {
    s.memory_notes = mem->notes;
    for (const auto& g : evaluate(view, best.result, cost, m.params).stages) {
      s.stage_parameter_bytes.push_back(g.memory);
    }
  }
  for (const auto& p : best.points) {
    s.points.push_back({m.names[m.node_order[p.vertex]], p.device, p.stage, ""});
  }
  return s;
}

// The balanced split, or why none fits the cap in the user's words: bytes
// and the flag, a node by its name and index (the core's error gives raw
// numbers, and a vertex by its position in the layout).
//
// The planner's items depend on the stage count (1F1B holds min(M, S)
// micro-batches at stage 0), so the count a split at S stages needs may
// not fit at that count: `items_for` gives the items at another count, and
// the count said is the first, from that one up, a split fits at (a
// trial's "at least 11 stages" was refused at 11 to 15).
balanced_sharding balanced_under_cap(const laid_out_model& m, const memory_items& capped,
                                     const balance_options& options, bool planned,
                                     const std::function<memory_items(int)>& items_for = nullptr) {
  const auto solve = [&](const memory_items& items, int stages) {
    balance_options at = options;
    at.stages = stages;
    return balanced_shard(m.view(), m.by_node(m.w.cost), items, m.by_node(m.w.output_bytes), at);
  };
  try {
    return solve(capped, options.stages);
  } catch (const infeasible_partition_error& first) {
    std::optional<infeasible_partition_error> e = first;
    int needed = first.stages_needed();
    const auto most = static_cast<int>(std::min<std::size_t>(m.node_order.size(), 1 << 20));
    while (items_for && needed > options.stages && needed <= most) {
      try {
        (void)solve(items_for(needed), needed);
        break; // it fits at `needed`
      } catch (const infeasible_partition_error& again) {
        if (again.stages_needed() == 0) { // a node alone: more stages hold more
          e = again;
          needed = 0;
          break;
        }
        needed = std::max(needed + 1, again.stages_needed());
      } catch (const bad_parameter_error&) {
        break; // a count the planner's rules refuse: the first count stands
      }
    }
    const double cap = e->capacity();
    const std::string flag = cat("--memory-per-device ", io::human_bytes(cap), " (",
                                 shardpoint::detail::number(cap), " bytes)");
    if (needed > 0) {
      throw infeasible_partition_error(
          cat("no split into ", options.stages, " stage(s) keeps each stage's ",
              planned ? "memory, as the planner counts it," : "parameter bytes", " within ", flag,
              needed > most ? cat(": no stage count up to ", most, " does")
                            : cat(": it needs at least ", needed, " stages")),
          std::nullopt, needed, cap);
    }
    if (e->vertex() && *e->vertex() < m.node_order.size()) {
      const std::size_t node = m.node_order[*e->vertex()];
      const double alone = e->vertex_memory();
      const std::string bytes =
          cat(io::human_bytes(alone), " (", shardpoint::detail::number(alone), " bytes)");
      throw infeasible_partition_error(
          cat("node ", io::quote(m.names[node]), " (index ", node, ") alone ",
              planned ? "needs " + bytes + ", as the planner counts it,"
                      : "holds " + bytes + " of parameters,",
              " more than ", flag),
          node, 0, cap, alone);
    }
    throw *e;
  }
}

// The nodes without a node input (Constants) that `by_node` puts in an
// earlier stage than every node reading them, by stage, then node: what
// balanced_shard's step 3b could not move to their readers (the docs
// promised a Constant its reader's stage; a trial found three crossing).
std::vector<std::string> sources_behind(const laid_out_model& m, const sharding_result& by_node) {
  const auto& g = m.graph;
  const std::size_t n = m.node_order.size();
  std::vector<bool> read(n, false);
  for (const auto e : boost::make_iterator_range(edges(g))) {
    read[target(e, g)] = true;
  }
  std::vector<std::pair<int, std::size_t>> behind; // (stage, node)
  for (std::size_t v = 0; v < n; ++v) {
    const std::optional<int> s = by_node.stage(v);
    if (read[v] || out_degree(v, g) == 0 || !s) {
      continue;
    }
    int first = std::numeric_limits<int>::max();
    for (const auto e : boost::make_iterator_range(out_edges(v, g))) {
      first = std::min(first, by_node.stage(target(e, g)).value_or(first));
    }
    if (first > *s) {
      behind.emplace_back(*s, v);
    }
  }
  std::sort(behind.begin(), behind.end());
  std::vector<std::string> names;
  for (const auto& [s, v] : behind) {
    names.push_back(m.names[v]);
  }
  return names;
}

// The picture of the suggestion: its split (picture.hpp), the stage
// counts around it (the best bottleneck of each against its lower bound,
// from S - 8, at least 1, to 2S, at most S + 8: 17 solves at most -- from
// 1, a trial's 65536 stages asked for 65544 -- each as balanced_shard
// solved S; a count no split of which fits the cap is left out), the
// baselines and the forward timeline.
io::picture draw_suggestion(model_source& source, const laid_out_model& m,
                            const std::optional<planner>& mem, const memory_items& capped,
                            const io::suggestion& s, const sharding_result& by_node,
                            const suggest_request& a, std::optional<double> cap) {
  detail::picture_inputs in;
  in.cost = cost_named(a.cost);
  in.capacity = cap;
  in.communication_weight = a.communication_weight;
  in.lay_out = a.report.lay_out;
  io::picture p = detail::picture_of(source, by_node, in);
  if (mem) { // the memory the cap holds on: the report's memory_bytes
    for (std::size_t k = 0; k < p.stages.size() && k < s.plan.metrics.stages.size(); ++k) {
      p.stages[k].memory_bytes = s.plan.metrics.stages[k].memory;
    }
  }
  const evaluate_options eo{.communication_weight = a.communication_weight};
  for (int k = std::max(1, a.stages - 8); k <= std::min(2 * a.stages, a.stages + 8); ++k) {
    try {
      const auto r = balanced_shard(
          m.view(), m.by_node(m.w.cost), capped, m.by_node(m.w.output_bytes),
          {.stages = k, .memory_capacity = cap, .communication_weight = a.communication_weight});
      const auto e = evaluate(m.view(), r.result, m.by_node(m.w.cost), capped,
                              m.by_node(m.w.output_bytes), eo);
      p.candidates.push_back({k, e.bottleneck, e.lower_bound});
    } catch (const shardpoint::error&) {
      // no split into k stages fits the cap
    }
  }
  p.chosen_stages = a.stages;
  for (const auto& b : s.baselines) {
    p.baselines.emplace_back(b.name, b.metrics.bottleneck);
  }
  const simulate_request forward; // the forward passes, as simulate runs them by default
  detail::add_run(p, source, by_node, cost_named(a.cost), forward);
  p.command = "suggest";
  p.title = a.report.title;
  detail::add_estimates(p, s.estimates);
  detail::add_findings(p, s.diagnostics);
  return p;
}

} // namespace

suggest_outcome suggest(model_source& source, const suggest_request& a) {
  const std::optional<double> cap = checked_request(a);
  if (!a.output_model.empty() && !source.writes_sharding()) {
    throw usage_error("--output-model: this graph format cannot store a sharding; "
                      "--output-config writes the points");
  }
  // Every output declared, and checked against every input, before the
  // model is read; written only once everything has worked.
  io::output_set outputs;
  source.declare_inputs(outputs);
  if (!a.plan.layout.empty()) {
    outputs.input(a.plan.layout, "the layout file");
  }
  const io::staged_file* output_config =
      a.output_config.empty() ? nullptr : &outputs.file(a.output_config, "--output-config");
  const io::staged_file* output_model =
      a.output_model.empty() ? nullptr : &outputs.file(a.output_model, "--output-model");
  const detail::picture_output picture = detail::declare_picture(outputs, a.report, a.force);
  source.load(outputs);
  source.name_nodes(a.strict);

  const laid_out_model m(source, cost_named(a.cost));
  const std::optional<planner> mem =
      a.planned ? std::optional<planner>(make_planner(m, source, a)) : std::nullopt;
  // What the cap holds on: parameter bytes, or the planner's bound.
  const memory_items& capped = mem ? mem->items : m.params;
  const balance_options options{
      .stages = a.stages, .memory_capacity = cap, .communication_weight = a.communication_weight};
  const auto items_at = [&](int stages) {
    return plan_memory_items(m.view(), mem->uses, m.by_node(mem->produced), mem->config, stages);
  };
  const balanced_sharding best =
      balanced_under_cap(m, capped, options, mem.has_value(),
                         mem ? std::function<memory_items(int)>(items_at) : nullptr);

  io::suggestion s = describe(m, mem, capped, best, a, cap);
  // The report's parameters, and the cap and costs that count them: a
  // weight counted as 0 bytes, or held as ConstantOfShape, is a guess in
  // each (a trial saw a parameters column of 7.6 KiB for 97.7 MiB of
  // weights so held, with --cost flops, and no warning).
  for (auto& e : source.weight_estimates()) {
    s.estimates.push_back(std::move(e));
  }
  // Small nodes' FLOPs rounded up to a unit each: the split balances the
  // rounding as much as the FLOPs (a trial's split of a small model into
  // three was one per node).
  if (a.cost == "flops") {
    if (auto e = rounding_estimate(source, m.w.cost, "which the split balances as FLOPs")) {
      s.estimates.push_back(std::move(*e));
    }
  }
  const sharding_result by_node = m.by_node_index(best.result);
  s.sources_behind = sources_behind(m, by_node);
  pipeline_options checks;
  checks.num_devices = a.num_ipus;
  checks.spelling = flag_spelling;
  s.diagnostics = source.validate(by_node, checks);
  suggest_outcome out;
  out.diagnostics = s.diagnostics;
  out.warnings = s.estimates;
  if (a.report.picture()) { // a report: written even when the split fails validation
    out.picture = draw_suggestion(source, m, mem, capped, s, by_node, a, cap);
    detail::write_picture(out.picture, picture, a.report, out.written);
  } else {
    out.report = a.report.format == "json" ? io::to_json(s) : io::to_table(s);
  }
  if (has_errors(s.diagnostics) && !a.force) {
    outputs.commit();
    return out;
  }
  if (output_config != nullptr) {
    io::write_file_atomically(output_config->staging(), config::to_shard_yaml(s.points));
    out.written.push_back(a.output_config);
  }
  if (output_model != nullptr) {
    source.write_sharded(by_node, output_model->staging());
    out.written.push_back(a.output_model);
  }
  outputs.commit();
  return out;
}

} // namespace shardpoint::app
