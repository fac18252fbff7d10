// shardpoint shard: annotate a model with __ipu_number / __pipeline_stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include <shardpoint/io/text.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {
namespace fs = std::filesystem;

namespace {

int run(const shard_options& a) {
  const auto r = shard_file(a);
  print_report(r, a.report);
  if (r.written) {
    std::cerr << "shardpoint: wrote " << io::printable(r.output.string()) << '\n';
  } else {
    std::cerr << "shardpoint: validation failed; nothing written (--force writes anyway)\n";
  }
  return exit_code(verdict_of(r));
}

} // namespace

action add_shard(CLI::App& app) {
  return add_command<shard_options>(app, run);
}

} // namespace shardpoint::cli
