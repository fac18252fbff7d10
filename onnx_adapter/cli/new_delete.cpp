// The program's operator new: malloc, and std::bad_alloc when it fails.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// The program links mimalloc where it is found (CMakeLists.txt: not with
// sanitizers, and this file only with it), whose own operator new is
// written in C: when memory runs out it cannot throw, and aborts without a
// word (a new user's trial: `synth decoder --layers 1000000` under a 4 GB
// limit, exit 134). These replacements -- the global allocation functions
// a program may define -- take memory from malloc (mimalloc's, which
// returns null then) and throw std::bad_alloc, so that the one exception map
// (exit_codes.cpp) says "out of memory while ..." (exit 2) once the outputs
// being written have removed their temporaries. The delete functions stay
// the allocator's: it frees what its malloc gave. Only the program has
// these, never the libraries or the Python module.
//
// Before main -- the libraries' static initialisers, protobuf registering
// its descriptors -- nothing can catch std::bad_alloc, and it ended the
// process in std::terminate (exit 134, under `ulimit -v 50000`): there the
// same line is written and the exit is 2.
#include <atomic>
#include <cstdlib>
#include <new>

#include <unistd.h>

namespace shardpoint::cli {
extern std::atomic<bool> main_started; // main.cpp
} // namespace shardpoint::cli

namespace {

[[noreturn]] void out_of_memory() {
  if (!shardpoint::cli::main_started.load(std::memory_order_relaxed)) {
    static constexpr char line[] = "shardpoint: error: out of memory while starting (the process "
                                   "may use less memory than the program needs to start)\n";
    [[maybe_unused]] const auto written = ::write(2, line, sizeof line - 1);
    ::_exit(2);
  }
  throw std::bad_alloc();
}

void* allocate(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  out_of_memory();
}

void* allocate(std::size_t size, std::align_val_t alignment) {
  void* p = nullptr;
  const auto a = static_cast<std::size_t>(alignment);
  if (::posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, size == 0 ? 1 : size) == 0) {
    return p;
  }
  out_of_memory();
}

} // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return allocate(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return allocate(size, alignment);
}
