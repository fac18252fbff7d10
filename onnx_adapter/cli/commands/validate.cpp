// shardpoint validate: check the sharding attributes already in a model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_validate(CLI::App& app) {
  return add_command<validate_options>(app, [](const validate_options& a) {
    const auto r = validate_model(a);
    print_report(r, a.report); // the verdict is the exit code
    return exit_code(verdict_of(r));
  });
}

} // namespace shardpoint::cli
