// Exceptions to exit codes, in one place.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <new>

#include "exit_codes.hpp"

namespace shardpoint::cli {

int report_current_exception() {
  try {
    throw;
  } catch (const usage_error& e) {
    std::cerr << "shardpoint: usage: " << e.what() << '\n';
    return exit_usage;
  } catch (const check_failed& e) {
    std::cerr << "shardpoint: " << e.what() << '\n';
    return exit_invalid;
  } catch (const shardpoint::invalid_sharding_error& e) {
    std::cerr << "shardpoint: error: " << e.what() << '\n';
    return exit_invalid;
  } catch (const shardpoint::error& e) {
    switch (e.category()) {
    case error_category::bad_input:
    case error_category::bad_parameter:
    case error_category::unsupported:
      std::cerr << "shardpoint: error: " << e.what() << '\n';
      return exit_input;
    case error_category::internal:
      break;
    }
    std::cerr << "shardpoint: internal error: " << e.what() << '\n';
    return exit_internal;
  } catch (const std::bad_alloc&) {
    std::cerr << "shardpoint: error: out of memory\n";
    return exit_input;
  } catch (const std::exception& e) {
    std::cerr << "shardpoint: internal error: " << e.what()
              << " (a bug: please report it with the command line)\n";
    return exit_internal;
  } catch (...) {
    std::cerr << "shardpoint: internal error: an unknown exception (a bug: please report it)\n";
    return exit_internal;
  }
}

} // namespace shardpoint::cli
