// shardpoint plan: the best training layout -- pipeline x tensor x data
// parallel, ZeRO stage, micro-batch, schedule -- of a model on a cluster.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_plan(CLI::App& app) {
  return add_command<plan_options>(app, [](const plan_options& a) {
    return print_verdict(plan_model(a), "no layout fits (the report says which rule refused each)");
  });
}

} // namespace shardpoint::cli
