// shardpoint memory: the bytes every device holds -- pipeline stages x
// tensor parallelism x SageMaker's sharded data parallelism
// (the seed document sharded-data-parallelism; docs/memory-model.md) -- and whether they fit.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_memory(CLI::App& app) {
  auto a = std::make_shared<memory_options>();
  add_options(*app.add_subcommand(
                  "memory", "The bytes every device holds (pipeline stages x tensor parallelism x "
                            "sharded data parallelism) and whether they fit"),
              *a);
  return [a] {
    const auto r = plan_model_memory(*a);
    const auto v = verdict_of(r);
    return print_outcome(r, v, v == verdict::rule_broken ? "does not fit: " + r.shortfall : "");
  };
}

} // namespace shardpoint::cli
