// weights strategy | split | merge: tensor-parallel weights in MindSpore's
// terms.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/errors.hpp>
#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/onnx/rank_weights.hpp>
#include <shardpoint/onnx/weights.hpp>

namespace shardpoint::app {

namespace {

// One warning naming the tensors a source held that no strategy lists.
std::vector<std::string> left_out_warning(const std::vector<std::string>& names,
                                          const std::string& into) {
  if (names.empty()) {
    return {};
  }
  const std::string list = io::quoted_names(names);
  return {std::to_string(names.size()) +
          " tensor(s) of the source are in no strategy file and "
          "left out of " +
          into + ": " + list +
          " (a training step's global_step or learning_rate is such a tensor; a weight among "
          "them means a strategy file is missing)"};
}

} // namespace

std::vector<std::string>
write_strategy_files(const std::vector<weights::stage_strategy>& strategies,
                     io::staged_folder& folder, const std::string& prefix, bool json,
                     weights::layout_form form) {
  // Only what weights split and merge read back (onnx/rank_weights.hpp): a
  // file's stage is a stage id (as weight_files.cpp reads it), and the ranks
  // within_most_ranks.
  std::int64_t files = 0;
  std::int64_t devices = 0; // a stage's (decide gives every stage the same)
  for (const auto& s : strategies) {
    if (s.parameters.empty()) {
      continue;
    }
    ++files;
    devices = s.parameters.front().layout.devices;
    if (s.stage > max_group_id) {
      throw bad_input_error("stage " + std::to_string(s.stage) +
                            " holds weights, but a strategy file's stage is a stage id in 0.." +
                            std::to_string(max_group_id) +
                            " (what weights split reads): put the last point below stage " +
                            std::to_string(max_group_id));
    }
  }
  if (!onnx::within_most_ranks(devices, files)) { // devices < 2^31, files <= 65537
    throw bad_parameter_error(std::to_string(devices * files) + " ranks (" +
                              std::to_string(devices) + " devices a stage x " +
                              std::to_string(files) +
                              " stages with weights), more than weights split and merge take (" +
                              std::to_string(onnx::most_ranks) + ")");
  }
  std::vector<std::string> names;
  for (const auto& s : strategies) {
    if (s.parameters.empty()) {
      continue; // no file for a stage without weights: MindSpore refuses an empty one
    }
    names.push_back(prefix + "stage" + std::to_string(s.stage) + (json ? ".json" : ".ckpt"));
    io::write_file_atomically(folder.file(names.back()),
                              json ? weights::strategy_to_json(s)
                                   : weights::strategy_to_protobuf(s, form));
  }
  return names;
}

strategy_outcome write_strategy(const weights_options& a) {
  if (a.tensor_parallel < 1 || (a.devices_per_stage && *a.devices_per_stage < 1)) {
    throw bad_parameter_error("the tensor-parallel degree and the devices per stage must be "
                              "positive");
  }
  if (a.format != "ckpt" && a.format != "json") {
    throw bad_parameter_error("format " + io::quote(a.format) + " is not ckpt or json");
  }
  if (a.layout_form != "mindspore" && a.layout_form != "tutorial") {
    throw bad_parameter_error("layout form " + io::quote(a.layout_form) +
                              " is not mindspore or tutorial");
  }
  const bool json = a.format == "json";
  const auto form = a.layout_form == "tutorial" ? weights::layout_form::tutorial
                                                : weights::layout_form::mindspore;
  if (json && form == weights::layout_form::tutorial) {
    throw usage_error("--layout-form tutorial writes what the tutorial's save_strategy_file "
                      "writes, protobuf only: use --format ckpt");
  }
  io::output_set outputs;
  protect_inputs(outputs, a.model.data.data() != nullptr ? std::string() : a.model.input, nullptr,
                 {{a.model.config, "the sharding config"}, {a.layout, "the layout file"}});
  auto& out = outputs.folder(a.strategy_dir, "--output-dir", a.force);
  const io::staged_file* layout_out =
      a.layout_out.empty() ? nullptr : &outputs.file(a.layout_out, "--layout-out");
  // (Nodes read as views where the model allows it, the initializers
  // parsed: what the decisions read.)
  auto [file, nodes, result, from_attributes, renamed] =
      load_sharded(a.model, true, reading::graph_views_measured);
  std::vector<io::layout_choice> layout;
  if (!a.layout.empty()) {
    layout = io::read_layout_file(a.layout);
  }
  const onnx::weight_options options{a.tensor_parallel, a.devices_per_stage, a.replicate_shared};
  const auto decisions =
      onnx::decide(file, nodes, result, options, a.layout.empty() ? nullptr : &layout);
  const auto strategies = onnx::strategies(decisions, options, result.num_stages());
  const std::size_t files = write_strategy_files(strategies, out, "", json, form).size();
  if (files == 0) {
    throw bad_input_error("the model has no initializers to split (weights held in Constant "
                          "nodes are not cut)");
  }
  if (layout_out != nullptr) {
    std::vector<io::layout_choice> choices;
    for (const auto& d : decisions) {
      choices.push_back(d.choice);
    }
    io::write_file_atomically(layout_out->staging(), io::to_layout_yaml(choices));
  }
  outputs.commit();
  strategy_outcome outcome{decisions, files, {}};
  // Asked for tensor parallelism and given none: every rank would hold
  // every weight whole, which a table of thousands of rows hides.
  const bool any_split = std::any_of(decisions.begin(), decisions.end(), [](const auto& d) {
    return std::any_of(d.shard.begin(), d.shard.end(), [](std::int64_t k) { return k > 1; });
  });
  if (a.tensor_parallel > 1 && !any_split) {
    outcome.warnings.push_back(splits_no_weight(a.tensor_parallel, !a.layout.empty()));
  }
  // Initializers no node reads are no stage's weights: in no strategy
  // file, so weights split and merge leave them out too (a trial's
  // light_resnet50 lost one unsaid).
  std::set<std::string_view> listed;
  for (const auto& d : decisions) {
    listed.insert(d.choice.name);
  }
  std::vector<std::string> unread;
  for (const std::string_view name : onnx::initializer_names(file)) {
    if (listed.count(name) == 0) {
      unread.emplace_back(name);
    }
  }
  if (!unread.empty()) {
    outcome.warnings.push_back(
        shardpoint::detail::counted(unread.size(), "initializer") + " of the model " +
        (unread.size() == 1 ? "is" : "are") +
        " read by no node and in no strategy file: weights split and merge leave " +
        (unread.size() == 1 ? "it" : "them") + " out (" + io::quoted_names(unread) + ")");
  }
  return outcome;
}

std::vector<std::string> split_weights(const weights_options& a) {
  const int sources = static_cast<int>(!a.model.input.empty()) +
                      static_cast<int>(!a.from_weights.empty()) +
                      static_cast<int>(!a.from_ranks.empty());
  if (sources != 1 || a.from_ranks.empty() != a.from_strategy_dir.empty()) {
    throw usage_error("weights split takes one source: --input-model, --from-weights, or "
                      "--from-ranks with --from-strategy-dir");
  }
  io::output_set outputs;
  outputs.input_folder(a.strategy_dir, "the strategy folder");
  if (!a.from_weights.empty()) {
    outputs.input(a.from_weights, "the weights");
  } else if (!a.from_ranks.empty()) {
    outputs.input_folder(a.from_ranks, "the rank folder");
    outputs.input_folder(a.from_strategy_dir, "the strategy folder of the ranks");
  } else {
    protect_inputs(outputs, a.model.input, nullptr);
  }
  auto& ranks = outputs.folder(a.ranks_dir, "--output-dir", a.force);
  const auto strategies = onnx::read_strategies(a.strategy_dir);
  const bool safetensors = a.format == "safetensors";
  std::vector<std::string> left_out;
  if (!a.from_weights.empty()) {
    left_out = onnx::write_rank_weights(onnx::file_weight_source(a.from_weights), strategies, ranks,
                                        safetensors);
  } else if (!a.from_ranks.empty()) {
    const auto from = onnx::read_strategies(a.from_strategy_dir);
    left_out = onnx::write_rank_weights(onnx::ranks_weight_source(from, a.from_ranks), strategies,
                                        ranks, safetensors);
  } else {
    // Weights as streamed; nodes as views where the model allows it, the
    // initializers parsed (what model_weight_source lists).
    const auto file = load_model(a.model.input, {}, reading::graph_views_measured);
    protect_inputs(outputs, a.model.input, &file);
    onnx::write_rank_weights(onnx::model_weight_source(file, a.model.input), strategies, ranks,
                             safetensors);
  }
  outputs.commit();
  return left_out_warning(left_out, "the ranks");
}

std::vector<std::string> merge_weights(const weights_options& a) {
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
  const auto left_out = onnx::merge_rank_weights(strategies, a.ranks_dir, output.staging(),
                                                 a.output.ends_with(".ckpt"));
  outputs.commit();
  return left_out_warning(left_out, io::quote(a.output));
}

} // namespace shardpoint::app
