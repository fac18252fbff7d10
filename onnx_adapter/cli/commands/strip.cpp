// shardpoint strip: remove the sharding attributes from a model (ONNX
// Runtime's Gemm + activation fusion rejects models that carry them).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include <shardpoint/io/text.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

action add_strip(CLI::App& app) {
  return add_command<strip_options>(app, [](const strip_options& a) {
    const std::size_t removed = strip_model(a);
    std::cerr << "shardpoint: removed " << removed << " sharding attribute(s); wrote "
              << io::printable(a.output) << '\n';
    return exit_ok;
  });
}

} // namespace shardpoint::cli
