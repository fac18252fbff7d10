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
  std::cout << r.report;
  return exit_code(verdict_of(r));
}

} // namespace

action add_validate(CLI::App& app) {
  auto a = std::make_shared<validate_options>();
  a->pipeline.batches_enable_pipelining = true;
  add_options(*app.add_subcommand("validate", "Check the sharding attributes already in a model"),
              *a);
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
