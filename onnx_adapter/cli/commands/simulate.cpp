// shardpoint simulate: run a sharded model through the pipeline emulator.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const simulate_options& a) {
  const auto r = simulate_model(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  print_written(r.written);
  return exit_ok;
}

} // namespace

action add_simulate(CLI::App& app) {
  auto a = std::make_shared<simulate_options>();
  add_options(*app.add_subcommand("simulate", "Emulate the pipelined execution of a sharded model "
                                              "(virtual or threads mode)"),
              *a);
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
