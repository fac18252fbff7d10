// shardpoint -- PopRT-compatible manual sharding of ONNX models.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <shardpoint/onnx/adapter.hpp>
#include <shardpoint/runtime/pipeline.hpp>

namespace fs = std::filesystem;
namespace sp = shardpoint::onnx;

namespace {

constexpr int exit_ok = 0;
constexpr int exit_usage = 1;
constexpr int exit_input = 2;
constexpr int exit_invalid = 3;

const char* const exit_codes = "Exit codes: 0 success; 1 usage error; 2 bad input (file, model, "
                               "config); 3 validation failed (nothing written unless --force).";

/// A usage error found after parsing (exit 1).
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct shard_args {
  std::string input;
  std::string config;
  std::vector<std::string> shard_flags;
  std::string output;
  std::string output_dir;
  std::optional<int> num_ipus;
  bool pipelining = false;
  std::optional<int> batches_per_step;
  std::string report = "table";
  bool strict = false;
  bool in_place = false;
  bool force = false;
};

struct sharded {
  sp::loaded_model model;
  sp::node_graph nodes;
  shardpoint::sharding_result result;
};

// What shard and simulate share: read the model and the points (config file
// then --shard flags), name the nodes, build the node graph and shard it.
sharded load_and_shard(const std::string& input, const std::string& config,
                       const std::vector<std::string>& flags, bool strict) {
  if (config.empty() && flags.empty()) {
    throw usage_error(
        "give --manual-sharding-config FILE or at least one --shard NODE=DEVICE[:STAGE]");
  }
  sharded out{sp::read_model(input), {}, {}};
  std::vector<sp::config_entry> entries;
  if (!config.empty()) {
    entries = sp::read_config(config);
  }
  for (const auto& flag : flags) {
    entries.push_back(sp::parse_shard_flag(flag));
  }
  auto& graph = *out.model.proto().mutable_graph();
  sp::assign_names(graph, strict ? sp::naming::strict : sp::naming::rename_empty);
  out.nodes = sp::build_graph(graph);
  out.result = sp::shard(graph, out.nodes, sp::resolve(graph, entries));
  return out;
}

void print_report(const sp::report& r, const std::string& format) {
  std::cout << (format == "json" ? sp::to_json(r) : sp::to_table(r));
}

int run_shard(const shard_args& a) {
  fs::path output;
  if (a.in_place) {
    if (!a.output.empty() && fs::path(a.output) != fs::path(a.input)) {
      throw usage_error("--in-place writes the input model; do not give --output-model too");
    }
    output = a.input;
  } else {
    if (a.output.empty()) {
      throw usage_error("--output-model is required (or --in-place)");
    }
    output = a.output;
    if (!a.output_dir.empty() && output.is_relative()) {
      output = fs::path(a.output_dir) / output;
    }
    std::error_code ec;
    if (fs::exists(output, ec) && fs::equivalent(output, a.input, ec)) {
      throw usage_error("the output model is the input model; pass --in-place to overwrite it");
    }
  }
  auto [file, nodes, result] = load_and_shard(a.input, a.config, a.shard_flags, a.strict);
  auto& model = file.proto();
  auto& graph = *model.mutable_graph();
  sp::annotate(graph, result);

  shardpoint::pipeline_options options;
  options.num_devices = a.num_ipus;
  options.enable_pipelining = a.pipelining;
  options.batches_per_step = a.batches_per_step.value_or(1);
  auto diagnostics = sp::validate(graph, nodes, result, options);
  const bool failed = shardpoint::has_errors(diagnostics);
  if (a.report == "none") {
    for (const auto& d : diagnostics) {
      std::cerr << "shardpoint: " << shardpoint::to_string(d.severity) << " ["
                << shardpoint::to_string(d.rule) << "] " << d.message << '\n';
    }
  } else {
    print_report(sp::make_report(model, nodes, result, std::move(diagnostics)), a.report);
  }
  if (failed && !a.force) {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
    return exit_invalid;
  }
  sp::save_model(model, output);
  std::cerr << "shardpoint: wrote " << output.string() << '\n';
  return failed ? exit_invalid : exit_ok;
}

struct simulate_args {
  std::string input;
  std::string config;
  std::vector<std::string> shard_flags;
  int batches_per_step = 0;
  std::optional<int> num_ipus;
  std::string mode = "virtual";
  std::string cost = "unit";
  int unit_us = 100;
  int queue_depth = 4;
  std::string report = "table";
  std::string trace;
  bool strict = false;
};

std::string simulate_table(const shardpoint::runtime::run_metrics& m) {
  std::ostringstream os;
  char line[256];
  os << "mode " << m.mode << ", " << m.micro_batches << " micro-batches, " << m.stages.size()
     << " stages on " << m.devices.size() << " devices\n";
  std::snprintf(line, sizeof line, "%-6s %-7s %7s %9s %12s %7s\n", "stage", "device", "nodes",
                "cost", "busy", "util");
  os << line;
  for (const auto& s : m.stages) {
    std::snprintf(line, sizeof line, "%-6d %-7d %7zu %9lld %12.0f %6.1f%%\n", s.stage, s.device,
                  s.nodes, static_cast<long long>(s.cost), s.busy, 100 * s.utilisation);
    os << line;
  }
  std::snprintf(line, sizeof line,
                "makespan %.1f units (analytic %lld), throughput %.6f micro-batches/unit, bubble "
                "%.1f%%\n",
                m.makespan, static_cast<long long>(m.analytic_makespan), m.throughput,
                100 * m.bubble_fraction);
  os << line;
  if (m.mode == "threads") {
    std::snprintf(line, sizeof line, "wall time %.3f s\n", m.wall_seconds);
    os << line;
  }
  os << "bottleneck: stage " << m.bottleneck_stage << " (cost "
     << m.stages[static_cast<std::size_t>(m.bottleneck_stage)].cost << " per micro-batch)\n";
  os << "\ntimeline (a row per device, digits are stages, '.' is idle):\n"
     << shardpoint::runtime::timeline(m);
  return os.str();
}

std::string simulate_json(const shardpoint::runtime::run_metrics& m) {
  nlohmann::json j;
  j["mode"] = m.mode;
  j["micro_batches"] = m.micro_batches;
  j["makespan"] = m.makespan;
  j["analytic_makespan"] = m.analytic_makespan;
  j["throughput"] = m.throughput;
  j["bubble_fraction"] = m.bubble_fraction;
  j["bottleneck_stage"] = m.bottleneck_stage;
  if (m.mode == "threads") {
    j["wall_seconds"] = m.wall_seconds;
  }
  j["stages"] = nlohmann::json::array();
  for (const auto& s : m.stages) {
    j["stages"].push_back({{"stage", s.stage},
                           {"device", s.device},
                           {"nodes", s.nodes},
                           {"cost", s.cost},
                           {"busy", s.busy},
                           {"utilisation", s.utilisation}});
  }
  j["devices"] = nlohmann::json::array();
  for (const auto& d : m.devices) {
    j["devices"].push_back(
        {{"device", d.device}, {"busy", d.busy}, {"utilisation", d.utilisation}});
  }
  return j.dump(2) + "\n";
}

int run_simulate(const simulate_args& a) {
  namespace rt = shardpoint::runtime;
  auto [file, nodes, result] = load_and_shard(a.input, a.config, a.shard_flags, a.strict);
  auto& model = file.proto();
  const auto costs =
      sp::estimate_costs(model, a.cost == "flops" ? sp::cost_model::flops : sp::cost_model::unit);
  rt::pipeline_plan plan;
  try {
    plan = rt::make_plan(
        result, [&](std::size_t i) { return costs[i]; }, a.batches_per_step, a.num_ipus);
  } catch (const rt::config_error& e) {
    std::cerr << "shardpoint: cannot run as a pipeline: " << e.what() << '\n';
    return exit_invalid;
  }
  const rt::session session(plan, rt::device_manager(plan.num_devices));
  rt::run_options options;
  options.micro_batches = a.batches_per_step;
  options.queue_depth = static_cast<std::size_t>(a.queue_depth);
  options.unit = std::chrono::microseconds(a.unit_us);
  options.keep_items =
      plan.stages.size() * static_cast<std::size_t>(a.batches_per_step) <= 4'000'000;
  const auto m = a.mode == "threads" ? session.run_threads(options) : session.run_virtual(options);
  if (!a.trace.empty()) {
    sp::write_file_atomically(a.trace, rt::chrome_trace(m, a.mode == "threads" ? a.unit_us : 1.0));
  }
  std::cout << (a.report == "json" ? simulate_json(m) : simulate_table(m));
  return exit_ok;
}

int run_inspect(const std::string& input, const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern.empty() ? std::string(".*") : pattern);
  } catch (const std::regex_error& e) {
    throw usage_error("--grep '" + pattern + "' is not a valid regular expression: " + e.what());
  }
  const auto file = sp::read_model(input);
  const auto& g = file.proto().graph();
  for (int v = 0; v < g.node_size(); ++v) {
    const auto& n = g.node(v);
    if (!pattern.empty() && !std::regex_search(n.name(), re) &&
        !std::regex_search(n.op_type(), re)) {
      continue;
    }
    std::string ins;
    std::string outs;
    for (const auto& i : n.input()) {
      ins += (ins.empty() ? "" : ", ") + i;
    }
    for (const auto& o : n.output()) {
      outs += (outs.empty() ? "" : ", ") + o;
    }
    std::cout << v << '\t' << (n.name().empty() ? "<unnamed>" : n.name()) << '\t' << n.op_type()
              << '\t' << ins << " -> " << outs << '\n';
  }
  return exit_ok;
}

int run_validate(const std::string& input, std::optional<int> num_ipus, bool pipelining,
                 std::optional<int> batches_per_step, const std::string& format) {
  auto file = sp::read_model(input);
  auto& model = file.proto();
  const auto& g = model.graph();
  const sp::node_graph nodes = sp::build_graph(g);
  const auto result = sp::read_annotations(g);
  shardpoint::pipeline_options options;
  options.num_devices = num_ipus;
  options.enable_pipelining = pipelining || (batches_per_step.has_value() && result.has_stages());
  options.batches_per_step = batches_per_step.value_or(1);
  auto diagnostics = sp::validate(g, nodes, result, options);
  const bool failed = shardpoint::has_errors(diagnostics);
  print_report(sp::make_report(model, nodes, result, std::move(diagnostics)), format);
  return failed ? exit_invalid : exit_ok;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"shardpoint: PopRT-compatible manual sharding of ONNX models.\n" +
               std::string(exit_codes)};
  app.footer(exit_codes);
  app.require_subcommand(1);

  shard_args sa;
  auto* shard =
      app.add_subcommand("shard", "Annotate a model with __ipu_number / __pipeline_stage");
  shard->add_option("--input-model,--input_model", sa.input, "Model to shard")->required();
  shard->add_option("--manual-sharding-config,--manual_sharding_config", sa.config,
                    "shard.yaml (list of {node, device, stage}) or a sharding_info / "
                    "pipelining_info mapping (YAML or .json)");
  shard->add_option("--shard", sa.shard_flags, "A sharding point NODE=DEVICE[:STAGE] (repeatable)");
  shard->add_option("--output-model,--output_model", sa.output, "Where to write the sharded model");
  shard->add_option("--output-dir,--output_dir", sa.output_dir,
                    "Folder for a relative --output-model");
  shard->add_option("--num-ipus,--num_ipus", sa.num_ipus, "Devices available (checked)");
  shard->add_flag("--enable-pipelining,--enable_pipelining", sa.pipelining,
                  "Validate for pipelined execution");
  shard->add_option("--batches-per-step,--batches_per_step", sa.batches_per_step,
                    "Micro-batches per step (with pipelining: a multiple of the stages)");
  shard
      ->add_option("--report", sa.report,
                   "Report format; none prints only validation findings (on stderr) and skips "
                   "the shape inference that sizes the crossing tensors")
      ->check(CLI::IsMember({"table", "json", "none"}));
  shard->add_flag("--only_manual_sharding,--only-manual-sharding", sa.strict,
                  "Require unique names on every node; rename nothing");
  shard->add_flag("--in-place,--in_place", sa.in_place, "Overwrite the input model");
  shard->add_flag("--force", sa.force, "Write the model even when validation fails");

  std::string inspect_model;
  std::string grep;
  auto* inspect =
      app.add_subcommand("inspect", "List nodes: index, name, op type, inputs -> outputs");
  inspect->add_option("model", inspect_model, "Model to list")->required();
  inspect->add_option("--grep", grep, "Only nodes whose name or op type matches REGEX");

  std::string validate_model;
  std::optional<int> v_ipus;
  std::optional<int> v_bps;
  bool v_pipelining = false;
  std::string v_report = "table";
  auto* validate =
      app.add_subcommand("validate", "Check the sharding attributes already in a model");
  validate->add_option("model", validate_model, "Model to check")->required();
  validate->add_option("--num-ipus,--num_ipus", v_ipus, "Devices available");
  validate->add_option("--batches-per-step,--batches_per_step", v_bps,
                       "Micro-batches per step (turns on the pipelining checks)");
  validate->add_flag("--enable-pipelining,--enable_pipelining", v_pipelining, "Pipelining checks");
  validate->add_option("--report", v_report, "Report format")
      ->check(CLI::IsMember({"table", "json"}));

  simulate_args sim;
  auto* simulate = app.add_subcommand(
      "simulate", "Emulate the pipelined execution of a sharded model (virtual or threads mode)");
  simulate->add_option("--input-model,--input_model", sim.input, "Model to shard and run")
      ->required();
  simulate->add_option("--manual-sharding-config,--manual_sharding_config", sim.config,
                       "Sharding config, as for shard");
  simulate->add_option("--shard", sim.shard_flags,
                       "A sharding point NODE=DEVICE[:STAGE] (repeatable)");
  simulate
      ->add_option("--batches-per-step,--batches_per_step", sim.batches_per_step,
                   "Micro-batches to run (a multiple of the stages)")
      ->required();
  simulate->add_option("--num-ipus,--num_ipus", sim.num_ipus, "Devices available (checked)");
  simulate
      ->add_option("--mode", sim.mode,
                   "virtual: discrete events in cost units; threads: a "
                   "thread per device, --unit-us per cost unit")
      ->check(CLI::IsMember({"virtual", "threads"}));
  simulate->add_option("--cost", sim.cost, "unit: 1 per node; flops: estimated MFLOPs per node")
      ->check(CLI::IsMember({"unit", "flops"}));
  simulate->add_option("--unit-us", sim.unit_us, "threads mode: microseconds per cost unit")
      ->check(CLI::Range(1, 10'000'000));
  simulate
      ->add_option("--queue-depth", sim.queue_depth,
                   "Ring buffer entries between stages (rounded up to a power of two)")
      ->check(CLI::Range(1, 1 << 20));
  simulate->add_option("--report", sim.report, "Report format")
      ->check(CLI::IsMember({"table", "json"}));
  simulate->add_option("--trace", sim.trace,
                       "Write Chrome trace-event JSON (Perfetto, chrome://tracing)");
  simulate->add_flag("--only_manual_sharding,--only-manual-sharding", sim.strict,
                     "Require unique names on every node; rename nothing");

  std::string synth_what;
  std::string synth_out;
  int layers = 12;
  int hidden = 8;
  int sequence = 16;
  auto* synth = app.add_subcommand(
      "synth", "Generate a synthetic model: resnet50 (the seed example's ResNet-50 v1) or "
               "decoder (29 nodes per layer)");
  synth->add_option("model", synth_what, "What to generate")
      ->required()
      ->check(CLI::IsMember({"resnet50", "decoder"}));
  synth->add_option("output", synth_out, "Output .onnx file")->required();
  synth->add_option("--layers", layers, "decoder: number of layers")
      ->check(CLI::Range(1, 10'000'000));
  synth->add_option("--hidden", hidden, "decoder: hidden size")->check(CLI::Range(1, 4096));
  synth->add_option("--sequence", sequence, "decoder: sequence length")->check(CLI::Range(1, 4096));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_ok : exit_usage;
  }
  try {
    if (*shard) {
      return run_shard(sa);
    }
    if (*inspect) {
      return run_inspect(inspect_model, grep);
    }
    if (*simulate) {
      return run_simulate(sim);
    }
    if (*validate) {
      return run_validate(validate_model, v_ipus, v_pipelining, v_bps, v_report);
    }
    if (*synth) {
      sp::save_model(synth_what == "resnet50" ? sp::synth_resnet50()
                                              : sp::synth_decoder(layers, hidden, sequence),
                     synth_out);
      return exit_ok;
    }
  } catch (const usage_error& e) {
    std::cerr << "shardpoint: usage: " << e.what() << '\n';
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "shardpoint: error: " << e.what() << '\n';
    return exit_input;
  }
  return exit_usage;
}
