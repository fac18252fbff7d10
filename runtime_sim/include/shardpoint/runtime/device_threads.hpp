// What the threaded runs share (session::run_threads, run_schedule_threads):
// a thread per device, all started together at the schedule's origin t0,
// each sleeping until its work's deadline on the schedule's clock. Sleeps
// are asked to end on time (timer slack 1 ns; Linux's default lets them
// end up to 50 us late), and t0 is far enough ahead for every thread to be
// up: on a 2-vCPU VM a new thread was seen to first run up to 5.5 ms after
// its creation, and a thread that starts after t0 delays its first work
// item by as much.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_RUNTIME_DEVICE_THREADS_HPP
#define SHARDPOINT_RUNTIME_DEVICE_THREADS_HPP

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace shardpoint::runtime::detail {

using steady_clock = std::chrono::steady_clock;

/// The schedule's origin, 20 ms from now.
inline steady_clock::time_point schedule_origin() {
  return steady_clock::now() + std::chrono::milliseconds(20);
}

/// Runs `body(d)` on a thread of its own for each d of `devices`, each from
/// `t0` with sleeps that end on time, and joins them. No thread starts its
/// work before every thread is up: when one cannot be started (EAGAIN
/// under a ulimit), those started return without doing any, and the error
/// goes on once they have -- a device blocked on a ring buffer could not be
/// told to return later. `body` must not throw (nothing could unblock the
/// devices waiting on it): what it keeps is reserved before.
template <class Body>
void run_device_threads(const std::vector<std::size_t>& devices, steady_clock::time_point t0,
                        const Body& body) {
  enum gate_state : int { gate_closed, gate_open, gate_abandoned };
  std::atomic<int> gate{gate_closed};
  const auto release = [&gate](gate_state to) {
    gate.store(to, std::memory_order_release);
    gate.notify_all();
  };
  std::vector<std::jthread> threads; // joined as they go
  try {
    threads.reserve(devices.size());
    for (const auto d : devices) {
      threads.emplace_back([&body, &gate, t0, d] {
        gate.wait(gate_closed, std::memory_order_acquire);
        if (gate.load(std::memory_order_acquire) == gate_abandoned) {
          return;
        }
#if defined(__linux__)
        ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
        std::this_thread::sleep_until(t0);
        body(d);
      });
    }
  } catch (...) {
    release(gate_abandoned);
    throw;
  }
  release(gate_open);
}

} // namespace shardpoint::runtime::detail

#endif // SHARDPOINT_RUNTIME_DEVICE_THREADS_HPP
