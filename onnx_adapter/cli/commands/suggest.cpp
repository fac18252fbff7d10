// shardpoint suggest: the balanced split of a model into pipeline stages,
// against the splits other frameworks would give, as a shard.yaml.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const suggest_options& a) {
  const auto r = suggest_split(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  if (a.report.picture()) { // the report's findings, where a table would show them
    print_findings(r.diagnostics);
  }
  if (verdict_of(r) == verdict::rule_broken && !a.force) {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
  }
  print_written(r.written);
  return exit_code(verdict_of(r));
}

} // namespace

action add_suggest(CLI::App& app) {
  auto a = std::make_shared<suggest_options>();
  auto* cmd = app.add_subcommand(
      "suggest", "Find the balanced split into pipeline stages (smallest bottleneck, under a "
                 "memory cap) and compare it with DeepSpeed's and PiPPy's");
  cmd->add_option("--input-model,--input_model", a->input, "Model to split")->required();
  add_to(*cmd, a->shapes);
  cmd->add_option("--stages", a->stages, "Pipeline stages (stage s on device s)")
      ->required()
      ->check(device_count);
  cmd->add_option("--num-ipus,--num_ipus", a->num_ipus, "Devices available (checked)")
      ->check(device_count);
  cmd->add_option("--memory-per-device,--device-memory", a->memory_per_device,
                  "Cap on each stage's parameter bytes (900MiB, 16GB, 123456789); with any "
                  "memory plan option, on the planner's total for each device")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() ? std::string("an empty size; give one, e.g. 16GiB") : std::string();
          },
          "SIZE"));
  cmd->add_option("--cost", a->cost,
                  "flops: estimated MFLOPs per node; unit: 1 per node; params: parameter bytes")
      ->check(CLI::IsMember({"flops", "unit", "params"}));
  cmd->add_option("--communication-weight", a->communication_weight,
                  "Cost units per byte a stage receives from earlier stages")
      ->check(CLI::Range(0.0, 1e12));
  cmd->add_option("--output-config", a->output_config, "Write the split as a PopRT shard.yaml");
  cmd->add_option("--output-model,--output_model", a->output_model,
                  "Write the model annotated with the split");
  add_to(*cmd, a->report, planning_reports,
         "Report: table, json, or a picture (html, svg) to --report-file");
  cmd->add_flag("--only_manual_sharding,--only-manual-sharding", a->strict,
                "Require unique names on every node; rename nothing");
  cmd->add_flag("--force", a->force, "Write even when validation fails");
  add_to(*cmd, a->plan);
  return [a, cmd] {
    a->planned = memory_flags_given(*cmd);
    if (a->plan.automatic()) {
      throw usage_error("suggest plans one sharded data parallel degree; give a number (shardpoint "
                        "memory --sharded-data-parallel auto finds one)");
    }
    return run(*a);
  };
}

} // namespace shardpoint::cli
