// weights strategy | split | merge: tensor-parallel weights in MindSpore's
// terms.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/onnx/weights.hpp>

namespace shardpoint::app {

strategy_outcome write_strategy(const weights_options& a) {
  if (a.tensor_parallel < 1 || (a.devices_per_stage && *a.devices_per_stage < 1)) {
    throw bad_parameter_error("the tensor-parallel degree and the devices per stage must be "
                              "positive");
  }
  if (a.format != "ckpt" && a.format != "json") {
    throw bad_parameter_error("format " + io::quote(a.format) + " is not ckpt or json");
  }
  io::output_set outputs;
  protect_inputs(outputs, a.model.data.data() != nullptr ? std::string() : a.model.input, nullptr,
                 {{a.model.config, "the sharding config"}, {a.layout, "the layout file"}});
  auto& out = outputs.folder(a.strategy_dir, "--output-dir", a.force);
  const io::staged_file* layout_out =
      a.layout_out.empty() ? nullptr : &outputs.file(a.layout_out, "--layout-out");
  auto [file, nodes, result, from_attributes, renamed] = load_sharded(a.model, true);
  const auto& graph = file.proto().graph();
  std::vector<io::layout_choice> layout;
  if (!a.layout.empty()) {
    layout = io::read_layout_file(a.layout);
  }
  const onnx::weight_options options{a.tensor_parallel, a.devices_per_stage, a.replicate_shared};
  const auto decisions =
      onnx::decide(graph, nodes, result, options, a.layout.empty() ? nullptr : &layout);
  const auto strategies = onnx::strategies(decisions, options, result.num_stages());
  for (const auto& s : strategies) {
    const bool json = a.format == "json";
    io::write_file_atomically(
        out.file("stage" + std::to_string(s.stage) + (json ? ".json" : ".ckpt")),
        json ? weights::strategy_to_json(s) : weights::strategy_to_protobuf(s));
  }
  if (layout_out != nullptr) {
    std::vector<io::layout_choice> choices;
    for (const auto& d : decisions) {
      choices.push_back(d.choice);
    }
    io::write_file_atomically(layout_out->staging(), io::to_layout_yaml(choices));
  }
  outputs.commit();
  return {decisions, strategies.size()};
}

void split_weights(const weights_options& a) {
  io::output_set outputs;
  protect_inputs(outputs, a.model.input, nullptr);
  outputs.input_folder(a.strategy_dir, "the strategy folder");
  auto& ranks = outputs.folder(a.ranks_dir, "--output-dir", a.force);
  const auto strategies = onnx::read_strategies(a.strategy_dir);
  const auto file = load_model(a.model.input, {}, reading::whole);
  protect_inputs(outputs, a.model.input, &file);
  onnx::write_rank_weights(file.proto(), a.model.input, strategies, ranks,
                           a.format == "safetensors");
  outputs.commit();
}

void merge_weights(const weights_options& a) {
  io::output_set outputs;
  outputs.input_folder(a.strategy_dir, "the strategy folder");
  outputs.input_folder(a.ranks_dir, "the rank folder");
  const auto& output = outputs.file(a.output, "--output"); // a folder, FIFO, link: refused here
  if (!a.force && std::filesystem::exists(a.output)) {
    throw bad_input_error(io::quote(a.output) +
                          ": exists; --force replaces it (shardpoint replaces files only when "
                          "asked)");
  }
  const auto strategies = onnx::read_strategies(a.strategy_dir);
  onnx::merge_rank_weights(strategies, a.ranks_dir, output.staging());
  outputs.commit();
}

} // namespace shardpoint::app
