// Option groups shared by several commands.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>

#include <shardpoint/io/report.hpp>

#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {
namespace fs = std::filesystem;

void model_points::add_to(CLI::App& cmd, const std::string& what) {
  cmd.add_option("--input-model,--input_model", input, what)->required();
  cmd.add_option("--manual-sharding-config,--manual_sharding_config", config,
                 "shard.yaml (list of {node, device, stage}) or a sharding_info / "
                 "pipelining_info mapping (YAML or .json); without it and --shard, the model's "
                 "own __ipu_number / __pipeline_stage attributes");
  cmd.add_option("--shard", shard_flags, "A sharding point NODE=DEVICE[:STAGE] (repeatable)");
  cmd.add_flag("--only_manual_sharding,--only-manual-sharding", strict,
               "Require unique names on every node; rename nothing");
}

sharded_model load_sharded(const model_points& m, bool unsharded_ok) {
  sharded_model out{onnx::read_model(m.input), {}, {}, false, {}};
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
  out.renamed =
      onnx::assign_names(graph, m.strict ? onnx::naming::strict : onnx::naming::rename_empty);
  out.nodes = onnx::build_graph(graph);
  out.result = onnx::shard(graph, out.nodes, onnx::resolve(graph, entries));
  return out;
}

void pipeline_flags::add_to(CLI::App& cmd, const std::string& bps_help) {
  cmd.add_option("--num-ipus,--num_ipus", num_ipus, "Devices available (checked)");
  cmd.add_flag("--enable-pipelining,--enable_pipelining", pipelining,
               "Validate for pipelined execution");
  cmd.add_option("--batches-per-step,--batches_per_step", batches_per_step, bps_help);
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

void report_flag::add_to(CLI::App& cmd, const std::vector<std::string>& formats,
                         const std::string& help) {
  cmd.add_option("--report", format, help)->check(CLI::IsMember(formats));
}

void print_findings(const std::vector<diagnostic>& diagnostics) {
  std::cerr << io::to_lines(diagnostics);
}

void check_output_is_not_input(const std::string& output, const std::string& input) {
  std::error_code ec;
  if (fs::exists(output, ec) && fs::equivalent(output, input, ec)) {
    throw usage_error("the output model is the input model; pass --in-place to overwrite it");
  }
}

} // namespace shardpoint::cli
