// The exit codes of the shardpoint program and the one place exceptions
// become them.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_CLI_EXIT_CODES_HPP
#define SHARDPOINT_CLI_EXIT_CODES_HPP

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <shardpoint/app/errors.hpp>

namespace shardpoint::cli {

inline constexpr int exit_ok = 0;
/// The command line itself is wrong: unknown flag, missing option, ...
inline constexpr int exit_usage = 1;
/// The input (file, model, config) or a parameter cannot be used, or the
/// request is not supported.
inline constexpr int exit_input = 2;
/// The sharding breaks a rule (validation failed, cannot run as a pipeline,
/// does not fit in memory); nothing is written (shard and suggest write
/// anyway with --force).
inline constexpr int exit_invalid = 3;
/// A bug in shardpoint: please report it, with the message.
inline constexpr int exit_internal = 4;

/// The end of every --help: README's table of exit codes.
inline constexpr const char* exit_codes_help =
    "Exit codes: 0 success; 1 usage error; 2 bad input (file, model, config, parameter); 3 a "
    "rule broken (validation failed, not runnable as a pipeline, does not fit): nothing written "
    "(shard and suggest write anyway with --force); 4 internal error (a bug).";

// The application's verdicts (app/errors.hpp): usage_error is exit 1,
// check_failed exit 3; message_of drops the library's "shardpoint: ".
using app::check_failed;
using app::message_of;
using app::usage_error;
using app::verdict;

/// The exit code of an outcome's verdict: 0, or 3 for a rule broken.
[[nodiscard]] constexpr int exit_code(verdict v) {
  return v == verdict::rule_broken ? exit_invalid : exit_ok;
}

/// Prints each warning of an outcome (what its figures guess) once on
/// stderr, as "shardpoint: warning: ...". The exit code does not change.
void print_warnings(const std::vector<std::string>& warnings);

/// `message` as one printable line (io::printable), cut to about 1000 bytes:
/// what an error line may show, whatever its parts held.
std::string one_line(std::string_view message);

/// Prints one line for the exception in flight on stderr and returns its
/// exit code: usage_error 1; check_failed and invalid_sharding_error 3;
/// any other shardpoint::error by category
/// (bad input, bad parameter, unsupported: 2; internal: 4); std::bad_alloc
/// "out of memory while `doing`", 2; anything else is a bug, 4 "internal
/// error".
int report_current_exception(const std::string& doing = "running shardpoint");

} // namespace shardpoint::cli

#endif // SHARDPOINT_CLI_EXIT_CODES_HPP
