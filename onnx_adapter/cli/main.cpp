// shardpoint -- PopRT-compatible manual sharding of ONNX models.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <shardpoint/onnx/adapter.hpp>

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
  if (a.config.empty() && a.shard_flags.empty()) {
    throw usage_error(
        "give --manual-sharding-config FILE or at least one --shard NODE=DEVICE[:STAGE]");
  }

  ::onnx::ModelProto model = sp::load_model(a.input);
  std::vector<sp::config_entry> entries;
  if (!a.config.empty()) {
    entries = sp::read_config(a.config);
  }
  for (const auto& flag : a.shard_flags) {
    entries.push_back(sp::parse_shard_flag(flag));
  }
  auto& graph = *model.mutable_graph();
  sp::assign_names(graph, a.strict ? sp::naming::strict : sp::naming::rename_empty);
  const sp::node_graph nodes = sp::build_graph(graph);
  const auto points = sp::resolve(graph, entries);
  const auto result = sp::shard(graph, nodes, points);
  sp::annotate(graph, result);

  shardpoint::pipeline_options options;
  options.num_devices = a.num_ipus;
  options.enable_pipelining = a.pipelining;
  options.batches_per_step = a.batches_per_step.value_or(1);
  auto diagnostics = sp::validate(graph, nodes, result, options);
  const bool failed = shardpoint::has_errors(diagnostics);
  print_report(sp::make_report(model, nodes, result, std::move(diagnostics)), a.report);
  if (failed && !a.force) {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
    return exit_invalid;
  }
  sp::save_model(model, output);
  std::cerr << "shardpoint: wrote " << output.string() << '\n';
  return failed ? exit_invalid : exit_ok;
}

int run_inspect(const std::string& input, const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern.empty() ? std::string(".*") : pattern);
  } catch (const std::regex_error& e) {
    throw usage_error("--grep '" + pattern + "' is not a valid regular expression: " + e.what());
  }
  const ::onnx::ModelProto model = sp::load_model(input);
  const auto& g = model.graph();
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
  const ::onnx::ModelProto model = sp::load_model(input);
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
  shard->add_option("--report", sa.report, "Report format")
      ->check(CLI::IsMember({"table", "json"}));
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
