// shardpoint inspect: list a model's nodes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include <shardpoint/io/text.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const inspect_options& a) {
  const std::string listed = inspect_model(a);
  std::cout << listed;
  if (!a.grep.empty() && (listed.empty() || listed == "[]\n")) {
    // Said, so that no match is not read as a model without nodes (still
    // exit 0: the listing is complete).
    std::cerr << "shardpoint: no node's name or op type matches --grep " << io::quote(a.grep)
              << '\n';
  }
  return exit_ok;
}

} // namespace

action add_inspect(CLI::App& app) {
  return add_command<inspect_options>(app, run);
}

} // namespace shardpoint::cli
