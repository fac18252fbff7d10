// The planning commands' pictures (picture.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <set>

#include <boost/range/iterator_range.hpp>

#include <shardpoint/io/files.hpp>
#include <shardpoint/io/units.hpp>
#include <shardpoint/runtime/pipeline.hpp>

#include "laid_out.hpp"
#include "picture.hpp"
#include "training.hpp"

namespace shardpoint::app::detail {

namespace {

// The group of each node: its stage, or its device when the sharding has
// no stages (as evaluate() groups); 0 without either.
std::vector<int> groups_of(const sharding_result& r) {
  std::vector<int> out(r.size(), 0);
  for (std::size_t v = 0; v < r.size(); ++v) {
    const auto g = r.has_stages() ? r.stage(v) : r.device(v);
    out[v] = g.value_or(0);
  }
  return out;
}

// `r`, or -- when it shards nothing -- one stage on one device.
sharding_result staged(const sharding_result& r) {
  if (r.has_stages() || r.has_devices()) {
    return r;
  }
  const std::size_t n = r.size();
  return {n, std::vector<int>(n, 0), std::vector<int>(n, 0)};
}

// Step 1: the blocks, and each position's block.
std::vector<std::size_t> add_blocks(io::picture& p, const laid_out_model& m,
                                    const std::vector<int>& group, const sharding_result& r,
                                    const std::vector<std::string>& ops) {
  const std::size_t n = m.positions.size();
  std::vector<std::size_t> block_of(n, 0);
  std::vector<std::size_t> last_block(m.params.bytes.size(), SIZE_MAX); // a weight's last block
  std::map<std::string, std::size_t> histogram;
  const auto close = [&] {
    auto& b = p.blocks.back();
    b.ops.assign(histogram.begin(), histogram.end());
    std::stable_sort(b.ops.begin(), b.ops.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    histogram.clear();
  };
  for (std::size_t pos = 0; pos < n; ++pos) {
    const std::size_t v = m.node_order[pos];
    if (p.blocks.empty() || p.blocks.back().stage != group[v]) {
      if (!p.blocks.empty()) {
        close();
      }
      io::picture::block b;
      b.stage = group[v];
      b.device = r.device(v).value_or(group[v]);
      b.first = pos;
      b.first_name = m.names[v];
      p.blocks.push_back(std::move(b));
    }
    auto& b = p.blocks.back();
    const std::size_t id = p.blocks.size() - 1;
    block_of[pos] = id;
    ++b.nodes;
    b.cost += static_cast<double>(m.w.cost[v]);
    b.last_name = m.names[v];
    ++histogram[v < ops.size() && !ops[v].empty() ? ops[v] : std::string("node")];
    for (const auto t : m.params.used[pos]) {
      if (last_block[t] != id) {
        last_block[t] = id;
        b.parameter_bytes += static_cast<double>(m.params.bytes[t]);
      }
    }
  }
  if (!p.blocks.empty()) {
    close();
  }
  return block_of;
}

// Step 2: the crossings.
void add_crossings(io::picture& p, const laid_out_model& m,
                   const std::vector<std::size_t>& block_of) {
  std::map<std::pair<std::size_t, std::size_t>, double> bytes;
  std::set<std::pair<std::size_t, std::size_t>> counted; // (producer, consumer block)
  for (std::size_t u = 0; u < m.positions.size(); ++u) {
    const std::size_t from = block_of[m.positions[u]];
    for (auto e : boost::make_iterator_range(out_edges(u, m.graph))) {
      const std::size_t to = block_of[m.positions[target(e, m.graph)]];
      if (to != from && counted.insert({u, to}).second) {
        bytes[{from, to}] += static_cast<double>(m.w.output_bytes[u]);
      }
    }
  }
  for (const auto& [ends, b] : bytes) {
    p.crossings.push_back({ends.first, ends.second, b});
  }
}

// Step 3.
void add_stages(io::picture& p, const laid_out_model& m, const sharding_result& r,
                const picture_inputs& in) {
  // evaluate() on the laid-out graph: the weights are by position there.
  const auto at_positions = [&](bool devices) {
    std::vector<int> out;
    if (devices ? r.has_devices() : r.has_stages()) {
      out.assign(r.size(), sharding_result::unset);
      for (std::size_t v = 0; v < r.size(); ++v) {
        out[m.positions[v]] = (devices ? r.device(v) : r.stage(v)).value_or(sharding_result::unset);
      }
    }
    return out;
  };
  const sharding_result by_position(r.size(), at_positions(true), at_positions(false));
  const auto metrics =
      evaluate(m.view(), by_position, m.by_node(m.w.cost), m.params, m.by_node(m.w.output_bytes),
               evaluate_options{.communication_weight = in.communication_weight});
  const auto& groups = r.has_stages() ? metrics.stages : metrics.devices;
  const std::vector<int> group = groups_of(r);
  std::vector<int> device_of(groups.size(), -1);
  for (std::size_t v = 0; v < r.size(); ++v) {
    auto& d = device_of[static_cast<std::size_t>(group[v])];
    if (d < 0) {
      d = r.device(v).value_or(group[v]);
    }
  }
  double best = -1;
  // Groups run to the largest id; one holding no nodes is a note, not a bar
  // (a config of stage 65535 made 65,536 bars, an 84 MB page).
  std::vector<std::pair<int, int>> empty; // runs of empty ids: first, last
  for (const auto& g : groups) {
    if (g.vertices == 0) {
      if (!empty.empty() && empty.back().second + 1 == g.id) {
        empty.back().second = g.id;
      } else {
        empty.emplace_back(g.id, g.id);
      }
      continue;
    }
    io::picture::stage s;
    s.stage = g.id;
    s.device = std::max(device_of[static_cast<std::size_t>(g.id)], 0);
    s.nodes = g.vertices;
    s.cost = in.communication_weight > 0 ? g.load : g.cost;
    s.parameter_bytes = g.memory;
    s.received_bytes = g.received_bytes;
    if (in.memory != nullptr) {
      for (const auto& d : in.memory->plan.devices) {
        if (d.stage == g.id) {
          s.memory_bytes = std::max(s.memory_bytes.value_or(0), static_cast<double>(d.total_bytes));
          s.activation_bytes =
              std::max(s.activation_bytes.value_or(0), static_cast<double>(d.activation_bytes));
        }
      }
    }
    if (s.cost > best) {
      best = s.cost;
      p.bottleneck_stage = g.id;
    }
    p.stages.push_back(s);
  }
  if (!empty.empty()) {
    std::string ids;
    for (const auto& [first, last] : empty) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(first) +
             (last > first ? "-" + std::to_string(last) : "");
    }
    p.notes.push_back(std::string(r.has_stages() ? "Stages" : "Devices") + " " + ids +
                      " hold no nodes and are not drawn.");
  }
  p.bottleneck = metrics.bottleneck;
  p.lower_bound = metrics.lower_bound;
  p.memory_capacity = in.capacity;
  // Stages sharing a device run one after another on it: when their sum is
  // more than every stage, that device sets the pipeline's pace (simulate's
  // bottleneck device); a trial's page named a lighter stage, unsaid.
  std::map<int, std::pair<double, std::string>> by_device; // cost, its stages
  for (const auto& s : p.stages) {
    auto& [sum, ids] = by_device[s.device];
    sum += s.cost;
    ids += (ids.empty() ? "" : ", ") + std::to_string(s.stage);
  }
  const auto busiest = std::max_element(by_device.begin(), by_device.end(), [](auto& a, auto& b) {
    return a.second.first < b.second.first;
  });
  if (r.has_stages() && busiest != by_device.end() && busiest->second.first > best &&
      busiest->second.second.find(',') != std::string::npos) {
    p.pace_device = io::picture::pace{busiest->first, busiest->second.first};
    p.notes.push_back(shardpoint::detail::cat(
        "Device ", busiest->first, " runs stages ", busiest->second.second,
        " one after another: ", shardpoint::detail::number(busiest->second.first), " ", p.cost_unit,
        " a micro-batch together, ", "more than the bottleneck stage's ",
        shardpoint::detail::number(best), ", so that device sets the pipeline's pace."));
  }
  // Their memory adds up too: a device over the capacity with every one of
  // its stages under it (a trial's page drew no bar over the line for a
  // device memory said did not fit).
  if (in.memory != nullptr && in.capacity) {
    std::map<int, std::pair<double, std::string>> held; // bytes, its stages
    for (const auto& s : p.stages) {
      auto& [sum, ids] = held[s.device];
      sum += s.memory_bytes.value_or(0);
      ids += (ids.empty() ? "" : ", ") + std::to_string(s.stage);
    }
    for (const auto& [device, sum_ids] : held) {
      const auto& [sum, ids] = sum_ids;
      if (ids.find(',') != std::string::npos && sum > *in.capacity) {
        p.notes.push_back(shardpoint::detail::cat(
            "Device ", device, " holds stages ", ids, ": ", io::human_bytes(sum),
            " together, more than the ", io::human_bytes(*in.capacity),
            " capacity, though each stage's bar is its own."));
      }
    }
  }
}

// Step 4.
void add_node_graph(io::picture& p, const laid_out_model& m, const std::vector<int>& group,
                    const std::vector<std::string>& ops, const picture_inputs& in) {
  const std::size_t n = m.positions.size();
  if (in.lay_out == nullptr) {
    p.node_graph_note = "Every node: not drawn (no layout engine here).";
    return;
  }
  if (n > in.most_nodes_drawn) {
    p.node_graph_note = "Every node: not drawn, " + std::to_string(n) + " nodes is more than " +
                        std::to_string(in.most_nodes_drawn) + ".";
    return;
  }
  node_graph g;
  g.names = m.names;
  g.ops = ops;
  g.ops.resize(n);
  g.stages = group;
  for (std::size_t u = 0; u < n; ++u) {
    for (auto e : boost::make_iterator_range(out_edges(u, m.graph))) {
      g.edges.emplace_back(u, target(e, m.graph));
    }
  }
  p.node_graph_svg = in.lay_out(g);
  if (p.node_graph_svg.empty()) {
    p.node_graph_note = "Every node: the layout engine could not draw them.";
  }
}

} // namespace

void add_findings(io::picture& p, const std::vector<diagnostic>& found) {
  for (const auto& d : found) {
    p.notes.push_back(
        std::string(d.severity == severity::error ? "Validation error [" : "Warning [") +
        std::string(to_string(d.rule)) + "]: " + d.message);
  }
}

void add_estimates(io::picture& p, const std::vector<std::string>& more) {
  for (const auto& e : more) {
    if (std::find(p.estimates.begin(), p.estimates.end(), e) == p.estimates.end()) {
      p.estimates.push_back(e);
    }
  }
}

std::string cost_unit(const model_source& source, cost_model cost) {
  switch (cost) {
  case cost_model::unit:
    return "nodes";
  case cost_model::params:
    return "weight bytes";
  case cost_model::flops:
    break;
  }
  const double f = source.flops_per_cost_unit();
  return f == 1e6 ? "MFLOP" : f == 1 ? "FLOP" : shardpoint::detail::number(f) + " FLOP";
}

io::picture picture_of(model_source& source, const sharding_result& given,
                       const picture_inputs& in) {
  const laid_out_model m(source, in.cost);
  (void)topological_order(m.view()); // a graph with a cycle is bad input, named
  const sharding_result r = staged(given);
  io::picture p;
  p.cost_unit = cost_unit(source, in.cost);
  if (in.communication_weight > 0) { // (a trial's page named a stage the report did not)
    p.cost_heading = "load";
    p.cost_unit +=
        " + " + shardpoint::detail::plain_number(in.communication_weight) + " a byte received";
  }
  p.estimates = m.w.estimates;
  if (in.cost == cost_model::flops && !in.rounding_then.empty()) {
    if (auto e = rounding_estimate(source, m.w.cost, in.rounding_then)) {
      p.estimates.push_back(std::move(*e));
    }
  }
  const std::vector<int> group = groups_of(r);
  const std::vector<std::string> ops = source.op_types();
  const auto block_of = add_blocks(p, m, group, r, ops);
  add_crossings(p, m, block_of);
  add_stages(p, m, r, in);
  add_node_graph(p, m, group, ops, in);
  return p;
}

void add_timeline(io::picture& p, const runtime::run_metrics& m) {
  p.makespan = m.makespan;
  for (const auto& item : m.items) {
    p.timeline.push_back({item.device, item.stage, item.micro_batch, 'F', item.start, item.end});
  }
}

void add_timeline(io::picture& p, const runtime::schedule_result& r,
                  const std::vector<runtime::stage_times>& stages, bool recompute) {
  p.makespan = r.makespan;
  std::map<int, std::vector<std::pair<double, double>>> changes; // device -> (time, bytes)
  for (const auto& op : r.ops) {
    p.timeline.push_back({op.device, op.stage, op.micro_batch, op.kind, op.start, op.end});
    const auto& st = stages[static_cast<std::size_t>(op.stage)];
    const auto held = static_cast<double>(recompute ? st.input_bytes : st.activation_bytes);
    if (op.kind == 'F') {
      changes[op.device].emplace_back(op.start, held);
    } else if (op.kind == 'B') {
      changes[op.device].emplace_back(op.end, -held);
    }
  }
  for (auto& [device, c] : changes) {
    std::stable_sort(c.begin(), c.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    double bytes = 0;
    p.memory_curve.push_back({device, 0, 0});
    for (const auto& [t, delta] : c) {
      bytes += delta;
      p.memory_curve.push_back({device, t, bytes});
    }
    p.memory_curve.push_back({device, r.makespan, bytes});
  }
}

void check_picture_force(const report_flag& report, bool force) {
  if (force && report.format != "svg") {
    throw usage_error("--force replaces an earlier --report svg folder; it goes with --report svg");
  }
}

picture_output declare_picture(io::output_set& outputs, const report_flag& report, bool force,
                               std::string_view what) {
  picture_output out;
  if (!report.picture()) {
    if (!report.file.empty()) {
      throw usage_error("--report-file goes with --report html or svg");
    }
    return out;
  }
  if (report.format == "picture") { // the bindings': returned, not written
    return out;
  }
  if (report.file.empty()) {
    throw usage_error("--report " + report.format + " needs " + std::string(what) + " (the " +
                      (report.format == "html" ? "page" : "new folder of SVG files") +
                      " to write)");
  }
  if (report.format == "html") {
    out.file = &outputs.file(report.file, what);
  } else {
    out.folder = &outputs.folder(report.file, what, force);
  }
  return out;
}

void write_picture(const io::picture& p, const picture_output& out, const report_flag& report,
                   std::vector<std::string>& written) {
  if (out.file != nullptr) {
    io::write_file_atomically(out.file->staging(), io::to_html(p));
  } else if (out.folder != nullptr) {
    for (const auto& [name, text] : io::to_svgs(p)) {
      io::write_file_atomically(out.folder->file(name), text);
    }
  } else {
    return; // the picture only (report "picture")
  }
  written.push_back(report.file);
}

void add_run(io::picture& p, model_source& source, const sharding_result& given, cost_model cost,
             simulate_request s) {
  const sharding_result result = staged(given);
  namespace rt = shardpoint::runtime;
  std::vector<std::string> ignored; // the picture has the costs' estimates already
  const auto costs = source.costs(cost, ignored);
  const int stages = std::max(result.num_stages(), 1);
  const int m = s.batches_per_step > 0 ? s.batches_per_step : 2 * stages;
  pipeline_options options;
  options.enable_pipelining = true;
  options.batches_per_step = s.schedule.empty() ? m : stages;
  options.spelling = flag_spelling;
  // PopRT's rules, the edges' among them (make_plan sees no edges).
  const auto found = source.validate(result, options);
  if (const auto* e = first_error(found)) {
    p.notes.push_back("No timeline: the sharding cannot run as a pipeline (" + e->message + ").");
    return;
  }
  rt::pipeline_plan plan;
  try {
    plan = rt::make_plan(result, costs.data(), options);
  } catch (const rt::config_error& e) {
    p.notes.push_back(std::string("No timeline: the sharding cannot run as a pipeline (") +
                      e.what() + ").");
    return;
  }
  if (s.schedule.empty()) {
    const rt::session session(plan, rt::device_manager(plan.num_devices));
    rt::run_options run;
    run.micro_batches = m;
    run.keep_items = plan.stages.size() * static_cast<std::size_t>(m) <= rt::most_kept_items;
    if (!run.keep_items) {
      p.notes.push_back(shardpoint::detail::cat(
          "No timeline: ", plan.stages.size(), " stages x ", m,
          " micro-batches are more operations than a timeline keeps (", rt::most_kept_items, ")."));
      return;
    }
    add_timeline(p, session.run_virtual(run));
    return;
  }
  s.batches_per_step = m;
  try {
    check_placement(plan, s);
  } catch (const check_failed& e) {
    p.notes.push_back(std::string("No timeline: ") + e.what() + ".");
    return;
  }
  std::vector<std::string> notes;
  std::vector<std::string> estimates;
  const auto activations = source.activations(s.micro_batch_size, notes, estimates);
  io::training_run run =
      prepared_run(training_stages(plan, result, source.graph(), activations, s), s);
  add_timeline(p, rt::run_schedule(run.stages, run.options), run.stages, false);
  add_estimates(p, estimates);
}

} // namespace shardpoint::app::detail
