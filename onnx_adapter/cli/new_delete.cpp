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
#include <cstdlib>
#include <new>

namespace {

void* allocate(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}

void* allocate(std::size_t size, std::align_val_t alignment) {
  void* p = nullptr;
  const auto a = static_cast<std::size_t>(alignment);
  if (::posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, size == 0 ? 1 : size) == 0) {
    return p;
  }
  throw std::bad_alloc();
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
