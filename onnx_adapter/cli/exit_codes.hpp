// The exit codes of the shardpoint program and the one place exceptions
// become them.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_CLI_EXIT_CODES_HPP
#define SHARDPOINT_CLI_EXIT_CODES_HPP

#include <exception>
#include <string>
#include <string_view>

#include <shardpoint/error.hpp>

namespace shardpoint::cli {

inline constexpr int exit_ok = 0;
/// The command line itself is wrong: unknown flag, missing option, ...
inline constexpr int exit_usage = 1;
/// The input (file, model, config) or a parameter cannot be used, or the
/// request is not supported.
inline constexpr int exit_input = 2;
/// The sharding breaks a rule (validation failed, cannot run as a pipeline,
/// does not fit in memory); nothing is written unless --force.
inline constexpr int exit_invalid = 3;
/// A bug in shardpoint: please report it, with the message.
inline constexpr int exit_internal = 4;

inline constexpr const char* exit_codes_help =
    "Exit codes: 0 success; 1 usage error; 2 bad input (file, model, config, parameter); 3 "
    "validation failed (nothing written unless --force); 4 internal error (a bug).";

/// A usage error found after parsing (exit 1).
class usage_error : public shardpoint::bad_parameter_error {
  using shardpoint::bad_parameter_error::bad_parameter_error;
};

/// A sharding that breaks a rule: exit 3, the message printed as it is.
class check_failed : public shardpoint::bad_input_error {
  using shardpoint::bad_input_error::bad_input_error;
};

/// The exception's message without the "shardpoint: " the library's
/// messages start with (they may be printed by any program; the command
/// line and the Python package add their own).
const char* message_of(const std::exception& e);

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
