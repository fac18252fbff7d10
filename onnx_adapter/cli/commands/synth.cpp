// shardpoint synth: generate a synthetic model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_synth(CLI::App& app) {
  return add_command<synth_options>(app, [](const synth_options& a) {
    synth_model(a);
    print_written({a.output}); // as every command that writes a file says
    return exit_ok;
  });
}

} // namespace shardpoint::cli
