// Running a piece of the emulator in a child process whose address space
// has little room left: where a thread's stack cannot be mapped, what the
// piece does then (throws, or brings the process down).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_TESTS_RUNTIME_ADDRESS_LIMIT_HPP
#define SHARDPOINT_TESTS_RUNTIME_ADDRESS_LIMIT_HPP

#include <cstddef>
#include <fstream>
#include <string>
#include <system_error>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// A sanitizer's shadow memory does not survive an address-space limit.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SHARDPOINT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SHARDPOINT_TEST_SANITIZED 1
#endif
#endif

namespace shardpoint_test {

/// `run()` in a child whose address space may grow by `room` bytes more;
/// how it ended: "system_error", "returned", "other exception", "limit not
/// set" or "signal N".
template <class Run>
std::string under_address_limit(std::size_t room, const Run& run) {
  const pid_t child = ::fork();
  if (child < 0) {
    return "fork failed";
  }
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t most =
        static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + room;
    const rlimit limit{most, most};
    if (pages <= 0 || ::setrlimit(RLIMIT_AS, &limit) != 0) {
      ::_exit(5);
    }
    try {
      run();
      ::_exit(3);
    } catch (const std::system_error&) {
      ::_exit(0);
    } catch (...) {
      ::_exit(4);
    }
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) {
    return "waitpid failed";
  }
  if (WIFSIGNALED(status)) {
    return "signal " + std::to_string(WTERMSIG(status));
  }
  switch (WEXITSTATUS(status)) {
  case 0:
    return "system_error";
  case 3:
    return "returned";
  case 5:
    return "limit not set";
  default:
    return "other exception";
  }
}

} // namespace shardpoint_test

#endif // SHARDPOINT_TESTS_RUNTIME_ADDRESS_LIMIT_HPP
