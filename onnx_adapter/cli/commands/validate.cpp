// shardpoint validate: check the sharding attributes already in a model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const validate_options& a) {
  const auto r = validate_model(a);
  if (a.report.format == "none") {
    print_findings(r.diagnostics);
  }
  std::cout << r.report;
  return exit_code(verdict_of(r));
}

} // namespace

action add_validate(CLI::App& app) {
  return add_command<validate_options>(app, "validate",
                                       "Check the sharding attributes already in a model", run);
}

} // namespace shardpoint::cli
