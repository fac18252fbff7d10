// shardpoint weights strategy | split | merge: tensor-parallel weights in
// MindSpore's terms (the seed document weight-sharding-strategy; docs/formats.md).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

std::string text(const std::vector<std::int64_t>& v, bool tuple) {
  std::string s = tuple ? "(" : "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    s.append(i ? ", " : "").append(std::to_string(v[i]));
  }
  return s + (tuple && v.size() == 1 ? ",)" : tuple ? ")" : "]");
}

void print_decisions(const std::vector<onnx::weight_decision>& decisions) {
  char line[512];
  std::snprintf(line, sizeof line, "%-32s %-16s %-6s %-11s %-10s %s\n", "weight", "shape", "stage",
                "layout", "shard", "why");
  std::cout << line;
  for (const auto& d : decisions) {
    std::string stages;
    for (int s : d.stages) {
      stages.append(stages.empty() ? "" : ",").append(std::to_string(s));
    }
    std::snprintf(line, sizeof line, "%-32s %-16s %-6s %-11s %-10s %s\n", d.name.c_str(),
                  text(d.shape, false).c_str(), stages.c_str(), io::to_string(d.choice.how),
                  text(d.shard, true).c_str(), d.choice.reason.c_str());
    std::cout << line;
  }
}

} // namespace

namespace {

int run_strategy(const weights_options& a) {
  const auto r = write_strategy(a);
  print_decisions(r.decisions);
  std::cerr << "shardpoint: wrote " << r.files << " strategy file(s) to " << a.strategy_dir << '\n';
  return exit_ok;
}

int run_split(const weights_options& a) {
  print_warnings(split_weights(a));
  std::cerr << "shardpoint: wrote the weights of every rank to " << a.ranks_dir << '\n';
  return exit_ok;
}

int run_merge(const weights_options& a) {
  print_warnings(merge_weights(a));
  std::cerr << "shardpoint: wrote " << a.output << '\n';
  return exit_ok;
}

} // namespace

action add_weights(CLI::App& app) {
  auto a = std::make_shared<weights_options>();
  auto* cmd = app.add_subcommand(
      "weights", "Tensor-parallel weights in MindSpore's terms: strategy files, per-rank "
                 "weights, and back");
  cmd->require_subcommand(1);

  auto* strategy = cmd->add_subcommand(
      "strategy", "Decide how every weight is split and write a MindSpore strategy per stage");
  add_to(*strategy, a->model, "Model (its pipeline stages from its attributes or a config)");
  strategy->add_option("--tensor-parallel", a->tensor_parallel, "Tensor-parallel degree T")
      ->required()
      ->check(device_count);
  strategy
      ->add_option("--devices-per-stage", a->devices_per_stage,
                   "Devices a stage (a multiple of T; default T)")
      ->check(device_count);
  strategy->add_option("--layout", a->layout,
                       "Layout file (name: column|row|vocab|replicated|[shard]); default: "
                       "derived from the graph");
  strategy->add_option("--layout-out", a->layout_out, "Write the decisions as a layout file");
  strategy->add_option("--output-dir", a->strategy_dir, "Folder for stage<s>.ckpt / .json")
      ->required();
  strategy->add_option("--format", a->format, "ckpt: protobuf; json: MindSpore's JSON form")
      ->check(CLI::IsMember({"ckpt", "json"}));
  strategy
      ->add_option("--layout-form", a->layout_form,
                   "mindspore: as MindSpore's own writer (default); tutorial: as the tutorial's "
                   "save_strategy_file, byte for byte (protobuf only)")
      ->check(CLI::IsMember({"mindspore", "tutorial"}));
  strategy->add_flag("--replicate-shared", a->replicate_shared,
                     "Write a weight read by two stages to both");
  strategy->add_flag("--force", a->force, "Replace an output folder that is not empty");

  auto* split = cmd->add_subcommand("split", "Cut every weight into what each rank loads");
  split->add_option("--input-model,--input_model", a->model.input,
                    "Model with the weights (or --from-weights, or --from-ranks)");
  split->add_option("--from-weights", a->from_weights,
                    "Whole weights instead of a model: a .safetensors (weights merge's) or .ckpt");
  split->add_option("--from-ranks", a->from_ranks,
                    "Re-shard: the rank_<r>/ folders of another strategy (with "
                    "--from-strategy-dir)");
  split->add_option("--from-strategy-dir", a->from_strategy_dir,
                    "The strategy files --from-ranks was cut with");
  split->add_option("--strategy-dir", a->strategy_dir, "Strategy files to cut by")->required();
  split->add_option("--output-dir", a->ranks_dir, "Folder for rank_<r>/")->required();
  split->add_option("--format", a->format, "ckpt: MindSpore checkpoints; safetensors")
      ->check(CLI::IsMember({"ckpt", "safetensors"}));
  split->add_flag("--force", a->force, "Replace an output folder that is not empty");

  auto* merge =
      cmd->add_subcommand("merge", "Re-assemble the full weights from every rank's files");
  merge->add_option("--strategy-dir", a->strategy_dir, "Strategy files")->required();
  merge->add_option("--ranks-dir", a->ranks_dir, "Folder of rank_<r>/")->required();
  merge
      ->add_option("--output", a->output,
                   "The weights: a MindSpore checkpoint when it ends in .ckpt, else safetensors")
      ->required();
  merge->add_flag("--force", a->force, "Replace the output file when it exists");

  return [a, strategy, split] {
    if (strategy->parsed()) {
      return run_strategy(*a);
    }
    if (split->parsed()) {
      return run_split(*a);
    }
    return run_merge(*a);
  };
}

} // namespace shardpoint::cli
