// shardpoint split: one runnable ONNX model per stage, and pipeline.json.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include <shardpoint/io/text.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_split(CLI::App& app) {
  return add_command<split_options>(app, [](const split_options& a) {
    const auto r = split_model(a);
    print_warnings(r.warnings);
    std::cout << r.report;
    std::cerr << "shardpoint: wrote " << r.stages << ' ' << a.by
              << " model(s) and pipeline.json to " << io::printable(a.output_dir) << '\n';
    return exit_ok;
  });
}

} // namespace shardpoint::cli
