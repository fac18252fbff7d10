// shardpoint plan: the best training layout -- pipeline x tensor x data
// parallel, ZeRO stage, micro-batch, schedule -- of a model on a cluster.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const plan_options& a) {
  const auto r = plan_model(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  if (verdict_of(r) == verdict::rule_broken) {
    std::cerr << "shardpoint: no layout fits (the report says which rule refused each)\n";
  }
  print_written(r.written);
  return exit_code(verdict_of(r));
}

} // namespace

action add_plan(CLI::App& app) {
  auto a = std::make_shared<plan_options>();
  add_options(*app.add_subcommand(
                  "plan",
                  "The best training layout (pipeline x tensor x data parallel, ZeRO "
                  "stage, micro-batch, schedule) of a model on a cluster, under its memory"),
              *a);
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
