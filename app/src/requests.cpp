// The steps commands share: loading a model, sharding it, reading the
// memory planner's options, declaring the inputs.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <filesystem>

#include <shardpoint/app/requests.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::app {
namespace fs = std::filesystem;

onnx::loaded_model load_model(const std::string& path, std::string_view data, reading what) {
  if (data.data() != nullptr) {
    const std::string name = path.empty() ? "<bytes>" : path;
    return what == reading::graph ? onnx::parse_graph(data, name) : onnx::parse_model(data, name);
  }
  auto model = what == reading::graph ? onnx::read_graph(path) : onnx::read_model(path);
  onnx::check_external_locations(model.proto().graph(), fs::path(path).parent_path());
  return model;
}

sharded_model load_sharded(const model_points& m, bool unsharded_ok, reading what) {
  sharded_model out{load_model(m.input, m.data, what), {}, {}, false, {}};
  auto& graph = *out.model.proto().mutable_graph();
  if (!m.has_points()) {
    if (!onnx::has_annotations(graph) && unsharded_ok) {
      out.nodes = onnx::build_graph(graph);
      out.result = sharding_result(static_cast<std::size_t>(graph.node_size()), {}, {});
      return out;
    }
    if (!onnx::has_annotations(graph)) {
      throw usage_error("give --manual-sharding-config FILE or at least one --shard "
                        "NODE=DEVICE[:STAGE] (the model has no sharding attributes)");
    }
    out.nodes = onnx::build_graph(graph);
    out.result = onnx::read_annotations(graph);
    out.from_attributes = true;
    return out;
  }
  std::vector<onnx::config_entry> entries;
  if (!m.config.empty()) {
    entries = config::read_file(m.config);
  }
  for (const auto& flag : m.shard_flags) {
    entries.push_back(config::parse_shard_flag(flag));
  }
  entries.insert(entries.end(), m.entries.begin(), m.entries.end());
  out.renamed =
      onnx::assign_names(graph, m.strict ? onnx::naming::strict : onnx::naming::rename_empty);
  out.nodes = onnx::build_graph(graph);
  out.result = onnx::shard(graph, out.nodes, onnx::resolve(graph, entries));
  return out;
}

pipeline_options pipeline_flags::options(const sharding_result& r) const {
  pipeline_options o;
  o.num_devices = num_ipus;
  o.enable_pipelining =
      pipelining || (batches_enable_pipelining && batches_per_step.has_value() && r.has_stages());
  o.batches_per_step = batches_per_step.value_or(1);
  o.spelling = flag_spelling;
  return o;
}

std::int64_t parse_count(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  try { // digits exactly, then 1e6 and the like
    const long long whole = std::stoll(text, &used, 10);
    if (used == text.size()) {
      return whole;
    }
  } catch (const std::exception&) {
  }
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == text.size() && !text.empty() && std::isfinite(value) && value == std::floor(value) &&
      !(std::abs(value) < 4.6e18)) {
    throw bad_parameter_error(flag + " " + io::quote(text) + " is too large (at most 4.6e18)");
  }
  if (used != text.size() || text.empty() || !(std::abs(value) < 4.6e18) ||
      value != std::floor(value)) {
    throw bad_parameter_error(flag + " " + io::quote(text) +
                              " is not a whole number (e.g. 8, 1e6)");
  }
  return static_cast<std::int64_t>(value);
}

parallel_config memory_flags::config() const {
  // The command line checks the choices as it parses (CLI11); these checks
  // are for every other caller (the Python bindings).
  for (const auto& o : memory_plan_options) {
    const std::string* value = o.text != nullptr ? &(this->*o.text) : nullptr;
    if (value == nullptr || o.choices.empty() || value->empty()) {
      continue; // free text, or the default
    }
    std::string list;
    bool known = false;
    for (const auto& choice : choices_of(o)) {
      known = known || *value == choice;
      list.append(list.empty() ? "" : ", ").append(choice);
    }
    if (!known) {
      throw bad_parameter_error(std::string(o.flag) + " " + io::quote(*value) + " is not one of " +
                                list);
    }
  }
  parallel_config c;
  c.training = !inference;
  if (inference && (!optimizer.empty() || !precision.empty() || fp16 || bf16)) {
    throw usage_error("--optimizer, --precision, --fp16 and --bf16 describe training; drop them "
                      "or --inference");
  }
  c.optimizer = optimizer == "sgd"    ? optimizer_kind::sgd
                : optimizer == "none" ? optimizer_kind::none
                                      : optimizer_kind::adam;
  // SageMaker's two flags, and --precision on top: asking for both 16-bit
  // types is the planner's fp16-or-bf16 rule.
  c.fp16 = fp16 || precision == "fp16";
  c.bf16 = bf16 || precision == "bf16";
  if (precision == "fp32" && (fp16 || bf16)) {
    throw usage_error(std::string("--precision fp32 contradicts --") + (fp16 ? "fp16" : "bf16"));
  }
  if (precision.empty() && !fp16 && !bf16) {
    c.fp16 = true; // the default: the ZeRO paper's mixed precision
  }
  c.tensor_parallel = parse_count("--tensor-parallel", tensor_parallel);
  c.data_parallel = parse_count("--data-parallel", data_parallel);
  c.sharded_data_parallel =
      automatic() ? 1 : parse_count("--sharded-data-parallel", sharded_data_parallel);
  c.shard_optimizer_states = shard_optimizer_states;
  c.param_persistence_threshold =
      parse_count("--param-persistence-threshold", persistence_threshold);
  c.max_live_parameters = parse_count("--max-live-parameters", max_live_parameters);
  c.micro_batch_size = parse_count("--micro-batch-size", micro_batch_size);
  c.micro_batches = parse_count("--batches-per-step", batches_per_step);
  c.schedule = schedule == "1f1b" ? pipeline_schedule::one_f_one_b : pipeline_schedule::gpipe;
  c.queue_depth = parse_count("--queue-depth", queue_depth);
  return c;
}

void protect_inputs(io::output_set& outputs, const std::string& path,
                    const onnx::loaded_model* model,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> files) {
  if (!path.empty()) {
    outputs.input(path, "the input model");
    if (model != nullptr) {
      // (load_model checked these locations: inside the model's folder.)
      const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
      for (const auto& location : onnx::external_locations(model->proto().graph())) {
        outputs.input(dir / location, "an external data file of the input model");
      }
    }
  }
  for (const auto& [file, what] : files) {
    if (!file.empty()) {
      outputs.input(std::string(file), what);
    }
  }
}

} // namespace shardpoint::app
