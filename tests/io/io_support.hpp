// Shared helpers of the io tests.
#ifndef SHARDPOINT_TESTS_IO_SUPPORT_HPP
#define SHARDPOINT_TESTS_IO_SUPPORT_HPP

#include <string>

#include <shardpoint/error.hpp>

namespace io_test {

/// The message of the bad_input_error `f()` throws, or "no error".
inline std::string error_of(const auto& f) {
  try {
    f();
  } catch (const shardpoint::bad_input_error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace io_test

#endif
