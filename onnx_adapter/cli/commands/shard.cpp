// shardpoint shard: annotate a model with __ipu_number / __pipeline_stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {
namespace fs = std::filesystem;

namespace {

int run(const shard_options& a) {
  const auto r = shard_file(a);
  if (a.report.format == "none") {
    print_findings(r.diagnostics);
  }
  std::cout << r.report;
  if (r.written) {
    std::cerr << "shardpoint: wrote " << r.output.string() << '\n';
  } else {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
  }
  return exit_code(verdict_of(r));
}

} // namespace

action add_shard(CLI::App& app) {
  auto a = std::make_shared<shard_options>();
  auto* cmd = app.add_subcommand("shard", "Annotate a model with __ipu_number / __pipeline_stage");
  add_to(*cmd, a->model);
  cmd->add_option("--output-model,--output_model", a->output, "Where to write the sharded model");
  cmd->add_option("--output-dir,--output_dir", a->output_dir,
                  "Folder for a relative --output-model");
  add_to(*cmd, a->pipeline, "Micro-batches per step (with pipelining: a multiple of the stages)");
  add_to(*cmd, a->report, {"table", "json", "none"},
         "Report format; none prints only validation findings (on stderr) and skips "
         "the shape inference that sizes the crossing tensors");
  add_to(*cmd, a->shapes);
  cmd->add_flag("--in-place,--in_place", a->in_place, "Overwrite the input model");
  cmd->add_flag("--force", a->force, "Write the model even when validation fails");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
