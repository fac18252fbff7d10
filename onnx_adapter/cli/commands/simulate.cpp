// shardpoint simulate: run a sharded model through the pipeline emulator.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_simulate(CLI::App& app) {
  return add_command<simulate_options>(
      app, [](const simulate_options& a) { return print_outcome(simulate_model(a)); });
}

} // namespace shardpoint::cli
