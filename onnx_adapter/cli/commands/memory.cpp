// shardpoint memory: the bytes every device holds -- pipeline stages x
// tensor parallelism x SageMaker's sharded data parallelism
// (the seed document sharded-data-parallelism; docs/memory-model.md) -- and whether they fit.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const memory_options& a) {
  const auto r = plan_model_memory(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  print_written(r.written);
  if (verdict_of(r) == verdict::rule_broken) {
    std::cerr << "shardpoint: does not fit: " << r.shortfall << '\n';
  }
  return exit_code(verdict_of(r));
}

} // namespace

action add_memory(CLI::App& app) {
  auto a = std::make_shared<memory_options>();
  auto* cmd = app.add_subcommand(
      "memory", "The bytes every device holds (pipeline stages x tensor parallelism x sharded "
                "data parallelism) and whether they fit");
  add_to(*cmd, a->model, "Model, sharded into pipeline stages (or give --parameters)", false);
  add_to(*cmd, a->shapes);
  cmd->add_option("--parameters", a->parameters,
                  "Plan from counts alone, without a model: N parameters (e.g. 7.5e9)");
  cmd->add_option("--largest-layer-parameters", a->largest_layer,
                  "With --parameters: the largest layer's parameters (default all, a guess the "
                  "report marks)");
  cmd->add_option("--pipeline-parallel", a->pipeline_parallel,
                  "With --parameters: P pipeline stages, the parameters split evenly");
  cmd->add_option("--device-memory", a->device_memory,
                  "Memory of each device (32GiB, 16GB, 123456789): exit 3 when one does not fit");
  cmd->add_flag("--compare-stages", a->compare_stages,
                "Also the model states of the largest device under each ZeRO stage");
  cmd->add_flag("--compare-deepspeed", a->compare_deepspeed,
                "Also DeepSpeed's estimator (estimate_zero2/zero3_model_states_mem_needs) for "
                "the same counts, and where shardpoint counts differently");
  cmd->add_option("--gpus-per-node", a->gpus_per_node,
                  "With --compare-deepspeed: GPUs a node (default: the whole group on one)");
  add_to(*cmd, a->plan);
  add_to(*cmd, a->report, planning_reports,
         "Report: table, json, or a picture (html, svg) to --report-file");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
