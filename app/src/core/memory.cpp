// memory: the bytes every device holds -- pipeline stages x tensor
// parallelism x sharded data parallelism -- and whether they fit, for a
// graph in any format or from counts alone.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <span>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/detail/text.hpp>

#include <shardpoint/app/plans.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/io/memory_report.hpp>
#include <shardpoint/io/units.hpp>

#include "picture.hpp"

namespace shardpoint::app {

namespace {} // namespace

namespace detail {

std::vector<stage_memory_input> stage_inputs(model_source& source, const sharding_result& result,
                                             const memory_flags& flags, const parallel_config& c,
                                             io::memory_report& r) {
  std::vector<io::layout_choice> layout;
  if (!flags.layout.empty()) {
    layout = io::read_layout_file(flags.layout);
  }
  const parameter_uses uses =
      source.parameters(result, c.tensor_parallel, flags.layout.empty() ? nullptr : &layout);
  if (auto none = unsplit_weights(uses, c.tensor_parallel, !flags.layout.empty())) {
    r.notes.push_back(std::move(*none)); // (a trial's CNN: the same bytes as T = 1, unsaid)
  }
  const auto produced = source.activations(c.micro_batch_size, r.notes, r.estimates);
  if (flags.inference) { // (training keeps them all for the backward: the model's count)
    r.notes.emplace_back("inference: a stage's activations are every output of its nodes held at "
                         "once, none freed or reused -- an upper bound on what a runtime holds");
  }
  for (auto& e : source.weight_estimates()) {
    r.estimates.push_back(std::move(e));
  }
  const auto& g = source.graph();
  const auto index = get(boost::vertex_index, g);
  const std::vector<std::string> names = source.names(); // a node without a stage, by name
  auto stages = stage_memory_inputs(
      indexed(g, index, boost::make_iterator_property_map(names.begin(), index)), result, uses,
      boost::make_iterator_property_map(produced.begin(), index));
  hold_column_outputs(stages, result,
                      c.tensor_parallel > 1 ? tensor_parallel_outputs(uses)
                                            : std::vector<tp_output>(),
                      produced, c.tensor_parallel);
  return stages;
}

// A column layer's outputs are split over the tensor-parallel ranks, each
// holding its part (tensor_parallel_outputs, plan's rule: a trial's plan
// fitted a layout memory then found 26 MiB over).
void hold_column_outputs(std::vector<stage_memory_input>& stages, const sharding_result& result,
                         const std::vector<tp_output>& held,
                         const std::vector<std::int64_t>& produced, std::int64_t T) {
  for (std::size_t v = 0; v < held.size() && v < produced.size(); ++v) {
    const std::size_t s = result.has_stages() ? static_cast<std::size_t>(*result.stage(v)) : 0;
    if (held[v] == tp_output::split && s < stages.size()) {
      stages[s].produced_bytes -= produced[v] - (produced[v] + T - 1) / T;
    }
  }
}

} // namespace detail

namespace {

// A sharding PopRT's rules refuse (a backward edge, a stage on several
// devices) has no memory to plan: refused as simulate refuses it (a trial's
// memory planned what shard and validate refused, without a word). The
// rule on batches per step is a pipeline run's, not the planner's, which
// plans any number: checked here with one that meets it.
void refuse_broken(model_source& source, const sharding_result& result) {
  pipeline_options checks;
  checks.enable_pipelining = result.has_stages();
  checks.batches_per_step = 2 * std::max(result.num_stages(), 1);
  checks.spelling = flag_spelling;
  const auto found = source.validate(result, checks);
  if (const auto* e = first_error(found)) {
    throw check_failed("the sharding cannot be planned: " + e->message);
  }
}

// A sharding over devices without pipeline stages is PopRT's sharding
// without pipelining: its devices run one after another, one batch through
// them at a time. Each device is then planned as a stage that holds its
// nodes, with one micro-batch in flight (a trial saw such a model planned
// whole on one device, without a word).
// Their stages are the devices: a rule on stages broken says so.
void devices_as_stages(sharding_result& result, parallel_config& c, io::memory_report& r) {
  if (!result.has_devices() || result.has_stages()) {
    return;
  }
  const auto devices = result.devices();
  result = sharding_result(result.size(), {devices.begin(), devices.end()},
                           {devices.begin(), devices.end()});
  c.micro_batches = 1;
  c.schedule = pipeline_schedule::gpipe; // one micro-batch: every schedule's count
  c.queue_depth = 1;
  r.notes.push_back("the sharding gives " + std::to_string(result.num_devices()) +
                    " device(s) and no pipeline stage (sharding without pipelining: the devices "
                    "run one after another): each device is planned as a stage that holds its "
                    "nodes, with one micro-batch in flight (--batches-per-step, --schedule and "
                    "--queue-depth do not apply)");
  if (const memory_rule* broken = broken_memory_rule(c, result.num_stages())) {
    throw bad_parameter_error(broken->message(c, result.num_stages()) + " (the sharding's " +
                              std::to_string(result.num_devices()) +
                              " devices, planned as stages: it gives no stage)");
  }
}

// Stages that share a device share its memory: the planner's largest
// device is the largest sum of one device's stages (a trial read "fits"
// for a device whose two stages together did not). Each row stays a stage;
// a note names the devices that hold several, with their sums.
void devices_holding_stages(std::span<const stage_memory_input> stages, io::memory_report& r) {
  std::map<int, std::vector<int>> stages_of;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    if (stages[s].device >= 0) {
      stages_of[stages[s].device].push_back(static_cast<int>(s));
    }
  }
  std::vector<std::int64_t> total(stages.size(), 0); // a stage's, on one of its ranks
  for (const auto& row : r.plan.devices) {
    if (row.tensor_parallel_rank == 0 && row.data_parallel_rank == 0) {
      total[static_cast<std::size_t>(row.stage)] = row.total_bytes;
    }
  }
  if (stages_of.size() < stages.size() && !stages_of.empty()) {
    r.stage_devices = static_cast<std::int64_t>(stages_of.size());
  }
  for (const auto& [device, held] : stages_of) {
    if (held.size() < 2) {
      continue;
    }
    std::string list;
    std::int64_t sum = 0;
    for (const int s : held) {
      list += (list.empty() ? "" : ", ") + std::to_string(s);
      sum = shardpoint::detail::checked_add(sum, total[static_cast<std::size_t>(s)])
                .value_or(INT64_MAX);
    }
    r.notes.push_back("device " + std::to_string(device) + " holds stages " + list +
                      ": its memory is their sum, " + io::human_bytes(static_cast<double>(sum)) +
                      " (each row is one stage)");
  }
}

std::vector<stage_memory_input> from_model(model_source& source, const points& where,
                                           const memory_request& a, parallel_config& c,
                                           io::memory_report& r, sharding_result& result,
                                           io::output_set& outputs) {
  source.load(outputs);
  result = sharding_of(source, where, true);
  refuse_broken(source, result);
  devices_as_stages(result, c, r);
  auto stages = detail::stage_inputs(source, result, a.plan, c, r);
  if (auto why = shardpoint::unplannable_schedule(stages, c)) {
    if (c.schedule == pipeline_schedule::zb_h1 &&
        c.micro_batches < static_cast<std::int64_t>(stages.size())) {
      // A parameter out of the schedule's range, exit 2 as simulate's.
      throw bad_parameter_error(*why + "; give --batches-per-step at least " +
                                std::to_string(stages.size()) + ", or plan with --schedule 1f1b");
    }
    throw check_failed(*why + "; give each stage its own device, or plan the sharding with "
                              "--schedule gpipe");
  }
  return stages;
}

// The request's own checks, before anything is read; the capacity.
std::optional<std::int64_t> checked_request(const model_source* source, const points& where,
                                            const memory_request& a) {
  if ((source == nullptr) == a.parameters.empty()) {
    throw usage_error("give --input-model MODEL or --parameters N (one of them)");
  }
  if (!a.largest_layer.empty() && a.parameters.empty()) {
    throw usage_error("--largest-layer-parameters goes with --parameters");
  }
  if (!a.pipeline_parallel.empty() && a.parameters.empty()) {
    throw usage_error("--pipeline-parallel goes with --parameters (a model's stages are its "
                      "sharding: --manual-sharding-config or --shard)");
  }
  if (!a.gpus_per_node.empty() && !a.compare_deepspeed) {
    throw usage_error("--gpus-per-node goes with --compare-deepspeed");
  }
  if (!a.parameters.empty() && (!a.plan.layout.empty() || where.has_points())) {
    throw usage_error("--layout, --manual-sharding-config and --shard need --input-model");
  }
  std::optional<std::int64_t> capacity;
  if (!a.device_memory.empty()) {
    capacity = io::parse_capacity("--device-memory", a.device_memory);
  }
  if (a.plan.automatic() && !capacity) {
    throw usage_error("--sharded-data-parallel auto needs --device-memory");
  }
  detail::check_picture_force(a.report, a.force);
  if ((a.compare_stages || a.compare_deepspeed) && a.plan.inference) {
    throw usage_error(std::string(a.compare_stages ? "--compare-stages" : "--compare-deepspeed") +
                      " compares training states; drop --inference");
  }
  return capacity;
}

// Counts alone: P stages (1 unless --pipeline-parallel) of the parameters
// split evenly, each stage's largest layer the given one (or all its
// parameters), weights split evenly over the tensor-parallel ranks, 4 bytes
// stored (fp32) for inference.
std::vector<stage_memory_input> from_counts(const memory_request& a, const parallel_config& c,
                                            io::memory_report& r) {
  const std::int64_t n = parse_count("--parameters", a.parameters);
  std::optional<std::int64_t> largest;
  if (!a.largest_layer.empty()) {
    largest = parse_count("--largest-layer-parameters", a.largest_layer);
  }
  shardpoint::from_counts(n, largest, 4); // the counts' own checks, whole
  const std::int64_t p =
      a.pipeline_parallel.empty() ? 1 : parse_count("--pipeline-parallel", a.pipeline_parallel);
  if (p < 1) {
    throw bad_parameter_error("--pipeline-parallel must be a positive integer, not " +
                              std::to_string(p));
  }
  if (p > n || p > (std::int64_t{1} << 20)) {
    throw bad_parameter_error("--pipeline-parallel " + std::to_string(p) +
                              ": at most one stage a parameter and 1048576 stages, for " +
                              std::to_string(n) + " parameters");
  }
  std::vector<stage_memory_input> stages;
  stages.reserve(static_cast<std::size_t>(p));
  for (std::int64_t s = 0; s < p; ++s) {
    const std::int64_t mine = n / p + (s < n % p ? 1 : 0);
    stages.push_back(shardpoint::from_counts(
        mine, largest ? std::optional(std::min(*largest, mine)) : std::nullopt, 4));
    for (auto& t : stages.back().parameters) {
      t.tensor_parallel_parts = std::max<std::int64_t>(c.tensor_parallel, 1);
    }
  }
  r.notes.push_back(p == 1 ? "planned from counts alone: one stage, no activations, every weight "
                             "split evenly over the tensor-parallel ranks"
                           : "planned from counts alone: " + std::to_string(p) +
                                 " stages of the parameters split evenly, no activations, every "
                                 "weight split evenly over the tensor-parallel ranks");
  return stages;
}

// From counts without --largest-layer-parameters, the largest layer is a
// whole stage: a guess wherever it counts (the gathered working set, and
// DeepSpeed's estimator).
void largest_layer_guess(const memory_request& a, io::memory_report& r) {
  // Sharding that gathers nothing (every weight below the persistence
  // threshold) rests on no guess (a trial's 0 B gathered, marked estimated).
  const bool gathers = r.plan.sharded_data_parallel > 1 &&
                       std::any_of(r.plan.devices.begin(), r.plan.devices.end(),
                                   [](const device_memory& d) { return d.gathered_bytes > 0; });
  if (a.parameters.empty() || !a.largest_layer.empty() || (!gathers && !a.compare_deepspeed)) {
    return;
  }
  const auto n = static_cast<std::size_t>(parse_count("--parameters", a.parameters));
  r.estimates.push_back("the largest layer is taken to be the whole model, " +
                        std::string(n == 1 ? "its " : "all ") +
                        shardpoint::detail::counted(n, "parameter") + " (" +
                        (gathers ? "what sharding gathers is then an upper bound"
                                 : "DeepSpeed's ZeRO-3 figures are then upper bounds") +
                        "): give --largest-layer-parameters L");
}

// Why the largest device does not fit `capacity`, in words; under auto, the
// degree that came closest and, when every larger one breaks a rule, which.
std::string shortfall_of(const io::memory_report& r, const parallel_config& c,
                         std::int64_t capacity) {
  const auto over = r.plan.largest_total_bytes - capacity;
  std::string out = "the largest device needs " +
                    io::human_bytes(static_cast<double>(r.plan.largest_total_bytes)) + ", " +
                    io::human_bytes(static_cast<double>(over)) + " more than " +
                    io::human_bytes(static_cast<double>(capacity));
  if (!r.automatic) {
    return out;
  }
  out += " even with the sharded data parallel degree that comes closest (" +
         std::to_string(r.plan.sharded_data_parallel) + ")";
  parallel_config larger = c;
  std::string refused;
  bool all_refused = true;
  for (std::int64_t n = r.plan.sharded_data_parallel + 1; n <= c.data_parallel; ++n) {
    if (c.data_parallel % n != 0) {
      continue;
    }
    larger.sharded_data_parallel = n;
    const memory_rule* rule = broken_memory_rule(larger, r.stages);
    all_refused = all_refused && rule != nullptr;
    if (rule != nullptr && refused.empty()) {
      refused = rule->message(larger, r.stages);
    }
  }
  if (all_refused && !refused.empty()) {
    out += "; every larger degree breaks a rule: " + refused;
  }
  return out;
}

} // namespace

// The command's procedure in its order -- the request checked, the stages
// read, the plan made (or the smallest sharding degree that fits found), the
// report and the picture -- each step a call (86 lines).
memory_outcome plan_memory(model_source* source, const points& where, const memory_request& a) {
  const std::optional<std::int64_t> capacity = checked_request(source, where, a);
  parallel_config c = a.plan.config();
  io::memory_report r;
  std::vector<stage_memory_input> stages;
  // The only output: the picture, declared before anything is read.
  io::output_set outputs;
  if (source != nullptr) {
    source->declare_inputs(outputs);
  }
  if (!where.config.empty()) {
    outputs.input(where.config, "the sharding config");
  }
  if (!a.plan.layout.empty()) {
    outputs.input(a.plan.layout, "the layout file");
  }
  if (a.report.picture() && source == nullptr) {
    throw usage_error("--report " + a.report.format + " draws a model: give --input-model");
  }
  const detail::picture_output picture = detail::declare_picture(outputs, a.report, a.force);
  sharding_result result;
  if (!a.parameters.empty()) {
    stages = from_counts(a, c, r);
  } else {
    if (!a.plan.automatic()) { // a bad degree is reported before the model is read
      check_memory_rules(c, 1);
    }
    stages = from_model(*source, where, a, c, r, result, outputs);
  }
  r.plan = a.plan.automatic() ? plan_memory_auto(stages, c, *capacity)
                              : shardpoint::plan_memory(stages, c, capacity);
  if (a.parameters.empty()) {
    devices_holding_stages(stages, r);
  }
  c.sharded_data_parallel = r.plan.sharded_data_parallel;
  if (a.compare_stages) {
    r.zero_stages = compare_zero_stages(stages, c);
  }
  if (a.compare_deepspeed) {
    std::int64_t gpus = 0; // all on one node
    if (!a.gpus_per_node.empty() && (gpus = parse_count("--gpus-per-node", a.gpus_per_node)) < 1) {
      throw bad_parameter_error("--gpus-per-node must be a positive integer, not " +
                                std::to_string(gpus));
    }
    r.deepspeed = compare_with_deepspeed(stages, c, gpus);
    r.deepspeed->largest_layer_assumed = !a.parameters.empty() && a.largest_layer.empty();
  }
  largest_layer_guess(a, r);
  r.config = c;
  r.stages = static_cast<std::int64_t>(stages.size());
  r.automatic = a.plan.automatic();
  r.data_parallel_ranks = std::max(c.sharded_data_parallel,
                                   c.shard_optimizer_states ? c.data_parallel : std::int64_t{1});
  memory_outcome out;
  out.warnings = r.estimates;
  if (!r.plan.fits) {
    out.shortfall = shortfall_of(r, c, *capacity);
  }
  if (a.report.picture()) {
    detail::picture_inputs in;
    in.memory = &r;
    in.capacity = capacity ? std::optional<double>(*capacity) : std::nullopt;
    in.lay_out = a.report.lay_out;
    // The page's cost bars are FLOPs, which memory's own report does not
    // count (a trial's page showed draw's rounded costs unmarked).
    in.rounding_then = "and the stages' costs that much too large";
    io::picture p = detail::picture_of(*source, result, in);
    p.notes.push_back(
        "Largest device: " + io::human_bytes(static_cast<double>(r.plan.largest_total_bytes)) +
        (capacity ? (r.plan.fits ? ", fits in " : ", does not fit in ") +
                        io::human_bytes(static_cast<double>(*capacity)) +
                        (r.plan.fits ? "" : ": " + out.shortfall)
                  : " (no --device-memory to fit)") +
        ". " + (c.training ? "Training" : "Inference") + ", tensor-parallel " +
        std::to_string(c.tensor_parallel) + ", data-parallel " + std::to_string(c.data_parallel) +
        ", sharded data parallel " + std::to_string(c.sharded_data_parallel) +
        "; the weights bars count them as stored.");
    p.command = "memory";
    p.title = a.report.title;
    detail::add_estimates(p, r.estimates);
    out.warnings = p.estimates; // the page's guesses, each warned once
    detail::write_picture(p, picture, a.report, out.written);
    out.picture = std::move(p);
    outputs.commit();
  } else {
    out.report = a.report.format == "json" ? io::to_json(r) : io::to_table(r);
  }
  out.plan = std::move(r);
  return out;
}

} // namespace shardpoint::app
