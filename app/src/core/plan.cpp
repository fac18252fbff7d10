// plan: the best training layout of a graph, in any format, or of a
// transformer given by its counts, on a cluster (runtime/layout_search.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROCEDURE
//
//   1. The cluster: the --cluster file's entries, each flag over its key.
//   2. The model, per vertex and for one sample:
//      - a model_source: flops = its FLOP costs (measure) x
//        flops_per_cost_unit / the batch they count (measured_batch; an
//        estimate, said); activation and output bytes = activations(1);
//        weights = parameters() at tensor-parallel degree 2, a weight
//        splitting when it is cut in two. A vertex splits when it reads a
//        weight that does. One reading a row-parallel weight (Megatron-LM's
//        row layer, parameter_tensor::row_parallel) all-reduces its output
//        (its bytes, once forward and once backward) and holds it whole;
//        another splitting vertex holds its output split over the ranks.
//        A source that marks no weight row-parallel has its splitting
//        vertices paired in index order: column, row, column, ...
//      - counts (layers l, hidden h, sequence s, vocabulary V, heads a, d
//        bytes an element of the dtype): a chain embedding -> l layers ->
//        head. A layer: forward 24 s h^2 + 4 s^2 h FLOPs, 12 h^2 weights
//        split and 13 h whole, activations s h (10 + 24 / t + 5 a s / (h t))
//        bytes at tp = t (10 s h whole, the rest split), two all-reduces of
//        s h d bytes, s h d bytes sent on (Narayanan et al., SC'21;
//        Korthikanti et al., 2022). Embedding: V h weights split (vocabulary
//        parallel), one all-reduce of s h d. Head: 2 s h V FLOPs, its own
//        V h weights split, s V d bytes of logits held split.
//   3. search_layouts; the report; --emit for the best: plan.json,
//      memory.json (its memory device by device), and from
//      a model the split as shard.yaml (stage s on device s mod pp), the
//      sharded model and the format's tensor-parallel files.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <shardpoint/app/errors.hpp>
#include <shardpoint/app/plans.hpp>
#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/cluster_file.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/plan_report.hpp>
#include <shardpoint/io/units.hpp>
#include <shardpoint/runtime/layout_search.hpp>

#include "picture.hpp"

namespace shardpoint::app {

namespace {

namespace rt = shardpoint::runtime;
using shardpoint::detail::cat;
using shardpoint::detail::counted;

// ---- 1. the cluster

rt::cluster_spec cluster_of(const plan_request& a) {
  io::cluster_entries file;
  if (!a.cluster_file.empty()) {
    file = io::read_cluster_file(a.cluster_file);
  }
  // A value by its flag, else by the file's key: (text, where it was given).
  const auto value = [&](const std::string& flag, const std::string& given,
                         const char* key) -> std::optional<std::pair<std::string, std::string>> {
    if (!given.empty()) {
      return std::pair{given, flag};
    }
    const auto it = file.values.find(key);
    if (it == file.values.end()) {
      return std::nullopt;
    }
    return std::pair{it->second.first, it->second.second + " (" + key + ")"};
  };
  // A count: the project's whole numbers (8, 1e3), as many as --devices takes.
  const auto count = [&](const std::string& flag, std::optional<int> given,
                         const char* key) -> std::optional<int> {
    const auto v = value(flag, given ? std::to_string(*given) : std::string(), key);
    if (!v) {
      return std::nullopt;
    }
    const auto n = parse_count(v->second, v->first);
    if (n < 1 || n > opt::max_cluster_devices) {
      throw bad_parameter_error(v->second + ": " + std::to_string(n) + " is not a count in " +
                                range_text(opt::devices));
    }
    return static_cast<int>(n);
  };
  const auto rate = [&](const std::string& flag, const std::string& given, const char* key,
                        bool bandwidth, const char* example) -> std::optional<double> {
    const auto v = value(flag, given, key);
    if (!v) {
      return std::nullopt;
    }
    const auto r = bandwidth ? io::parse_bandwidth(v->first) : io::parse_flops(v->first);
    if (!r && bandwidth && io::written_in_bits(v->first)) {
      throw bad_parameter_error(v->second + " " + io::bits_message(v->first.substr(0, 32)));
    }
    if (!r) {
      throw bad_parameter_error(v->second + ": '" + v->first.substr(0, 32) + "' is not " + example);
    }
    return r;
  };
  rt::cluster_spec c;
  const auto devices = count("--devices", a.devices, "devices");
  if (!devices) {
    throw usage_error("plan needs the number of devices (--devices, or devices: in --cluster)");
  }
  c.devices = *devices;
  c.devices_per_node =
      count("--devices-per-node", a.devices_per_node, "devices_per_node").value_or(c.devices);
  const auto memory = value("--device-memory", a.device_memory, "device_memory");
  const auto flops = rate("--device-flops", a.device_flops, "device_flops", false,
                          "a FLOP/s rate of at least 1 (e.g. 312e12, 312T, 19.5 TFLOPS)");
  if (!memory || !flops) {
    throw usage_error("plan needs each device's memory and FLOP/s (--device-memory and "
                      "--device-flops, or device_memory: and device_flops: in --cluster)");
  }
  c.device_memory = io::parse_capacity(memory->second, memory->first);
  c.device_flops = *flops;
  const char* bw = "a bandwidth of at least 1 B/s (e.g. 300GB/s, 25e9)";
  const auto intra =
      rate("--intra-node-bandwidth", a.intra_node_bandwidth, "intra_node_bandwidth", true, bw);
  const auto inter =
      rate("--inter-node-bandwidth", a.inter_node_bandwidth, "inter_node_bandwidth", true, bw);
  if (c.devices > 1 && !intra) {
    throw usage_error("plan on more than one device needs --intra-node-bandwidth (or "
                      "intra_node_bandwidth: in --cluster)");
  }
  if (c.devices > c.devices_per_node && !inter) {
    throw usage_error("plan on more than one node needs --inter-node-bandwidth (or "
                      "inter_node_bandwidth: in --cluster)");
  }
  c.intra_node_bandwidth = intra.value_or(1);
  c.inter_node_bandwidth = inter.value_or(c.intra_node_bandwidth);
  return c;
}

// ---- 2. the model

struct laid_out {
  rt::layout_model model;
  model_source::graph_type graph;
  std::string description;
  std::vector<std::string> estimates;
};

laid_out from_source(model_source& source) {
  laid_out out;
  node_measures m = source.measure(cost_model::flops);
  source.check_acyclic(); // a graph with a cycle is no model to plan
  out.estimates = std::move(m.estimates);
  std::vector<std::string> notes;
  const auto act = source.activations(1, notes, out.estimates);
  const auto V = m.cost.size();
  tensor_parallel_probe probe = source.probe_tensor_parallel();
  const parameter_uses& uses = probe.uses;
  out.model.tensor_divides = std::move(probe.divides);
  for (auto& e : source.weight_estimates()) {
    out.estimates.push_back(std::move(e));
  }
  for (const auto& t : uses.tensors) {
    out.model.weights.push_back(
        {t.elements, t.tensor_parallel_parts > 1, t.trainable, t.stored_element_bytes});
  }
  // The costs count the batch the model holds; the search counts a sample.
  double unit = source.flops_per_cost_unit();
  if (const auto held = source.measured_batch()) {
    unit /= static_cast<double>(held->size);
    out.estimates.push_back(cat(held->where,
                                ": plan counts one sample, so the FLOPs and "
                                "activations measured at ",
                                held->size, " are divided by ", held->size,
                                " (a node's FLOPs need not be linear in the batch: give the "
                                "batch as 1, or leave it free, to measure one sample)"));
  }
  // Which splitting vertices all-reduce (tensor_parallel_outputs, memory's
  // rule too): those reading a row-parallel weight.
  const std::vector<tp_output> outputs = tensor_parallel_outputs(uses);
  for (std::size_t v = 0; v < V; ++v) {
    rt::layout_vertex x;
    x.flops = static_cast<double>(m.cost[v]) * unit;
    x.output_bytes = act[v];
    x.weights = uses.used[v];
    x.splits = outputs[v] != tp_output::whole;
    const bool reduces = outputs[v] == tp_output::reduced;
    if (x.splits && !reduces) {
      x.split_activation_bytes = act[v];
    } else {
      x.activation_bytes = act[v];
      x.allreduce_bytes = reduces ? act[v] : 0;
    }
    out.model.vertices.push_back(std::move(x));
  }
  if (auto e = rounding_estimate(source, m.cost, "and the compute times that much too long")) {
    out.estimates.push_back(std::move(*e));
  }
  out.graph = source.graph();
  out.description = cat("a model of ", V, " nodes");
  return out;
}

// The attention heads: --heads (dividing the hidden size h), or, a guess
// said in `estimates`, h / 64 (heads of 64) or the nearest divisor of h
// below it.
std::int64_t heads_of(const plan_request& a, std::int64_t h, std::vector<std::string>& estimates) {
  if (a.heads) {
    if (*a.heads < 1 || *a.heads > h || h % *a.heads != 0) {
      throw bad_parameter_error(
          cat("--heads must divide the hidden size ", h, ", not be ", *a.heads));
    }
    return *a.heads;
  }
  std::int64_t heads = std::max<std::int64_t>(1, h / 64);
  while (h % heads != 0) {
    --heads;
  }
  estimates.push_back(cat("--heads not given: ", heads,
                          " assumed (hidden / 64, or the divisor of hidden below it) for the "
                          "attention activations"));
  return heads;
}

laid_out from_counts(const plan_request& a, std::int64_t element_bytes) {
  const std::int64_t l = a.layers;
  const std::int64_t h = a.hidden;
  const std::int64_t s = a.sequence;
  const std::int64_t V = a.vocabulary;
  if (l == 0 || h == 0 || s == 0 || V == 0) {
    throw usage_error("plan from a transformer's counts needs --layers, --hidden, --sequence "
                      "and --vocabulary, each at least 1");
  }
  for (const auto& [o, n] : {std::pair{opt::layers, l}, std::pair{opt::hidden, h},
                             std::pair{opt::sequence, s}, std::pair{opt::vocabulary, V}}) {
    check_option(o, o.flag, static_cast<double>(n));
  }
  laid_out out;
  const std::int64_t heads = heads_of(a, h, out.estimates);
  // Megatron-LM splits the heads and the hidden size over the ranks.
  out.model.tensor_divides = {{"attention heads", heads}, {"hidden size", h}};
  const double hd = static_cast<double>(h);
  const double sd = static_cast<double>(s);
  const double Vd = static_cast<double>(V);
  const auto bytes = [](double x) {
    if (!(x < 9e18)) {
      throw bad_parameter_error("the transformer's counts overflow 64-bit byte counts");
    }
    return static_cast<std::int64_t>(x);
  };
  const auto d = static_cast<double>(element_bytes);
  auto& m = out.model;
  // Embedding.
  m.weights.push_back({V * h, true, true, element_bytes});
  rt::layout_vertex embed;
  embed.splits = true;
  embed.weights = {0};
  embed.activation_bytes = bytes(sd * hd * d);
  embed.output_bytes = bytes(sd * hd * d);
  embed.allreduce_bytes = bytes(sd * hd * d);
  m.vertices.push_back(embed);
  for (std::int64_t i = 0; i < l; ++i) {
    const auto w = static_cast<std::uint32_t>(m.weights.size());
    m.weights.push_back({12 * h * h, true, true, element_bytes});
    m.weights.push_back({13 * h, false, true, element_bytes});
    rt::layout_vertex x;
    x.flops = 24 * sd * hd * hd + 4 * sd * sd * hd;
    x.splits = true;
    x.weights = {w, w + 1};
    x.activation_bytes = bytes(10 * sd * hd);
    x.split_activation_bytes = bytes(24 * sd * hd + 5 * static_cast<double>(heads) * sd * sd);
    x.allreduce_bytes = bytes(2 * sd * hd * d);
    x.output_bytes = bytes(sd * hd * d);
    m.vertices.push_back(std::move(x));
  }
  const auto w = static_cast<std::uint32_t>(m.weights.size());
  m.weights.push_back({V * h, true, true, element_bytes});
  rt::layout_vertex head;
  head.flops = 2 * sd * hd * Vd;
  head.splits = true;
  head.weights = {w};
  head.split_activation_bytes = bytes(sd * Vd * d);
  m.vertices.push_back(std::move(head));
  // The chain.
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (std::size_t v = 0; v + 1 < m.vertices.size(); ++v) {
    edges.emplace_back(v, v + 1);
  }
  out.graph = model_source::graph_type(boost::edges_are_unsorted_multi_pass, edges.begin(),
                                       edges.end(), m.vertices.size());
  out.description = cat("a transformer of ", counted(static_cast<std::size_t>(l), "layer"),
                        ", hidden ", h, ", sequence ", s, ", vocabulary ", V, ", ",
                        counted(static_cast<std::size_t>(heads), "head"));
  return out;
}

// ---- 3. the search

rt::search_space space_of(const plan_request& a) {
  rt::search_space s;
  check_option(opt::global_batch, opt::global_batch.flag, static_cast<double>(a.global_batch));
  if (a.max_micro_batch_size < 1) {
    throw bad_parameter_error(
        cat("--max-micro-batch-size must be at least 1, not ", a.max_micro_batch_size));
  }
  s.global_batch = a.global_batch;
  s.max_micro_batch_size = a.max_micro_batch_size;
  if (!a.schedules.empty()) {
    s.schedules.clear();
    for (const auto& name : a.schedules) {
      const auto kind = rt::schedule_named(name);
      if (std::find(s.schedules.begin(), s.schedules.end(), kind) == s.schedules.end()) {
        s.schedules.push_back(kind); // each once, however often named
      }
    }
  }
  if (a.virtual_stages < 2 || a.virtual_stages > 64) {
    throw bad_parameter_error(cat("--virtual-stages must be in [2, 64], not ", a.virtual_stages));
  }
  // An option of a schedule the search leaves out is refused, never ignored
  // (as simulate refuses them); one equal to its default changes nothing.
  const plan_request plain;
  const auto searched = [&](rt::schedule_kind k) {
    return std::find(s.schedules.begin(), s.schedules.end(), k) != s.schedules.end();
  };
  if (a.virtual_stages != plain.virtual_stages && !searched(rt::schedule_kind::interleaved)) {
    throw usage_error("--virtual-stages is the interleaved schedule's, which --schedules leaves "
                      "out; add interleaved (or drop it)");
  }
  if (a.weight_share != plain.weight_share && !searched(rt::schedule_kind::zb_h1)) {
    throw usage_error("--weight-share is zb-h1's, which --schedules leaves out; add zb-h1 (or "
                      "drop it)");
  }
  s.interleave = a.virtual_stages;
  s.backward_ratio = a.backward_ratio;
  s.weight_share = a.weight_share;
  if (a.dtype == "fp16" || a.dtype == "bf16" || a.dtype == "fp32") {
    s.training.fp16 = a.dtype == "fp16";
    s.training.bf16 = a.dtype == "bf16";
  } else {
    throw bad_parameter_error("--dtype " + io::quote(a.dtype) + " is not fp16, bf16 or fp32");
  }
  if (a.optimizer == "adam" || a.optimizer == "sgd" || a.optimizer == "none") {
    s.training.optimizer = a.optimizer == "adam"  ? optimizer_kind::adam
                           : a.optimizer == "sgd" ? optimizer_kind::sgd
                                                  : optimizer_kind::none;
  } else {
    throw bad_parameter_error("--optimizer " + io::quote(a.optimizer) +
                              " is not adam, sgd or none");
  }
  return s;
}

std::optional<std::size_t> top_k_of(const std::string& text) {
  if (text == "all") {
    return std::nullopt;
  }
  std::int64_t k = 0;
  try {
    k = parse_count("--top-k", text); // 10, 1e3
  } catch (const bad_parameter_error&) {
    k = 0;
  }
  if (k < 1) {
    throw bad_parameter_error("--top-k " + io::quote(text) + " is not a positive count or all");
  }
  return static_cast<std::size_t>(k);
}

// The split of the best layout as the points of a shard.yaml and a
// sharding (stage s on device s mod pp).
sharding_result emit_split(const rt::layout_search_result& r, const rt::layout& at,
                           model_source& source, std::vector<config::entry>& points) {
  const auto& split = r.splits[r.candidates.front().split];
  const auto names = source.names();
  std::vector<int> devices;
  std::vector<int> stages;
  for (std::size_t v = 0; v < split.result.size(); ++v) {
    stages.push_back(*split.result.stage(v));
    devices.push_back(stages.back() % at.pipeline);
  }
  for (const auto& p : split.points) {
    const int stage = p.stage.value_or(0);
    points.push_back({names[p.vertex], stage % at.pipeline, stage, ""});
  }
  // PopRT's default group (the nodes after every point) takes the next
  // device; with virtual stages the last stage's device is another, so its
  // own points name it: the nodes with no successor inside it, which every
  // node of it reaches (balanced_shard's proof for the other stages).
  const int last = at.pipeline * at.virtual_stages - 1;
  if (last % at.pipeline != last) {
    const auto& g = source.graph();
    for (std::size_t v = 0; v < stages.size(); ++v) {
      bool sink = stages[v] == last;
      for (auto [e, end] = boost::out_edges(v, g); sink && e != end; ++e) {
        sink = stages[boost::target(*e, g)] != last;
      }
      if (sink) {
        points.push_back({names[v], last % at.pipeline, last, ""});
      }
    }
  }
  return {split.result.size(), std::move(devices), std::move(stages)};
}

// The best layout drawn: from a model, its split (picture.hpp) with each
// stage's memory as the search counted it; from counts, the stages alone
// (their forward times as costs). Then the schedule's timeline with the
// search's stage times, in seconds.
io::picture draw_plan(model_source* source, const io::plan_report& report, const plan_request& a) {
  const auto& best = report.result.candidates.front();
  io::memory_report memory;
  for (std::size_t s = 0; s < best.stages.size(); ++s) {
    device_memory d;
    d.stage = static_cast<int>(s);
    d.parameter_bytes = best.stages[s].parameter_bytes;
    d.activation_bytes = best.stages[s].activation_bytes;
    d.total_bytes = best.stages[s].total_bytes;
    memory.plan.devices.push_back(d);
  }
  io::picture p;
  if (source != nullptr) {
    std::vector<config::entry> points;
    detail::picture_inputs in;
    in.memory = &memory;
    in.capacity = static_cast<double>(report.cluster.device_memory);
    in.lay_out = a.report.lay_out;
    p = detail::picture_of(*source, emit_split(report.result, best.at, *source, points), in);
  } else {
    p.cost_unit = "s forward";
    // What each stage receives, a sample, as the split counts it (a trial's
    // page said 0 B for every stage of a chain).
    const auto& received = report.result.splits.at(best.split).stage_received_bytes;
    for (std::size_t s = 0; s < best.stages.size(); ++s) {
      const auto& st = best.stages[s];
      p.stages.push_back(
          {static_cast<int>(s), static_cast<int>(s) % best.at.pipeline, 0, st.forward,
           static_cast<double>(st.parameter_bytes), s < received.size() ? received[s] : 0,
           static_cast<double>(st.activation_bytes), static_cast<double>(st.total_bytes)});
      if (st.forward > p.bottleneck) {
        p.bottleneck = st.forward;
        p.bottleneck_stage = static_cast<int>(s);
      }
    }
    p.lower_bound = p.bottleneck;
    p.memory_capacity = static_cast<double>(report.cluster.device_memory);
  }
  std::vector<rt::stage_times> times;
  for (const auto& st : best.stages) {
    // The search counts a stage's activations at its in-flight peak; the
    // timeline holds them a micro-batch at a time.
    const std::int64_t each = st.activation_bytes / std::max(st.in_flight, 1);
    times.push_back({st.forward, st.backward, st.weight_share,
                     static_cast<std::uint64_t>(std::max<std::int64_t>(each, 0)), 0});
  }
  rt::schedule_options o;
  o.kind = best.at.schedule;
  o.devices = best.at.pipeline;
  o.micro_batches = static_cast<int>(best.at.micro_batches);
  o.virtual_stages = best.at.virtual_stages;
  detail::add_timeline(p, rt::run_schedule(times, o), times, false);
  p.time_unit = "s (the step without the data-parallel sync)";
  p.notes.push_back(cat("The best layout: ", best.at.pipeline, " pipeline x ", best.at.tensor,
                        " tensor x ", best.at.data, " data parallel, ZeRO-", best.at.zero,
                        ", micro-batch ", best.at.micro_batch_size, " x ", best.at.micro_batches,
                        ", ", rt::schedule_name(best.at.schedule),
                        "; its stage times and memory as the search costed them."));
  p.command = "plan";
  p.title = a.report.title.empty() ? report.model : a.report.title;
  detail::add_estimates(p, report.estimates);
  return p;
}

// What the request asks for at all: a model or counts, one of the two;
// --force only with something to replace.
void check_asked(const model_source* source, const plan_request& a) {
  const bool counts =
      a.layers != 0 || a.hidden != 0 || a.sequence != 0 || a.vocabulary != 0 || a.heads.has_value();
  if ((source != nullptr) == counts) {
    throw usage_error("plan takes a model (--input-model) or a transformer's counts (--layers, "
                      "--hidden, --sequence, --vocabulary), one of the two");
  }
  if (a.force && a.emit.empty() && a.report.file.empty()) {
    throw usage_error("--force replaces what --emit or --report-file wrote before; give one");
  }
}

} // namespace

// The command's procedure in its order -- the request checked, the model
// or the counts laid out, the search run, the report and the --emit files
// declared and written -- each step a call (~78 lines).
plan_outcome plan_layouts(model_source* source, const plan_request& a) {
  check_asked(source, a);
  io::output_set outputs;
  if (source != nullptr) {
    source->declare_inputs(outputs);
  }
  if (!a.cluster_file.empty()) {
    outputs.input(a.cluster_file, "the cluster file");
  }
  io::staged_folder* emit = a.emit.empty() ? nullptr : &outputs.folder(a.emit, "--emit", a.force);
  const detail::picture_output picture = detail::declare_picture(outputs, a.report, a.force);
  const rt::cluster_spec cluster = cluster_of(a);
  const rt::search_space space = space_of(a);
  const auto top_k = top_k_of(a.top_k);
  if (source != nullptr) {
    source->load(outputs);
    source->count_one_sample(); // a free batch: one sample, as plan counts, not a guess
    if (emit != nullptr || a.report.picture()) {
      source->name_nodes(false);
    }
  }
  const auto element_bytes = a.dtype == "fp32" ? 4 : 2;
  laid_out m = source != nullptr ? from_source(*source) : from_counts(a, element_bytes);
  io::plan_report report;
  report.model = m.description;
  report.cluster = cluster;
  report.space = space;
  report.dtype = a.dtype;
  report.optimizer = a.optimizer;
  report.top_k = top_k;
  report.estimates = m.estimates;
  report.result = rt::search_layouts(m.graph, m.model, cluster, space);
  // The best layout's tensor parallelism, when no weight splits: its ranks
  // each hold every weight whole and compute every node (a trial's plan of
  // a model without a Megatron pair ranked tp 4 first, unsaid).
  const bool splits = std::any_of(m.model.weights.begin(), m.model.weights.end(),
                                  [](const auto& w) { return w.splits; });
  if (source != nullptr && !splits && report.result.feasible > 0 &&
      report.result.candidates.front().at.tensor > 1) {
    report.estimates.push_back(
        cat("tensor parallelism splits no weight: ", no_split_pair(), "; the best layout's ",
            report.result.candidates.front().at.tensor,
            " tensor-parallel ranks each hold every weight and compute every node"));
  }
  plan_outcome out;
  out.fits = report.result.feasible > 0;
  out.warnings = report.estimates;
  if (a.report.picture()) {
    if (out.fits) {
      out.picture = draw_plan(source, report, a);
      detail::write_picture(out.picture, picture, a.report, out.written);
    } else { // nothing to draw, as nothing is emitted: the table says why
      out.report = io::to_table(report);
    }
  } else {
    out.report = a.report.format == "json" ? io::to_json(report) : io::to_table(report);
  }
  if (!out.fits) {
    return out; // nothing written
  }
  if (emit == nullptr) {
    outputs.commit(); // the picture, when there is one
    return out;
  }
  const auto& best = report.result.candidates.front();
  io::write_file_atomically(emit->file("plan.json"), io::to_json(report));
  io::write_file_atomically(emit->file("memory.json"), io::memory_json(report));
  out.written.insert(out.written.end(), {"plan.json", "memory.json"});
  if (source != nullptr) {
    std::vector<config::entry> points;
    const sharding_result split = emit_split(report.result, best.at, *source, points);
    io::write_file_atomically(emit->file("shard.yaml"), config::to_shard_yaml(points));
    out.written.push_back("shard.yaml");
    if (source->writes_sharding()) {
      const auto name = source->sharded_file_name();
      source->write_sharded(split, emit->file(name));
      out.written.push_back(name);
    }
    if (best.at.tensor > 1) {
      for (auto& f : source->write_tensor_parallel(split, best.at.tensor, *emit, "strategy/")) {
        out.written.push_back(std::move(f));
      }
    }
  }
  outputs.commit();
  for (auto& f : out.written) {
    if (f != a.report.file) {
      f = (std::filesystem::path(a.emit) / f).string();
    }
  }
  return out;
}

} // namespace shardpoint::app
