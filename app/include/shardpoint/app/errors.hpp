// The verdicts the application adds to the library's error categories
// (shardpoint/error.hpp): a request that is incomplete or contradicts itself,
// and a sharding that breaks a rule. The command line maps them to exit
// codes (cli/exit_codes.hpp), the Python package to exception classes
// (python/src/module.cpp); nothing else decides.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_ERRORS_HPP
#define SHARDPOINT_APP_ERRORS_HPP

#include <exception>
#include <string_view>
#include <system_error>

#include <shardpoint/error.hpp>

namespace shardpoint::app {

/// The request is incomplete or contradicts itself (a missing input, two
/// options that exclude each other): the command line's exit 1.
class usage_error : public shardpoint::bad_parameter_error {
  using shardpoint::bad_parameter_error::bad_parameter_error;
};

/// The sharding breaks a rule (cannot run as a pipeline, ...): exit 3, the
/// message printed as it is.
class check_failed : public shardpoint::bad_input_error {
  using shardpoint::bad_input_error::bad_input_error;
};

/// What an outcome says of the sharding, beside the errors thrown: the
/// command line's exit 0 or 3, Python's return or InvalidShardingError.
/// Each outcome's is `verdict_of(outcome)` (app/commands.hpp).
enum class verdict { ok, rule_broken };

/// Whether `e` is the system refusing memory or a thread (std::thread's
/// EAGAIN when no stack can be mapped under a ulimit): out of memory, as
/// std::bad_alloc is -- exit 2 or MemoryError, never a bug.
inline bool out_of_memory(const std::system_error& e) {
  return e.code() == std::errc::resource_unavailable_try_again ||
         e.code() == std::errc::not_enough_memory;
}

/// The exception's message without the "shardpoint: " the library's
/// messages start with (the command line and the Python package add their
/// own).
inline const char* message_of(const std::exception& e) {
  constexpr std::string_view prefix = "shardpoint: ";
  const char* text = e.what();
  return std::string_view(text).starts_with(prefix) ? text + prefix.size() : text;
}

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_ERRORS_HPP
