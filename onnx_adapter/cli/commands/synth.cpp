// shardpoint synth: generate a synthetic model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_synth(CLI::App& app) {
  auto a = std::make_shared<synth_options>();
  auto* cmd = app.add_subcommand(
      "synth", "Generate a synthetic model: resnet50 (the seed example's ResNet-50 v1) or "
               "decoder (29 nodes per layer)");
  cmd->add_option("model", a->what, "What to generate")
      ->required()
      ->check(CLI::IsMember({"resnet50", "decoder"}));
  cmd->add_option("output", a->output, "Output .onnx file")->required();
  cmd->add_option("--layers", a->layers, "decoder: number of layers")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--hidden", a->hidden, "decoder: hidden size")->check(CLI::Range(1, 4096));
  cmd->add_option("--sequence", a->sequence, "decoder: sequence length")
      ->check(CLI::Range(1, 4096));
  return [a] {
    synth_model(*a);
    return exit_ok;
  };
}

} // namespace shardpoint::cli
