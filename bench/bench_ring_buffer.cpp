// ring_buffer against boost::lockfree::spsc_queue: single-item and bulk
// throughput between two threads, and round-trip latency.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <atomic>
#include <chrono>
#include <cstdint>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>

#include <shardpoint/runtime/ring_buffer.hpp>

namespace {

// Both queues are measured with the producer on CPU 1 and the consumer on
// CPU 0: unpinned, the scheduler's placement (same core or not) swings the
// figures by 3x between identical runs on a 2-vCPU machine.
void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Runs `producer` on a thread pinned to CPU 1 and `consumer` on the calling
// thread, pinned to CPU 0, and returns the seconds from the moment both are
// running until `consumer` returns. Thread start-up is left out of the time:
// on this project's 2-vCPU VM, the new thread first runs 1.7-5.5 ms after
// std::thread's constructor (an idle vCPU is slow to wake), which is a third
// of a whole bulk iteration and made every such figure a multiple of ~4 ms
// (figures measured before this function existed include it).
template <class Producer, class Consumer>
double timed_pair(Producer producer, Consumer consumer) {
  pin(0);
  std::atomic<int> phase{0}; // 1: producer running, 2: go
  std::thread thread([&] {
    pin(1);
    phase.store(1, std::memory_order_release);
    while (phase.load(std::memory_order_acquire) != 2) {
    }
    producer();
  });
  while (phase.load(std::memory_order_acquire) != 1) {
  }
  const auto start = std::chrono::steady_clock::now();
  phase.store(2, std::memory_order_release);
  consumer();
  const auto stop = std::chrono::steady_clock::now();
  thread.join();
  return std::chrono::duration<double>(stop - start).count();
}

using item = std::uint64_t;

// Non-blocking single-item operations on both sides, spinning when full or
// empty, so both queues are measured doing the same thing.
struct shardpoint_queue {
  explicit shardpoint_queue(std::size_t capacity) : q(capacity) {}
  shardpoint::runtime::ring_buffer<item> q;
  std::size_t push_some(const item* p, std::size_t n) { return q.try_push_bulk({p, n}); }
  std::size_t pop_some(item* p, std::size_t n) { return q.try_pop_bulk({p, n}); }
  bool push(item v) { return q.try_push(v); }
  bool pop(item& v) { return q.try_pop(v); }
};

struct boost_queue {
  explicit boost_queue(std::size_t capacity) : q(capacity) {}
  boost::lockfree::spsc_queue<item> q;
  std::size_t push_some(const item* p, std::size_t n) { return q.push(p, n); }
  std::size_t pop_some(item* p, std::size_t n) { return q.pop(p, n); }
  bool push(item v) { return q.push(v); }
  bool pop(item& v) { return q.pop(v); }
};

template <class Queue>
void single_item(benchmark::State& state) {
  const auto n = static_cast<item>(state.range(0));
  for (auto _ : state) {
    Queue q(static_cast<std::size_t>(state.range(1)));
    item sum = 0;
    state.SetIterationTime(timed_pair(
        [&] {
          for (item i = 0; i < n; ++i) {
            while (!q.push(i)) {
            }
          }
        },
        [&] {
          item v = 0;
          for (item i = 0; i < n; ++i) {
            while (!q.pop(v)) {
            }
            sum += v;
          }
        }));
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

template <class Queue>
void bulk(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto chunk = static_cast<std::size_t>(state.range(2));
  for (auto _ : state) {
    Queue q(static_cast<std::size_t>(state.range(1)));
    std::vector<item> in(chunk);
    std::vector<item> out(chunk);
    item sum = 0;
    state.SetIterationTime(timed_pair(
        [&] {
          for (std::size_t i = 0; i < n; i += chunk) {
            for (std::size_t k = 0; k < chunk; ++k) {
              in[k] = i + k;
            }
            for (std::size_t done = 0; done < chunk;) {
              done += q.push_some(in.data() + done, chunk - done);
            }
          }
        },
        [&] {
          for (std::size_t got = 0; got < n;) {
            const std::size_t k = q.pop_some(out.data(), chunk);
            for (std::size_t j = 0; j < k; ++j) {
              sum += out[j];
            }
            got += k;
          }
        }));
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

// Round trip: ping through one queue, pong back through another.
template <class Queue>
void round_trip(benchmark::State& state) {
  const auto n = static_cast<item>(state.range(0));
  for (auto _ : state) {
    Queue ping(static_cast<std::size_t>(state.range(1)));
    Queue pong(static_cast<std::size_t>(state.range(1)));
    state.SetIterationTime(timed_pair(
        [&] {
          item v = 0;
          for (item i = 0; i < n; ++i) {
            while (!ping.pop(v)) {
            }
            while (!pong.push(v)) {
            }
          }
        },
        [&] {
          item v = 0;
          for (item i = 0; i < n; ++i) {
            while (!ping.push(i)) {
            }
            while (!pong.pop(v)) {
            }
          }
        }));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

// Registers the benchmark for both queues, configured alike.
template <class Configure>
void register_both(const std::string& name, void (*ours)(benchmark::State&),
                   void (*boost)(benchmark::State&), Configure configure) {
  configure(benchmark::RegisterBenchmark(("ring_buffer/" + name).c_str(), ours));
  configure(benchmark::RegisterBenchmark(("boost_spsc/" + name).c_str(), boost));
}

} // namespace

// Arguments: items per iteration, queue capacity and, for bulk, items per
// push/pop call. Capacity 1024 with 256-item chunks is the small-buffer case;
// 4096 with 1024-item chunks (32 KiB of items, within a core's L1 data cache)
// the larger one. Single-item runs at both capacities, so that every bulk
// figure has its single-item counterpart (README, "Ring buffer").
[[maybe_unused]] const bool registered = [] {
  register_both("single", single_item<shardpoint_queue>, single_item<boost_queue>, [](auto* b) {
    b->ArgNames({"items", "capacity"})->Args({1 << 20, 1024})->Args({1 << 20, 4096});
    b->UseManualTime()->Unit(benchmark::kMillisecond);
  });
  register_both("bulk", bulk<shardpoint_queue>, bulk<boost_queue>, [](auto* b) {
    b->ArgNames({"items", "capacity", "chunk"})
        ->Args({1 << 22, 1024, 256})
        ->Args({1 << 22, 4096, 1024});
    b->UseManualTime()->Unit(benchmark::kMillisecond);
  });
  register_both("round_trip", round_trip<shardpoint_queue>, round_trip<boost_queue>, [](auto* b) {
    b->ArgNames({"items", "capacity"})->Args({1 << 16, 1024});
    b->UseManualTime()->Unit(benchmark::kMillisecond);
  });
  return true;
}();

BENCHMARK_MAIN();
