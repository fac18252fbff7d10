// shardpoint draw: a sharded model as a picture -- one HTML page, or a
// folder of SVG files.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const draw_options& a) {
  const auto r = draw_model(a);
  print_warnings(r.warnings);
  print_findings(r.diagnostics);
  print_written(r.written);
  return exit_ok;
}

} // namespace

action add_draw(CLI::App& app) {
  auto a = std::make_shared<draw_options>();
  auto* cmd = app.add_subcommand(
      "draw", "Draw a sharded model: where the split is, what each stage costs and holds, what "
              "crosses, how the pipeline runs (one HTML page, or SVG files)");
  add_to(*cmd, a->model, "Model to draw", true);
  add_to(*cmd, a->shapes);
  cmd->add_option("--format", a->report.format,
                  "html: one self-contained page; svg: a new folder of SVG files")
      ->check(CLI::IsMember({"html", "svg"}));
  cmd->add_option("--output", a->report.file, "The page (html) or the new folder (svg) to write")
      ->required();
  cmd->add_flag("--force", a->force, "Replace an earlier svg folder of shardpoint's");
  cmd->add_option("--cost", a->cost,
                  "flops: estimated MFLOPs per node (default); unit: 1 per node; params: "
                  "parameter bytes")
      ->check(CLI::IsMember({"flops", "unit", "params"}));
  cmd->add_option("--batches-per-step,--batches_per_step", a->batches_per_step,
                  "Micro-batches in the timeline (default: twice the stages)")
      ->check(batch_count);
  cmd->add_option("--schedule", a->schedule,
                  "The timeline of a training step: gpipe, 1f1b, interleaved or zb-h1 (default: "
                  "forward passes)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1"}));
  cmd->add_option("--virtual-stages", a->virtual_stages,
                  "interleaved: virtual stages a device (stage s on device s mod (stages / v))")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--backward-ratio", a->backward_ratio,
                  "A stage's backward time in forward times (default 2)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--weight-share", a->weight_share,
                  "zb-h1: the weight gradient's part of the backward (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--device-memory", a->device_memory,
                  "Memory of each device (32GiB, 16GB, 123456789): the memory bars' capacity");
  add_to(*cmd, a->plan, {"--batches-per-step", "--schedule"});
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
