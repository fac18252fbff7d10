// shardpoint suggest: the balanced split of a model into pipeline stages,
// against the splits other frameworks would give, as a shard.yaml.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const suggest_options& a) {
  const auto r = suggest_split(a);
  print_warnings(r.warnings);
  print_report(r, a.report);
  if (verdict_of(r) == verdict::rule_broken && !a.force) {
    // What was held back, by flag: a picture report is written regardless
    // (a trial read "nothing written" above "wrote v.html").
    std::string held;
    for (const auto& [flag, file] : {std::pair{"--output-config", &a.output_config},
                                     std::pair{"--output-model", &a.output_model}}) {
      if (!file->empty()) {
        held += std::string(held.empty() ? "" : " and ") + flag;
      }
    }
    std::cerr << "shardpoint: validation failed"
              << (held.empty() ? "\n" : "; " + held + " not written (--force writes anyway)\n");
  }
  print_written(r.written);
  return exit_code(verdict_of(r));
}

} // namespace

action add_suggest(CLI::App& app) {
  return add_command<suggest_options>(app, [](suggest_options& a, const CLI::App& cmd) {
    a.planned = memory_flags_given(cmd);
    if (a.plan.automatic()) {
      throw usage_error("suggest plans one sharded data parallel degree; give a number "
                        "(shardpoint memory --sharded-data-parallel auto finds one)");
    }
    return run(a);
  });
}

} // namespace shardpoint::cli
