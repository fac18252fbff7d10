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
  auto a = std::make_shared<plan_options>();
  add_options(*app.add_subcommand(
                  "plan",
                  "The best training layout (pipeline x tensor x data parallel, ZeRO "
                  "stage, micro-batch, schedule) of a model on a cluster, under its memory"),
              *a);
  return [a] {
    const auto r = plan_model(*a);
    const auto v = verdict_of(r);
    return print_outcome(r, v,
                         v == verdict::rule_broken
                             ? "no layout fits (the report says which rule refused each)"
                             : "");
  };
}

} // namespace shardpoint::cli
