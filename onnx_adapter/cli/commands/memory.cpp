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
  return add_command<memory_options>(app, [](const memory_options& a) {
    const auto r = plan_model_memory(a);
    return print_verdict(r, "does not fit: " + r.shortfall);
  });
}

} // namespace shardpoint::cli
