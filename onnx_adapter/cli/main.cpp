// shardpoint -- PopRT-compatible sharding of ONNX models: the driver. Every
// command is a file in commands/ (see commands.hpp); exit codes are
// exit_codes.hpp's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/io/config.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/version.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"

namespace {

using namespace shardpoint::cli;

std::string version() {
  return "shardpoint " SHARDPOINT_VERSION_STRING;
}

// The innermost subcommand named on the command line ("weights merge"), if
// any.
CLI::App* chosen(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  CLI::App* found = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      continue;
    }
    CLI::App* next = nullptr;
    for (auto* sub : at->get_subcommands({})) {
      if (!sub->get_name().empty() && sub->get_name() == argv[i]) {
        next = sub;
      }
    }
    if (next == nullptr) {
      if (found != nullptr || at == &app) {
        break; // a value, or a word that names no command
      }
      continue;
    }
    found = at = next;
  }
  return found;
}

// "shardpoint weights merge": the command as typed, for messages.
std::string command_name(const CLI::App* cmd) {
  std::string name;
  for (; cmd != nullptr && cmd->get_parent() != nullptr; cmd = cmd->get_parent()) {
    name = cmd->get_name() + (name.empty() ? "" : " " + name);
  }
  return "shardpoint " + name;
}

// Every long option name of `cmd`, its option groups' included.
void long_names(const CLI::App& cmd, std::vector<std::string>& names) {
  for (const auto* opt : cmd.get_options()) {
    for (const auto& n : opt->get_lnames()) {
      names.push_back("--" + n);
    }
  }
  for (const auto* sub : cmd.get_subcommands({})) {
    if (sub->get_name().empty()) { // an option group
      long_names(*sub, names);
    }
  }
}

// An argument meant as a long option but not written as one: "-input-model"
// (one dash), "\u2014-output-model" or "\u2013output" (a dash pasted from a
// web page). The option it was meant as ("--input-model", ...), or empty.
std::string meant_as_option(std::string_view arg) {
  for (const std::string_view dash : {"\u2014", "\u2013"}) { // em dash, en dash
    if (arg.starts_with(dash)) {
      arg.remove_prefix(dash.size());
      arg.remove_prefix(arg.starts_with('-') ? 1 : 0);
      return arg.empty() ? std::string() : "--" + std::string(arg); // a dash alone is a word
    }
  }
  // One dash, then a word: no short option of this program is longer than
  // "-h"; "-3" and "-1e6" are values.
  if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' &&
      std::isalpha(static_cast<unsigned char>(arg[1])) != 0) {
    return "-" + std::string(arg);
  }
  return {};
}

// Whether `hint` is no hint for `typed`: one names an input where the other
// names an output ("--output-model" is 3 edits from "--input-model").
bool crosses_direction(std::string_view typed, std::string_view hint) {
  const auto says = [](std::string_view s, std::string_view w) { return s.find(w) != s.npos; };
  return (says(typed, "output") && says(hint, "input") && !says(hint, "output")) ||
         (says(typed, "input") && says(hint, "output") && !says(hint, "input"));
}

// "unknown option '--num_ipu'; did you mean '--num_ipus'?", one line.
// Prints "unknown option" for the first option the command does not have,
// with the closest it has, and returns exit_usage; -1 when every option is
// known (then `fallback`, CLI11's own message, is the caller's to print).
// The hint: the options that begin with what was typed ("--output": the
// output options), or the option it begins with ("--output-file":
// "--output"), or the nearest within hint_within -- never one of the other
// direction (input for output), and in PopRT's underscore spelling only
// for a flag typed so.
int unknown_arguments(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = chosen(app, argc, argv);
  CLI::App& where = cmd ? *cmd : app;
  std::vector<std::string> names;
  long_names(where, names);
  std::string unknown; // as typed
  std::string meant;   // as a long option
  for (int i = 1; i < argc && unknown.empty(); ++i) {
    const std::string_view arg = argv[i];
    std::string flag;
    if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      flag = std::string(arg.substr(0, arg.find('=')));
    } else if (std::string as = meant_as_option(arg.substr(0, arg.find('='))); !as.empty()) {
      unknown = std::string(arg.substr(0, arg.find('=')));
      meant = std::move(as);
      break;
    } else {
      continue;
    }
    bool known = flag == "--help" || flag == "--version";
    for (const auto& n : names) {
      known = known || n == flag;
    }
    if (!known) {
      unknown = meant = flag;
    }
  }
  const std::string context = cmd ? " for '" + command_name(cmd).substr(11) + "'" : "";
  if (unknown.empty()) {
    return -1;
  }
  names.emplace_back("--help");
  if (cmd == nullptr) {
    names.emplace_back("--version");
  }
  const bool underscored = meant.find('_') != std::string::npos;
  std::vector<std::string_view> views;
  std::vector<std::string_view> longer;  // "--output": "--output-model" says more than a distance
  std::vector<std::string_view> shorter; // "--output-file": "--output"
  for (const std::string_view v : names) {
    if (crosses_direction(meant, v) || (v.find('_') != v.npos && !underscored)) {
      continue;
    }
    views.push_back(v);
    if (v == meant || v.starts_with(meant)) {
      longer.push_back(v);
    } else if (meant.starts_with(v) && (meant[v.size()] == '-' || meant[v.size()] == '_')) {
      shorter.push_back(v);
    }
  }
  const auto hint =
      !longer.empty() ? shardpoint::config::closest(meant, longer, 3)
      : !shorter.empty()
          ? shardpoint::config::closest(meant, shorter, 1)
          : shardpoint::config::closest(meant, views, 1, shardpoint::config::hint_within(meant));
  std::cerr << "shardpoint: usage: unknown option '" << one_line(unknown) << "'" << context;
  for (std::size_t i = 0; i < hint.size(); ++i) {
    std::cerr << (i == 0                ? "; did you mean '"
                  : i + 1 < hint.size() ? "', '"
                                        : "' or '")
              << hint[i] << (i + 1 == hint.size() ? "'?" : "");
  }
  std::cerr << '\n';
  return exit_usage;
}

// CLI11's own words where plainer ones are known: "unexpected argument
// 'b'" for "The following argument was not expected: b", "--stages given 2
// times; it takes one" for "--stages: At Most 1 required but received 2".
// Anything else is CLI11's message as it is.
std::string plain_words(const std::string& message) {
  for (const std::string_view extras : {"The following argument was not expected: ",
                                        "The following arguments were not expected: "}) {
    if (message.starts_with(extras)) {
      // CLI11 lists them last first (its rjoin), space-separated.
      std::vector<std::string> args;
      std::string_view rest = std::string_view(message).substr(extras.size());
      for (std::size_t space; (space = rest.rfind(' ')) != rest.npos;
           rest = rest.substr(0, space)) {
        args.push_back(shardpoint::io::quote(rest.substr(space + 1)));
      }
      args.push_back(shardpoint::io::quote(rest));
      std::string listed;
      for (const auto& a : args) {
        listed += (listed.empty() ? "" : ", ") + a;
      }
      return (args.size() == 1 ? "unexpected argument " : "unexpected arguments ") + listed;
    }
  }
  static constexpr std::string_view at_most = ": At Most 1 required but received ";
  if (const auto at = message.find(at_most); at != message.npos) {
    return message.substr(0, at) + " given " + message.substr(at + at_most.size()) +
           " times; it takes one";
  }
  return message;
}

// `code`, unless what the command printed did not all reach standard
// output (a full disk, a closed pipe with SIGPIPE ignored): then that, one
// line, exit 2 -- a report cut short is never a success.
int written_out(int code) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
  if (!failed) {
    return code;
  }
  const int error = errno;
  std::cerr << "shardpoint: error: the report could not be written to standard output"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
  return exit_input;
}

// "A subcommand is required": which, and the closest to the word given.
int missing_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = chosen(app, argc, argv);
  CLI::App& where = cmd ? *cmd : app;
  std::vector<std::string> subcommands;
  for (const auto* sub : where.get_subcommands({})) {
    if (!sub->get_name().empty()) {
      subcommands.push_back(sub->get_name());
    }
  }
  std::string given;
  std::string option; // the first option typed, when no word is
  for (int i = 1; i < argc && given.empty(); ++i) {
    const std::string_view arg = argv[i];
    bool is_command = std::find(subcommands.begin(), subcommands.end(), arg) != subcommands.end();
    for (const CLI::App* c = cmd; c != nullptr && !is_command; c = c->get_parent()) {
      is_command = c->get_name() == arg; // a command on the path typed so far
    }
    if (!arg.starts_with("-") && !is_command) {
      given = arg;
    } else if (arg.starts_with("-") && option.empty()) {
      option = arg.substr(0, arg.find('='));
    }
  }
  std::string list;
  for (const auto& s : subcommands) {
    list += (list.empty() ? "" : ", ") + s;
  }
  const std::string what = cmd ? command_name(cmd) : std::string("shardpoint");
  std::cerr << "shardpoint: usage: " << what << " needs a command: " << list;
  if (!given.empty()) {
    std::vector<std::string_view> views(subcommands.begin(), subcommands.end());
    const auto hint =
        shardpoint::config::closest(given, views, 1, shardpoint::config::hint_within(given));
    std::string guess = hint.empty() ? std::string() : std::string(hint.front());
    for (const auto& s : subcommands) { // a prefix says more than a distance
      guess = s.starts_with(given) ? s : guess;
    }
    std::string lower = given; // a command in capitals (SHARD) is that command
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(subcommands.begin(), subcommands.end(), lower) != subcommands.end()) {
      guess = lower;
    }
    std::cerr << "; '" << one_line(given) << "' is none of them"
              << (guess.empty() ? std::string() : "; did you mean '" + guess + "'?");
  } else if (!cmd && !option.empty()) { // (--help and --version end the program before)
    const std::vector<std::string_view> own{"--help", "--version"};
    const auto hint =
        shardpoint::config::closest(option, own, 1, shardpoint::config::hint_within(option));
    std::cerr << "; '" << one_line(option) << "' is no option of shardpoint"
              << (hint.empty() ? std::string()
                               : "; did you mean '" + std::string(hint.front()) + "'?");
  }
  std::cerr << '\n';
  return exit_usage;
}

} // namespace

namespace shardpoint::cli {
std::atomic<bool> main_started{false}; // (new_delete.cpp)
} // namespace shardpoint::cli

namespace {

int run_program(int argc, char** argv) {
  // Named, so that --help says "Usage: shardpoint ...", not the path it was run by.
  CLI::App app{"shardpoint: PopRT-compatible sharding of ONNX models.", "shardpoint"};
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
  shardpoint::onnx::keep_models_until_exit();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    if (const int code = unknown_arguments(app, argc, argv); code >= 0) {
      return code;
    }
    CLI::App* cmd = chosen(app, argc, argv);
    std::cerr << "shardpoint: usage: " << one_line(plain_words(e.what()))
              << (cmd ? " (see " + command_name(cmd) + " --help)" : " (see --help)") << '\n';
    return exit_usage;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) { // --help, --version
      return app.exit(e);
    }
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
        std::string_view(e.what()).starts_with("A subcommand is required")) {
      return missing_subcommand(app, argc, argv);
    }
    CLI::App* cmd = chosen(app, argc, argv);
    const std::string see = cmd ? " (see " + command_name(cmd) + " --help)" : " (see --help)";
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      // A required option "missing" because it was misspelled: say so.
      if (const int code = unknown_arguments(app, argc, argv); code >= 0) {
        return code;
      }
      // ... or given as a plain argument (`shard model.onnx`): that first,
      // with the option missing beside it.
      if (cmd != nullptr && !cmd->remaining().empty()) {
        std::cerr << "shardpoint: usage: unexpected argument "
                  << shardpoint::io::quote(cmd->remaining().front()) << " ("
                  << one_line(plain_words(e.what())) << ")" << see << '\n';
        return exit_usage;
      }
    }
    // A value its option cannot take (not a number, out of range, not one
    // of the choices) is a bad parameter, exit 2, as when a command finds it
    // later; the shape of the command line is usage, exit 1.
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr ||
        dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
      std::cerr << "shardpoint: error: " << one_line(e.what()) << see << '\n';
      return exit_input;
    }
    std::cerr << "shardpoint: usage: " << one_line(plain_words(e.what())) << see << '\n';
    return exit_usage;
  }
  for (auto& [cmd, run] : commands) {
    if (cmd->parsed()) {
      int code = exit_usage;
      try {
        code = run();
      } catch (...) {
        return report_current_exception("running 'shardpoint " + cmd->get_name() + "'");
      }
      return written_out(code);
    }
  }
  return exit_usage;
}

} // namespace

int main(int argc, char** argv) {
  main_started.store(true);
  try {
    // Memory or a thread can run out before a command runs (its options,
    // the signal watcher's thread): the same one line.
    return run_program(argc, argv);
  } catch (...) {
    return report_current_exception("starting");
  }
}
