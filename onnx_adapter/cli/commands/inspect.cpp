// shardpoint inspect: list a model's nodes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const inspect_options& a) {
  std::cout << inspect_model(a);
  return exit_ok;
}

} // namespace

action add_inspect(CLI::App& app) {
  return add_command<inspect_options>(app, run);
}

} // namespace shardpoint::cli
