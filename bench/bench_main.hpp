// The main() of the core benchmarks.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_BENCH_MAIN_HPP
#define SHARDPOINT_BENCH_MAIN_HPP

#include <climits>
#include <cstdlib>

#include <malloc.h>

#include <benchmark/benchmark.h>

// The algorithms allocate their working memory on every call (results,
// colour maps, stacks). By default glibc maps large blocks afresh and
// returns freed memory to the kernel, so each iteration pays a page fault per
// 4 KiB touched, which on this project's VM costs more than the algorithms
// themselves (manual_shard at 4 * 10^6 vertices: 250 ms instead of 32 ms).
// Keeping freed memory in the process measures the algorithms, as a program
// that shards more than once sees them; SHARDPOINT_BENCH_COLD_MEMORY=1
// measures the other way; the README gives both figures.
#define SHARDPOINT_BENCHMARK_MAIN()                                                                \
  int main(int argc, char** argv) {                                                                \
    if (std::getenv("SHARDPOINT_BENCH_COLD_MEMORY") == nullptr) {                                  \
      ::mallopt(M_MMAP_MAX, 0);             /* large blocks from the heap too */                   \
      ::mallopt(M_TRIM_THRESHOLD, INT_MAX); /* and never give it back */                           \
    }                                                                                              \
    benchmark::Initialize(&argc, argv);                                                            \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {                                      \
      return 1;                                                                                    \
    }                                                                                              \
    benchmark::RunSpecifiedBenchmarks();                                                           \
    benchmark::Shutdown();                                                                         \
    return 0;                                                                                      \
  }

#endif // SHARDPOINT_BENCH_MAIN_HPP
