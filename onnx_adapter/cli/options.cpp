// The option groups several commands take, on CLI11.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <iostream>

#include <shardpoint/io/report.hpp>

#include "options.hpp"

namespace shardpoint::cli {

void add_to(CLI::App& cmd, model_points& m, const std::string& what, bool required) {
  cmd.add_option("--input-model,--input_model", m.input, what)->required(required);
  cmd.add_option("--manual-sharding-config,--manual_sharding_config", m.config,
                 "shard.yaml (list of {node, device, stage}) or a sharding_info / "
                 "pipelining_info mapping (YAML or .json); without it and --shard, the model's "
                 "own __ipu_number / __pipeline_stage attributes");
  cmd.add_option("--shard", m.shard_flags, "A sharding point NODE=DEVICE[:STAGE] (repeatable)");
  cmd.add_flag("--only_manual_sharding,--only-manual-sharding", m.strict,
               "Require unique names on every node; rename nothing");
}

void add_to(CLI::App& cmd, shape_flags& f) {
  cmd.add_option("--input-shape,--input_shape", f.input_shapes,
                 "Sizes of an input, NAME=D0,D1,... (or D0,D1,... for a model with one input; "
                 "repeatable): costs, bytes and activations are measured with them");
  cmd.add_option("--dim", f.dims,
                 "A symbolic input dimension's size, SYMBOL=N (repeatable), e.g. --dim batch=8");
}

void add_to(CLI::App& cmd, pipeline_flags& f, const std::string& bps_help) {
  cmd.add_option("--num-ipus,--num_ipus", f.num_ipus, "Devices available (checked)")
      ->check(device_count);
  cmd.add_flag("--enable-pipelining,--enable_pipelining", f.pipelining,
               "Validate for pipelined execution");
  cmd.add_option("--batches-per-step,--batches_per_step", f.batches_per_step, bps_help)
      ->check(batch_count);
}

void add_to(CLI::App& cmd, memory_flags& f, std::initializer_list<std::string_view> leave_out) {
  auto* g = cmd.add_option_group("memory plan", "What each device holds (shardpoint memory)");
  CLI::Option* inference = nullptr;
  CLI::Option* training = nullptr;
  for (const auto& o : memory_plan_options) {
    if (std::find(leave_out.begin(), leave_out.end(), o.flag) != leave_out.end()) {
      continue;
    }
    const std::string names =
        std::string(o.flag) + (o.alias.empty() ? "" : "," + std::string(o.alias));
    if (o.set != nullptr) {
      auto* added = g->add_flag(names, f.*o.set, std::string(o.help));
      (o.flag == "--inference" ? inference : o.flag == "--training" ? training : added) = added;
      continue;
    }
    auto* added = g->add_option(names, f.*o.text, std::string(o.help));
    if (!o.choices.empty()) {
      added->check(CLI::IsMember(choices_of(o)));
    }
  }
  inference->excludes(training);
}

bool memory_flags_given(const CLI::App& cmd) {
  for (const auto& o : memory_plan_options) {
    if (cmd.count(std::string(o.flag)) > 0) {
      return true;
    }
  }
  return false;
}

void add_to(CLI::App& cmd, report_flag& r, const std::vector<std::string>& formats,
            const std::string& help) {
  cmd.add_option("--report", r.format, help)->check(CLI::IsMember(formats));
  if (std::find(formats.begin(), formats.end(), "html") != formats.end()) {
    cmd.add_option("--report-file", r.file,
                   "With --report html: the page to write; with svg: a new folder of SVG files");
  }
}

void print_written(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    std::cerr << "shardpoint: wrote " << f << '\n';
  }
}

void print_findings(const std::vector<diagnostic>& diagnostics) {
  std::cerr << io::to_lines(diagnostics);
}

} // namespace shardpoint::cli
