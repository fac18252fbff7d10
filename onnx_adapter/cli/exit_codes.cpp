// Exceptions to exit codes, in one place.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <new>
#include <string_view>

#include "exit_codes.hpp"

namespace shardpoint::cli {

const char* message_of(const std::exception& e) {
  constexpr std::string_view prefix = "shardpoint: ";
  const char* text = e.what();
  return std::string_view(text).starts_with(prefix) ? text + prefix.size() : text;
}

int report_current_exception() {
  try {
    throw;
  } catch (const usage_error& e) {
    std::cerr << "shardpoint: usage: " << message_of(e) << '\n';
    return exit_usage;
  } catch (const check_failed& e) {
    std::cerr << "shardpoint: " << message_of(e) << '\n';
    return exit_invalid;
  } catch (const shardpoint::invalid_sharding_error& e) {
    std::cerr << "shardpoint: error: " << message_of(e) << '\n';
    return exit_invalid;
  } catch (const shardpoint::error& e) {
    switch (e.category()) {
    case error_category::bad_input:
    case error_category::bad_parameter:
    case error_category::unsupported:
      std::cerr << "shardpoint: error: " << message_of(e) << '\n';
      return exit_input;
    case error_category::internal:
      break;
    }
    std::cerr << "shardpoint: internal error: " << message_of(e) << '\n';
    return exit_internal;
  } catch (const std::bad_alloc&) {
    std::cerr << "shardpoint: error: out of memory\n";
    return exit_input;
  } catch (const std::exception& e) {
    std::cerr << "shardpoint: internal error: " << message_of(e)
              << " (a bug: please report it with the command line)\n";
    return exit_internal;
  } catch (...) {
    std::cerr << "shardpoint: internal error: an unknown exception (a bug: please report it)\n";
    return exit_internal;
  }
}

} // namespace shardpoint::cli
