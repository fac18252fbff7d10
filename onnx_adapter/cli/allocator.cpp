// The program's allocator settings (mimalloc, where the program links it).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Memory the program frees goes back to the system at once. mimalloc keeps
// freed pages for a delay (25 ms in 2.0) before it decommits them, which a
// long-lived server wants and a command of a tenth of a second does not:
// every buffer it freed -- a chunk's names before they are joined, the
// scan's spans -- stayed in its peak RSS (`shard --report none` on the
// 116k-node decoder: 80.8 MB of GNU time's KiB with the delay, 75.6
// without; bench/README.md, "The program's freed memory"). Set before
// main, by a static initialiser of this file, which only the program
// compiles (CMakeLists.txt); MIMALLOC_DECOMMIT_DELAY in the environment is
// read by mimalloc first and then replaced here.
#include <mimalloc.h>

namespace {

[[maybe_unused]] const bool decommit_at_once = [] {
  mi_option_set(mi_option_decommit_delay, 0);
  return true;
}();

} // namespace
