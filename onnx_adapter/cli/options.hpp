// The command line's side of the option schema (app/option_schema.hpp):
// each command's options, as its request declares them, added to CLI11
// with their names, help, choices and ranges, which CLI11 checks as it
// parses.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_CLI_OPTIONS_HPP
#define SHARDPOINT_CLI_OPTIONS_HPP

#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include <shardpoint/app/commands.hpp>

#include "exit_codes.hpp"

namespace shardpoint::cli {

// The command line is written in the application's vocabulary.
using namespace shardpoint::app;

/// A binder (app/option_schema.hpp) that adds each option to a CLI11
/// command: a flag for a bool, a value checked against the spec's choices
/// and range otherwise; a comma-separated list of numbers read strictly
/// ("1,,2" is refused, where CLI11 would drop the empty element).
class cli_options {
public:
  explicit cli_options(CLI::App& cmd) : cmd_(&cmd), at_(&cmd) {}

  CLI::Option* operator()(const option_spec& o, std::string& field);
  CLI::Option* operator()(const option_spec& o, bool& field);
  CLI::Option* operator()(const option_spec& o, int& field);
  CLI::Option* operator()(const option_spec& o, std::int64_t& field);
  CLI::Option* operator()(const option_spec& o, double& field);
  CLI::Option* operator()(const option_spec& o, std::optional<int>& field);
  CLI::Option* operator()(const option_spec& o, std::optional<std::int64_t>& field);
  CLI::Option* operator()(const option_spec& o, std::vector<std::string>& field);
  CLI::Option* operator()(const option_spec& o, std::vector<double>& field);
  /// Byte sizes (io::parse_size's forms), comma-separated.
  CLI::Option* operator()(const option_spec& o, std::vector<std::int64_t>& field);

  /// The options that follow go in an option group (an empty name: none).
  void group(std::string_view name, std::string_view description);
  /// `a` and `b` cannot both be given.
  void exclusive(const option_spec& a, const option_spec& b);

private:
  template <class T>
  CLI::Option* number(const option_spec& o, T& field);
  template <class T>
  CLI::Option* numbers(const option_spec& o, std::vector<T>& field);
  CLI::Option* finish(CLI::Option* added, const option_spec& o);

  CLI::App* cmd_;
  CLI::App* at_;
};

/// Adds the options of `request` (its `options(b, request)`) to `cmd`.
template <class Request>
void add_options(CLI::App& cmd, Request& request) {
  cli_options b(cmd);
  options(b, request);
}

/// A new subcommand of `app`, named and described by `Request::about`,
/// whose options (`options(b, request)`) fill a new `Request`; what it does
/// when chosen: `run(request)`, or `run(request, subcommand)` for a command
/// that asks what was given.
template <class Request, class Run>
std::function<int()> add_command(CLI::App& app, Run run) {
  auto request = std::make_shared<Request>();
  auto* cmd =
      app.add_subcommand(std::string(Request::about.name), std::string(Request::about.summary));
  add_options(*cmd, *request);
  return [request, cmd, run] {
    if constexpr (std::is_invocable_v<const Run&, Request&, const CLI::App&>) {
      return run(*request, *cmd);
    } else {
      static_cast<void>(cmd); // captured for the other kind of run
      return run(*request);
    }
  };
}

/// Whether any memory planner option was given on the command line.
bool memory_flags_given(const CLI::App& cmd);

/// "shardpoint: wrote FILE" on stderr for each file, as every command that
/// writes says.
void print_written(const std::vector<std::string>& files);

/// Validation findings on stderr, one line each.
void print_findings(const std::vector<diagnostic>& diagnostics);

/// The outcome's report on stdout, and its validation findings on stderr
/// where the report does not show them (`--report none`, a picture).
template <class Outcome>
void print_report(const Outcome& r, const report_flag& how) {
  std::cout << r.report;
  if (how.format == "none" || how.picture()) {
    print_findings(r.diagnostics);
  }
}

/// Prints a planning command's outcome -- its warnings, its report on
/// stdout, `broken` ("shardpoint: " + it, when not empty), the files it
/// wrote -- and returns the exit code of `v`.
template <class Outcome>
int print_outcome(const Outcome& r, verdict v = verdict::ok, std::string_view broken = {}) {
  print_warnings(r.warnings);
  std::cout << r.report;
  if (!broken.empty()) {
    std::cerr << "shardpoint: " << broken << '\n';
  }
  print_written(r.written);
  return exit_code(v);
}

/// The same for an outcome whose verdict is `verdict_of(r)`, saying
/// `broken` when a rule is broken.
template <class Outcome>
int print_verdict(const Outcome& r, std::string_view broken) {
  const auto v = verdict_of(r);
  return print_outcome(r, v, v == verdict::rule_broken ? broken : std::string_view{});
}

} // namespace shardpoint::cli

#endif // SHARDPOINT_CLI_OPTIONS_HPP
