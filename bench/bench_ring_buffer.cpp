// ring_buffer against boost::lockfree::spsc_queue: single-item and bulk
// throughput between two threads, and round-trip latency.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <pthread.h>
#include <sched.h>
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

// Runs `body` on a thread pinned to CPU 1, the caller pinned to CPU 0.
template <class F>
std::thread pinned_thread(F body) {
  pin(0);
  return std::thread([body = std::move(body)]() mutable {
    pin(1);
    body();
  });
}

using item = std::uint64_t;
constexpr std::size_t capacity = 1024;

// Non-blocking single-item operations on both sides, spinning when full or
// empty, so both queues are measured doing the same thing.
struct shardpoint_queue {
  shardpoint::runtime::ring_buffer<item> q{capacity};
  std::size_t push_some(const item* p, std::size_t n) { return q.try_push_bulk({p, n}); }
  std::size_t pop_some(item* p, std::size_t n) { return q.try_pop_bulk({p, n}); }
  bool push(item v) { return q.try_push(v); }
  bool pop(item& v) { return q.try_pop(v); }
};

struct boost_queue {
  boost::lockfree::spsc_queue<item> q{capacity};
  std::size_t push_some(const item* p, std::size_t n) { return q.push(p, n); }
  std::size_t pop_some(item* p, std::size_t n) { return q.pop(p, n); }
  bool push(item v) { return q.push(v); }
  bool pop(item& v) { return q.pop(v); }
};

template <class Queue>
void single_item(benchmark::State& state) {
  const auto n = static_cast<item>(state.range(0));
  for (auto _ : state) {
    Queue q;
    std::thread producer = pinned_thread([&] {
      for (item i = 0; i < n; ++i) {
        while (!q.push(i)) {
        }
      }
    });
    item v = 0;
    item sum = 0;
    for (item i = 0; i < n; ++i) {
      while (!q.pop(v)) {
      }
      sum += v;
    }
    producer.join();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

template <class Queue>
void bulk(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  constexpr std::size_t chunk = 256;
  for (auto _ : state) {
    Queue q;
    std::thread producer = pinned_thread([&] {
      std::vector<item> buf(chunk);
      for (std::size_t i = 0; i < n; i += chunk) {
        for (std::size_t k = 0; k < chunk; ++k) {
          buf[k] = i + k;
        }
        for (std::size_t done = 0; done < chunk;) {
          done += q.push_some(buf.data() + done, chunk - done);
        }
      }
    });
    std::vector<item> out(chunk);
    item sum = 0;
    for (std::size_t got = 0; got < n;) {
      const std::size_t k = q.pop_some(out.data(), chunk);
      for (std::size_t j = 0; j < k; ++j) {
        sum += out[j];
      }
      got += k;
    }
    producer.join();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

// Round trip: ping through one queue, pong back through another.
template <class Queue>
void round_trip(benchmark::State& state) {
  const auto n = static_cast<item>(state.range(0));
  for (auto _ : state) {
    Queue ping;
    Queue pong;
    std::thread echo = pinned_thread([&] {
      item v = 0;
      for (item i = 0; i < n; ++i) {
        while (!ping.pop(v)) {
        }
        while (!pong.push(v)) {
        }
      }
    });
    item v = 0;
    for (item i = 0; i < n; ++i) {
      while (!ping.push(i)) {
      }
      while (!pong.pop(v)) {
      }
    }
    echo.join();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

} // namespace

BENCHMARK(single_item<shardpoint_queue>)
    ->Name("ring_buffer/single")
    ->Arg(1 << 20)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(single_item<boost_queue>)
    ->Name("boost_spsc/single")
    ->Arg(1 << 20)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bulk<shardpoint_queue>)
    ->Name("ring_buffer/bulk256")
    ->Arg(1 << 22)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bulk<boost_queue>)
    ->Name("boost_spsc/bulk256")
    ->Arg(1 << 22)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(round_trip<shardpoint_queue>)
    ->Name("ring_buffer/round_trip")
    ->Arg(1 << 16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(round_trip<boost_queue>)
    ->Name("boost_spsc/round_trip")
    ->Arg(1 << 16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
