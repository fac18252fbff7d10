// shardpoint/runtime/schedules.hpp -- training pipeline schedules in virtual
// time: GPipe, 1F1B (PipeDream-Flush), Megatron-LM's interleaved 1F1B and
// zero-bubble ZB-H1.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE MODEL
//
//   S stages on p devices; with v virtual stages a device (interleaved),
//   S = p * v and stage s runs on device s mod p (chunk s div p of it).
//   Every micro-batch j (0 <= j < m) passes forward F(s, j) through stages
//   0 .. S-1, then backward B(s, j) through S-1 .. 0:
//       F(s, j) after F(s - 1, j);  B(S - 1, j) after F(S - 1, j);
//       B(s, j) after B(s + 1, j);  W(s, j) after B(s, j).
//   W, the weight gradient, is an operation of its own only in zb-h1 (a
//   stage's `weight_share` of its backward time); elsewhere B includes it.
//   A device runs one operation at a time, in the order its schedule gives
//   (below); an operation starts when the device is free and what it
//   depends on has ended. Communication takes no time. With recomputation a
//   backward first runs its forward again and a stage holds only its input
//   between F and B.
//
// THE SCHEDULES (the order of each device d, 0-indexed)
//
//   gpipe:       F(d, 0 .. m-1), then B(d, 0 .. m-1).
//   1f1b:        w = min(p - d - 1, m) warm-up forwards, then m - w pairs
//                F(d, w + k), B(d, k), then the last w backwards
//                (PipeDream-Flush; Narayanan et al., 2021).
//   interleaved: the n = m * v operations of each kind numbered k; the k-th
//                forward is micro-batch (k div (p v)) p + k mod p of chunk
//                (k div p) mod v, the k-th backward the same micro-batch of
//                chunk v - 1 - (k div p) mod v; w = min((p - d - 1) 2 +
//                (v - 1) p, n) warm-up forwards, then pairs, then the rest
//                of the backwards, as Megatron-LM's
//                forward_backward_pipelining_with_interleaving (m a multiple
//                of p, as it requires).
//   zb-h1:       1f1b's order of F and B, each W(j) right after B(j + d):
//                w = p - d - 1 warm-up forwards; for k < m - w: F(w + k),
//                B(k), and W(k - d) once k >= d; then for the last w: B(k),
//                W(k - d); then the remaining W, oldest first (m >= p; Qi et
//                al., "Zero Bubble Pipeline Parallelism", ICLR 2024, fig. 3;
//                Megatron-DeepSpeed's ZeroBubbleH1Pipeline, exact semantics).
//
// WHAT IT MEASURES
//
//   makespan: the end of the last operation. bubble (per device): the share
//   of the makespan it is not running its operations (1 - the sum of their
//   durations / makespan). in_flight (per stage): the most micro-batches
//   whose forward has started and whose backward has not ended, at any
//   time; activation_peak: that count times what a micro-batch holds.
//
// CLOSED FORMS (tests/runtime/test_schedules.cpp checks them exactly): p equal
// stages, forward t_f, backward t_b: gpipe and 1f1b take (m + p - 1)(t_f +
// t_b), bubble (p - 1) / (m + p - 1); in flight on stage i: m (gpipe),
// min(p - i, m) (1f1b). Interleaved with v chunks of t_f, t_b each (m a
// multiple of p): m v (t_f + t_b) + (p - 1)(t_f + t_b), a bubble of (p - 1)
// / (v m) of the ideal time (Narayanan et al., SC'21, section 2.2). ZB-H1,
// B and W taking t_b and t_w, t_w <= min(t_f, t_b): m (t_f + t_b + t_w) +
// (p - 1)(t_f + t_b - t_w), in flight p - i as 1F1B (the paper, table 2).
//
// THREADS: run_schedule_threads runs the same orders with a thread per
// device, in real time (its comment); the makespan comes within the last
// wake-up's latency of the virtual one.
//
// Complexity: O(S m) operations, each placed once; O(S m p) time at most.
#ifndef SHARDPOINT_RUNTIME_SCHEDULES_HPP
#define SHARDPOINT_RUNTIME_SCHEDULES_HPP

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/error.hpp>

#include "device_threads.hpp"
#include "plan.hpp"

namespace shardpoint::runtime {

enum class schedule_kind { gpipe, one_f_one_b, interleaved, zb_h1 };

/// The schedules' names, as the command line spells them.
inline constexpr shardpoint::detail::enum_names<schedule_kind, 4> schedule_names{
    {"gpipe", "1f1b", "interleaved", "zb-h1"}};

/// The schedule named `name` (gpipe, 1f1b, interleaved, zb-h1); config_error
/// else.
inline schedule_kind schedule_named(std::string_view name) {
  if (const auto k = schedule_names.find(name)) {
    return *k;
  }
  throw config_error(
      shardpoint::detail::cat("schedule '", name, "' is not one of ", schedule_names.listed()));
}

/// A schedule's name as the command line spells it.
inline std::string_view schedule_name(schedule_kind k) {
  return schedule_names(k);
}

/// What one stage costs a micro-batch and holds for it.
struct stage_times {
  double forward = 1;
  double backward = 2;                ///< input and weight gradients together
  double weight_share = 0;            ///< of `backward`, the weight gradient's (W in zb-h1)
  std::uint64_t activation_bytes = 0; ///< held from F to B
  std::uint64_t input_bytes = 0;      ///< held instead, with recomputation
};

struct schedule_options {
  schedule_kind kind = schedule_kind::one_f_one_b;
  int devices = 1;        ///< p
  int micro_batches = 1;  ///< m
  int virtual_stages = 1; ///< v (interleaved)
  bool recompute = false;
};

/// One operation as it ran.
struct training_op {
  char kind = 'F'; ///< 'F' forward, 'B' backward (input gradient), 'W' weight gradient
  int stage = 0;
  int device = 0;
  int micro_batch = 0;
  double start = 0;
  double end = 0;
};

struct schedule_result {
  double makespan = 0;
  std::vector<double> busy;                   ///< per device: its operations' durations
  std::vector<double> bubble;                 ///< per device
  std::vector<int> in_flight;                 ///< per stage, the peak
  std::vector<std::uint64_t> activation_peak; ///< per stage, bytes
  std::vector<training_op> ops;               ///< in the order placed
};

namespace detail {

// Each device's operations in its schedule's order (see the top).
inline std::vector<std::vector<training_op>> device_orders(const schedule_options& o) {
  const int p = o.devices;
  const int m = o.micro_batches;
  const int v = o.kind == schedule_kind::interleaved ? o.virtual_stages : 1;
  std::vector<std::vector<training_op>> order(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    auto& ops = order[static_cast<std::size_t>(d)];
    const auto op = [&](char kind, int chunk, int j) {
      ops.push_back({kind, chunk * p + d, d, j, 0, 0});
    };
    if (o.kind == schedule_kind::gpipe) {
      for (int j = 0; j < m; ++j) {
        op('F', 0, j);
      }
      for (int j = 0; j < m; ++j) {
        op('B', 0, j);
      }
      continue;
    }
    if (o.kind == schedule_kind::zb_h1) {
      const int w = p - d - 1;
      for (int k = 0; k < w; ++k) {
        op('F', 0, k);
      }
      for (int k = 0; k < m - w; ++k) {
        op('F', 0, w + k);
        op('B', 0, k);
        if (k >= d) {
          op('W', 0, k - d);
        }
      }
      for (int k = m - w; k < m; ++k) {
        op('B', 0, k);
        op('W', 0, k - d);
      }
      for (int k = m - d; k < m; ++k) {
        op('W', 0, k);
      }
      continue;
    }
    const int n = m * v;
    const auto micro_batch = [&](int k) { return (k / (p * v)) * p + k % p; };
    const auto forward = [&](int k) { op('F', (k / p) % v, micro_batch(k)); };
    const auto backward = [&](int k) { op('B', v - 1 - (k / p) % v, micro_batch(k)); };
    const int warmup = o.kind == schedule_kind::interleaved
                           ? std::min((p - d - 1) * 2 + (v - 1) * p, n)
                           : std::min(p - d - 1, n);
    for (int k = 0; k < warmup; ++k) {
      forward(k);
    }
    for (int k = 0; k < n - warmup; ++k) {
      forward(warmup + k);
      backward(k);
    }
    for (int k = n - warmup; k < n; ++k) {
      backward(k);
    }
  }
  return order;
}

} // namespace detail

namespace detail {

// The checks of run_schedule (its comment).
inline void check_schedule(const std::vector<stage_times>& stages, const schedule_options& o) {
  using shardpoint::detail::cat;
  const int p = o.devices;
  const int m = o.micro_batches;
  const int v = o.virtual_stages;
  if (p < 1 || m < 1 || v < 1) {
    throw config_error(cat("devices (", p, "), micro-batches (", m, ") and virtual stages (", v,
                           ") must be at least 1"));
  }
  if (v > 1 && o.kind != schedule_kind::interleaved) {
    throw config_error(cat(v, " virtual stages a device need the interleaved schedule"));
  }
  if (o.kind == schedule_kind::zb_h1 && m < p) {
    throw config_error(
        cat("zb-h1 needs at least as many micro-batches (", m, ") as devices (", p, ")"));
  }
  if (o.kind == schedule_kind::interleaved && m % p != 0) {
    throw config_error(cat("the interleaved schedule needs micro-batches (", m,
                           ") a multiple of the devices (", p, "), as Megatron-LM's does"));
  }
  const auto S = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
  if (stages.size() != S) {
    throw config_error(cat(stages.size(), " stages for ", p, " devices of ", v,
                           " virtual stage(s): there must be ", S));
  }
  for (std::size_t s = 0; s < S; ++s) {
    const auto& t = stages[s];
    if (!(t.forward >= 0) || !(t.backward >= 0) || !std::isfinite(t.forward) ||
        !std::isfinite(t.backward)) {
      throw config_error(cat("stage ", s, " has a time that is negative or not finite"));
    }
    if (!(t.weight_share >= 0 && t.weight_share <= 1)) {
      throw config_error(cat("stage ", s, " has a weight share outside [0, 1]"));
    }
  }
}

// How long `op` takes (see the top: W only in zb-h1, recomputation in B).
inline double duration_of(const training_op& op, const std::vector<stage_times>& stages,
                          const schedule_options& o) {
  const auto& t = stages[static_cast<std::size_t>(op.stage)];
  const double w = o.kind == schedule_kind::zb_h1 ? t.backward * t.weight_share : 0;
  return op.kind == 'F'   ? t.forward
         : op.kind == 'W' ? w
                          : t.backward - w + (o.recompute ? t.forward : 0);
}

// The index, into the (stage, micro-batch) tables of F and B ends, of what
// `op` waits for; nullopt when it waits for nothing. `b` says which table.
inline std::optional<std::size_t> dependency_of(const training_op& op, std::size_t S, std::size_t M,
                                                bool& b) {
  const auto s = static_cast<std::size_t>(op.stage);
  const auto j = static_cast<std::size_t>(op.micro_batch);
  b = op.kind == 'W' || (op.kind == 'B' && s + 1 < S);
  if (op.kind == 'F') {
    return s == 0 ? std::nullopt : std::optional<std::size_t>((s - 1) * M + j);
  }
  if (op.kind == 'B') {
    return s + 1 == S ? s * M + j : (s + 1) * M + j;
  }
  return s * M + j;
}

// The figures of a run whose ops are set (see WHAT IT MEASURES). A
// device's busy time is the sum of its operations' durations: in virtual
// time exactly their spans; in a threaded run, the work it was given,
// whatever the threads' wake-ups added around it.
inline void measure(schedule_result& r, const std::vector<stage_times>& stages,
                    const schedule_options& o) {
  const auto p = static_cast<std::size_t>(o.devices);
  const auto S = stages.size();
  std::vector<double> busy(p, 0);
  for (const auto& op : r.ops) {
    r.makespan = std::max(r.makespan, op.end);
    busy[static_cast<std::size_t>(op.device)] += duration_of(op, stages, o);
  }
  r.bubble.clear();
  for (std::size_t d = 0; d < p; ++d) {
    r.bubble.push_back(r.makespan > 0 ? 1 - busy[d] / r.makespan : 0);
  }
  r.busy = std::move(busy);
  // In flight: +1 when a forward starts, -1 when its backward ends; at one
  // instant, in the device's order of its operations (r.ops holds each
  // device's in its order): a backward ending as the next forward starts
  // comes first, and a forward and its backward of no duration count the
  // forward first (a trial's stage times of 0 counted none in flight).
  r.in_flight.assign(S, 0);
  r.activation_peak.assign(S, 0);
  std::vector<std::vector<std::tuple<double, std::size_t, int>>> events(S);
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const auto& op = r.ops[i];
    if (op.kind != 'W') {
      events[static_cast<std::size_t>(op.stage)].emplace_back(op.kind == 'F' ? op.start : op.end, i,
                                                              op.kind == 'F' ? 1 : -1);
    }
  }
  for (std::size_t s = 0; s < S; ++s) {
    std::sort(events[s].begin(), events[s].end());
    int now = 0;
    for (const auto& e : events[s]) {
      now += std::get<2>(e);
      r.in_flight[s] = std::max(r.in_flight[s], now);
    }
    const auto held = o.recompute ? stages[s].input_bytes : stages[s].activation_bytes;
    if (r.in_flight[s] > 0 && held > UINT64_MAX / static_cast<std::uint64_t>(r.in_flight[s])) {
      throw config_error(shardpoint::detail::cat("stage ", s, " would hold ", r.in_flight[s],
                                                 " micro-batches of ", held,
                                                 " bytes: more than 64 bits count"));
    }
    r.activation_peak[s] = static_cast<std::uint64_t>(r.in_flight[s]) * held;
  }
}

} // namespace detail

/// Runs schedule `o` over `stages` (p * v of them, by stage number) in
/// virtual time (see the top). Throws config_error for counts below 1, a
/// number of stages that is not p * v, v > 1 with another schedule than
/// interleaved, m not a multiple of p for interleaved, m < p for zb-h1, a
/// time that is negative or not finite, or a weight share outside [0, 1].
inline schedule_result run_schedule(const std::vector<stage_times>& stages,
                                    const schedule_options& o) {
  detail::check_schedule(stages, o);
  auto order = detail::device_orders(o);
  const auto p = static_cast<std::size_t>(o.devices);
  const auto S = stages.size();
  const auto M = static_cast<std::size_t>(o.micro_batches);
  // End times of F and B by (stage, micro-batch); -1 while not run.
  std::vector<double> f_end(S * M, -1);
  std::vector<double> b_end(S * M, -1);
  std::vector<std::size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
  schedule_result r;
  const std::size_t total = (o.kind == schedule_kind::zb_h1 ? 3 : 2) * S * M;
  while (r.ops.size() < total) {
    bool progress = false;
    for (std::size_t d = 0; d < p; ++d) {
      while (next[d] < order[d].size()) {
        auto op = order[d][next[d]];
        bool from_b = false;
        const auto dep = detail::dependency_of(op, S, M, from_b);
        const double ready = dep ? (from_b ? b_end : f_end)[*dep] : 0;
        if (ready < 0) {
          break; // waits for another device
        }
        op.start = std::max(ready, free_at[d]);
        op.end = op.start + detail::duration_of(op, stages, o);
        free_at[d] = op.end;
        const auto at =
            static_cast<std::size_t>(op.stage) * M + static_cast<std::size_t>(op.micro_batch);
        if (op.kind != 'W') {
          (op.kind == 'F' ? f_end : b_end)[at] = op.end;
        }
        r.ops.push_back(op);
        ++next[d];
        progress = true;
      }
    }
    if (!progress) {
      throw internal_error("a pipeline schedule deadlocked: its device orders are inconsistent");
    }
  }
  detail::measure(r, stages, o);
  return r;
}

/// Runs schedule `o` as run_schedule does, with a thread per device and
/// `unit` of real time per unit of the stages' times, and reports, in
/// units from the common start, each operation's real end and its start:
/// the latest of its start on the schedule's clock and the real ends of its
/// device's last operation and of what it waits for. Its deadline is its
/// start on the schedule's clock -- the later of its device's last deadline
/// and the deadline of what it waits for, which the other thread publishes
/// -- plus its duration; the thread sleeps until it (not spinning, so more
/// devices than cores are emulated faithfully), and waking late delays the
/// run only where the schedule has no room for it: the makespan comes
/// within the last wake-up's latency of run_schedule's. Throws as
/// run_schedule, and config_error for a unit below 1 us or for more than
/// 4096 devices.
inline schedule_result run_schedule_threads(const std::vector<stage_times>& stages,
                                            const schedule_options& o,
                                            std::chrono::microseconds unit) {
  detail::check_schedule(stages, o);
  if (unit.count() < 1 || o.devices > 4096) {
    throw config_error("a threaded schedule needs a unit of at least 1 us and at most 4096 "
                       "devices");
  }
  using clock = std::chrono::steady_clock;
  using ns = std::chrono::nanoseconds;
  const auto order = detail::device_orders(o);
  const auto p = static_cast<std::size_t>(o.devices);
  const auto S = stages.size();
  const auto M = static_cast<std::size_t>(o.micro_batches);
  // Per (stage, micro-batch), F's and B's deadline and real end (ns from
  // t0); the deadline -1 until both are published.
  struct ended {
    std::atomic<std::int64_t> deadline{-1};
    std::atomic<std::int64_t> real{0};
  };
  std::vector<ended> f_end(S * M);
  std::vector<ended> b_end(S * M);
  std::vector<std::vector<training_op>> ran(p);
  for (std::size_t d = 0; d < p; ++d) { // reserved: a device's thread allocates nothing
    ran[d].reserve(order[d].size());
  }
  const auto t0 = detail::schedule_origin();
  const double unit_ns = static_cast<double>(ns(unit).count());
  const auto device = [&](std::size_t d) {
    std::int64_t free = 0;      // on the schedule's clock
    std::int64_t free_real = 0; // when the last operation really ended
    for (auto op : order[d]) {
      bool from_b = false;
      const auto dep = detail::dependency_of(op, S, M, from_b);
      std::int64_t ready = 0;
      std::int64_t ready_real = 0;
      if (dep) {
        auto& cell = (from_b ? b_end : f_end)[*dep];
        while ((ready = cell.deadline.load(std::memory_order_acquire)) < 0) {
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        ready_real = cell.real.load(std::memory_order_relaxed);
      }
      const auto start = std::max(free, ready);
      const auto deadline = start + std::llround(detail::duration_of(op, stages, o) * unit_ns);
      std::this_thread::sleep_until(t0 + ns(deadline));
      const auto end = ns(clock::now() - t0).count();
      free = deadline;
      const auto at =
          static_cast<std::size_t>(op.stage) * M + static_cast<std::size_t>(op.micro_batch);
      if (op.kind != 'W') {
        auto& cell = (op.kind == 'F' ? f_end : b_end)[at];
        cell.real.store(end, std::memory_order_relaxed);
        cell.deadline.store(deadline, std::memory_order_release);
      }
      // It started, really, no earlier than the schedule says, than its
      // device was free and than its input was there.
      op.start = static_cast<double>(std::max({start, free_real, ready_real})) / unit_ns;
      op.end = static_cast<double>(end) / unit_ns;
      free_real = end;
      ran[d].push_back(op);
    }
  };
  std::vector<std::size_t> devices(p);
  for (std::size_t d = 0; d < p; ++d) {
    devices[d] = d;
  }
  detail::run_device_threads(devices, t0, device);
  schedule_result r;
  for (auto& ops : ran) {
    r.ops.insert(r.ops.end(), ops.begin(), ops.end());
  }
  // (Stable: a device's operations starting at one instant keep its order.)
  std::stable_sort(r.ops.begin(), r.ops.end(),
                   [](const training_op& a, const training_op& b) { return a.start < b.start; });
  detail::measure(r, stages, o);
  return r;
}

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_SCHEDULES_HPP
