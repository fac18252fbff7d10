// Exceptions to exit codes, in one place.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <new>
#include <string_view>
#include <system_error>

#include <shardpoint/io/text.hpp>

#include "exit_codes.hpp"

namespace shardpoint::cli {

std::string one_line(std::string_view message) {
  constexpr std::size_t most = 1000;
  if (message.size() <= most) {
    return io::printable(message);
  }
  const std::string shown = io::quote(message, most);
  // quote() wraps in quotes; an error line shows the text as it is.
  return shown.substr(1, shown.rfind('\'') - 1) + "... (" + std::to_string(message.size()) +
         " bytes)";
}

int report_current_exception(const std::string& doing) {
  try {
    throw;
  } catch (const usage_error& e) {
    std::cerr << "shardpoint: usage: " << one_line(message_of(e)) << '\n';
    return exit_usage;
  } catch (const check_failed& e) {
    std::cerr << "shardpoint: " << one_line(message_of(e)) << '\n';
    return exit_invalid;
  } catch (const shardpoint::invalid_sharding_error& e) {
    std::cerr << "shardpoint: error: " << one_line(message_of(e)) << '\n';
    return exit_invalid;
  } catch (const shardpoint::error& e) {
    switch (e.category()) {
    case error_category::bad_input:
    case error_category::bad_parameter:
    case error_category::unsupported:
      std::cerr << "shardpoint: error: " << one_line(message_of(e)) << '\n';
      return exit_input;
    case error_category::internal:
      break;
    }
    std::cerr << "shardpoint: internal error: " << one_line(message_of(e)) << '\n';
    return exit_internal;
  } catch (const std::bad_alloc&) {
    std::cerr << "shardpoint: error: out of memory while " << doing
              << " (the input asks for more memory than the process may use)\n";
    return exit_input;
  } catch (const std::exception& e) {
    if (const auto* system = dynamic_cast<const std::system_error*>(&e);
        system != nullptr && app::out_of_memory(*system)) {
      std::cerr << "shardpoint: error: out of memory while " << doing << " ("
                << system->code().message() << ")\n";
      return exit_input;
    }
    std::cerr << "shardpoint: internal error: " << one_line(message_of(e))
              << " (a bug: please report it with the command line)\n";
    return exit_internal;
  } catch (...) {
    std::cerr << "shardpoint: internal error: an unknown exception (a bug: please report it)\n";
    return exit_internal;
  }
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) {
    std::cerr << "shardpoint: warning: " << one_line(w) << '\n';
  }
}

} // namespace shardpoint::cli
