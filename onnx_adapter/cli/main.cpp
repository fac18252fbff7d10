// shardpoint -- PopRT-compatible sharding of ONNX models: the driver. Every
// command is a file in commands/ (see commands.hpp); exit codes are
// exit_codes.hpp's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/io/config.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/version.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"

namespace {

using namespace shardpoint::cli;

std::string version() {
  return "shardpoint " SHARDPOINT_VERSION_STRING;
}

// The subcommand named on the command line, if any.
CLI::App* chosen(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      continue;
    }
    for (auto* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[i]) {
        return sub;
      }
    }
    return nullptr;
  }
  return nullptr;
}

// "unknown option '--num_ipu'; did you mean '--num_ipus'?", one line.
int unknown_arguments(CLI::App& app, const CLI::ExtrasError& e, int argc, char** argv) {
  CLI::App* cmd = chosen(app, argc, argv);
  CLI::App& where = cmd ? *cmd : app;
  std::vector<std::string> names;
  for (const auto* opt : where.get_options()) {
    for (const auto& n : opt->get_lnames()) {
      names.push_back("--" + n);
    }
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string unknown;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      const std::string flag(arg.substr(0, arg.find('=')));
      bool known = flag == "--help" || flag == "--version";
      for (const auto& n : names) {
        known = known || n == flag;
      }
      if (!known) {
        unknown = flag;
        break;
      }
    }
  }
  const std::string context = cmd ? " for '" + cmd->get_name() + "'" : "";
  if (unknown.empty()) {
    std::cerr << "shardpoint: usage: " << e.what() << context << " (see --help)\n";
    return exit_usage;
  }
  const auto hint = shardpoint::config::closest(unknown, views, 1);
  std::cerr << "shardpoint: usage: unknown option '" << unknown << "'" << context;
  if (!hint.empty()) {
    std::cerr << "; did you mean '" << hint.front() << "'?";
  }
  std::cerr << '\n';
  return exit_usage;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"shardpoint: PopRT-compatible sharding of ONNX models.\n" +
               std::string(exit_codes_help)};
  app.footer(exit_codes_help);
  app.set_version_flag("--version", version(), "Print the version and exit");
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App*, action>> commands;
#define SHARDPOINT_ADD_COMMAND(name)                                                               \
  {                                                                                                \
    auto run = add_##name(app);                                                                    \
    commands.emplace_back(app.get_subcommands({}).back(), std::move(run));                         \
  }
  SHARDPOINT_COMMANDS(SHARDPOINT_ADD_COMMAND)
#undef SHARDPOINT_ADD_COMMAND

  // Before any thread starts: SIGINT, SIGTERM and SIGHUP remove the
  // temporaries of the outputs being written (io/outputs.hpp).
  shardpoint::io::remove_temporaries_on_signals();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    return unknown_arguments(app, e, argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) { // --help, --version
      return app.exit(e);
    }
    CLI::App* cmd = chosen(app, argc, argv);
    const std::string see =
        cmd ? " (see shardpoint " + cmd->get_name() + " --help)" : " (see --help)";
    // A value its option cannot take (not a number, out of range, not one
    // of the choices) is a bad parameter, exit 2, as when a command finds it
    // later; the shape of the command line is usage, exit 1.
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr ||
        dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
      std::cerr << "shardpoint: error: " << one_line(e.what()) << see << '\n';
      return exit_input;
    }
    std::cerr << "shardpoint: usage: " << one_line(e.what()) << see << '\n';
    return exit_usage;
  }
  for (auto& [cmd, run] : commands) {
    if (cmd->parsed()) {
      try {
        return run();
      } catch (...) {
        return report_current_exception("running 'shardpoint " + cmd->get_name() + "'");
      }
    }
  }
  return exit_usage;
}
