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
  for (const auto& note : r.notes) {
    std::cerr << "shardpoint: note: " << note << '\n';
  }
  print_findings(r.diagnostics);
  print_written(r.written);
  return exit_ok;
}

} // namespace

action add_draw(CLI::App& app) {
  return add_command<draw_options>(app, run);
}

} // namespace shardpoint::cli
