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
  add_options(*app.add_subcommand(
                  "memory", "The bytes every device holds (pipeline stages x tensor parallelism x "
                            "sharded data parallelism) and whether they fit"),
              *a);
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
