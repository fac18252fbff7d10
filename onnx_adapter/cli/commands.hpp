// The commands of the shardpoint program, in the order --help lists them.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Adding a command: a file commands/<name>.cpp defining
//     action add_<name>(CLI::App& app)
// (it adds its subcommand and options to `app` and returns what runs it; copy
// commands/strip.cpp, the smallest), and one line in the list below.
#ifndef SHARDPOINT_CLI_COMMANDS_HPP
#define SHARDPOINT_CLI_COMMANDS_HPP

#include <functional>

#include <CLI/CLI.hpp>

#define SHARDPOINT_COMMANDS(X)                                                                     \
  X(shard)                                                                                         \
  X(suggest)                                                                                       \
  X(split)                                                                                         \
  X(weights)                                                                                       \
  X(memory)                                                                                        \
  X(inspect)                                                                                       \
  X(validate)                                                                                      \
  X(simulate)                                                                                      \
  X(plan)                                                                                          \
  X(draw)                                                                                          \
  X(strip)                                                                                         \
  X(synth)

namespace shardpoint::cli {

/// Runs a command once its options are parsed; returns the exit code.
using action = std::function<int()>;

#define SHARDPOINT_DECLARE_COMMAND(name) action add_##name(CLI::App& app);
SHARDPOINT_COMMANDS(SHARDPOINT_DECLARE_COMMAND)
#undef SHARDPOINT_DECLARE_COMMAND

} // namespace shardpoint::cli

#endif // SHARDPOINT_CLI_COMMANDS_HPP
