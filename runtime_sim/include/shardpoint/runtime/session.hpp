// shardpoint/runtime/session.hpp -- emulated pipelined execution of a
// sharded graph on N emulated devices.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE SCHEDULE (both modes)
//
//   A sharded graph has stages 0..S-1, each on one device, with a cost in
//   integer cost units (the sum of its vertices' costs). M micro-batches flow
//   through the stages as in a GPipe-style forward pipeline: stage s takes
//   micro-batch m from the queue before it (stage 0: from the host's input
//   queue), computes for cost(s), then pushes it into the queue after it
//   (the last stage: into the host's output queue). Between two stages is a
//   ring buffer of `queue_depth` entries (rounded up to a power of two); a
//   stage whose next queue is full waits, still holding its device, until
//   there is room ("blocking after service"). Each device runs its work in
//   micro-batch-major order: for m = 0..M-1, its stages in increasing order.
//   That order is a topological order of all the dependencies, which is why
//   threads mode cannot deadlock.
//
//   virtual: a deterministic discrete-event computation of that schedule in
//            cost units, no threads: O(S x M) time, O(S x depth) memory.
//   threads: one thread per device and real ring buffers; a cost unit is
//            `unit` of real time, spent sleeping until a deadline (not
//            spinning), so more devices than cores are emulated faithfully.
//            A work item's deadline is its start on the schedule's clock
//            (the later of its device's last deadline and its input's,
//            which travels with the micro-batch) plus its cost: wake-up
//            latency is absorbed where the schedule has room for it instead
//            of being added to every item. Times reported are real ones.
//
//   For identical micro-batches with one device per stage, the makespan is
//   sum(cost) + (M - 1) * max(cost); `analytic_makespan` reports it beside
//   the measured one, with max(cost) the busiest device's summed stage
//   costs where stages share a device (exact when its stages are
//   consecutive; the run is the figure otherwise).
#ifndef SHARDPOINT_RUNTIME_SESSION_HPP
#define SHARDPOINT_RUNTIME_SESSION_HPP

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device_threads.hpp"
#include "metrics.hpp"
#include "plan.hpp"
#include "queue_manager.hpp"
#include "ring_buffer.hpp"

namespace shardpoint::runtime {

/// The most work items (stages x micro-batches) a run keeps for a timeline
/// or a trace; a longer run keeps its metrics only.
inline constexpr std::size_t most_kept_items = 4'000'000;

struct run_options {
  int micro_batches = 1;
  std::size_t queue_depth = 4;
  /// Keep every work item (for timelines and traces); costs S x M memory.
  bool keep_items = true;
  /// threads mode: the real duration of one cost unit.
  std::chrono::microseconds unit{100};
};

/// N emulated devices; in threads mode each runs on a thread of its own.
class device_manager {
public:
  explicit device_manager(int count) : count_(count) {
    if (count < 1) {
      throw config_error("device_manager needs at least one device");
    }
  }
  [[nodiscard]] int count() const noexcept { return count_; }

private:
  int count_;
};

/// Runs `plan` on `devices`: the same schedule in virtual or threads mode.
class session {
public:
  session(pipeline_plan plan, const device_manager& devices)
      : plan_(std::move(plan)), devices_(devices.count()) {
    if (plan_.num_devices > devices_) {
      throw config_error(shardpoint::detail::cat("the plan needs ", plan_.num_devices,
                                                 " devices but the device manager has ", devices_));
    }
  }

  [[nodiscard]] const pipeline_plan& plan() const noexcept { return plan_; }

  /// The deterministic discrete-event run, in cost units.
  [[nodiscard]] run_metrics run_virtual(const run_options& opt) const {
    check(opt);
    const std::size_t S = plan_.stages.size();
    const int M = opt.micro_batches;
    const std::size_t Q = std::bit_ceil(opt.queue_depth);
    run_metrics m;
    m.mode = "virtual";
    m.micro_batches = M;
    if (opt.keep_items) {
      m.items.reserve(S * static_cast<std::size_t>(M));
    }
    std::vector<std::int64_t> device_free(static_cast<std::size_t>(devices_), 0);
    std::vector<std::int64_t> pushed(S, 0); // when (s, m) entered the next queue
    // start(s, m) for the last Q micro-batches of each stage, at m % Q.
    std::vector<std::int64_t> started(S * Q, 0);
    std::int64_t makespan = 0;
    for (int mb = 0; mb < M; ++mb) {
      const std::size_t slot = static_cast<std::size_t>(mb) % Q;
      for (std::size_t s = 0; s < S; ++s) {
        const auto& st = plan_.stages[s];
        auto& free = device_free[static_cast<std::size_t>(st.device)];
        const std::int64_t input = s == 0 ? 0 : pushed[s - 1];
        const std::int64_t start = std::max(free, input);
        const std::int64_t end = start + st.cost;
        std::int64_t push = end;
        if (s + 1 < S && static_cast<std::size_t>(mb) >= Q) {
          // Room appears when the next stage takes micro-batch mb - Q.
          push = std::max(push, started[(s + 1) * Q + slot]);
        }
        started[s * Q + slot] = start;
        pushed[s] = push;
        free = push;
        makespan = std::max(makespan, end);
        if (opt.keep_items) {
          m.items.push_back(
              {st.stage, st.device, mb, static_cast<double>(start), static_cast<double>(end)});
        }
      }
    }
    m.makespan = static_cast<double>(makespan);
    detail::summarise(plan_, m, devices_);
    return m;
  }

  /// One thread per device; the host's buffers go through `queues` (its first
  /// input and first output queue), which the caller fills from its own
  /// thread, or, when null, through internal queues filled here.
  [[nodiscard]] run_metrics run_threads(const run_options& opt,
                                        queue_manager* queues = nullptr) const {
    check(opt);
    using clock = detail::steady_clock;
    const std::size_t S = plan_.stages.size();
    const int M = opt.micro_batches;
    std::unique_ptr<queue_manager> own;
    std::vector<int> inputs;
    std::vector<int> outputs;
    if (queues == nullptr) {
      own = host_queues(M, inputs, outputs);
      queues = own.get();
    }
    // What goes from stage to stage: the micro-batch and the deadline at which
    // the producing stage finished it, the earliest its consumer may start.
    struct handoff {
      int micro_batch;
      clock::time_point ready;
    };
    std::vector<std::unique_ptr<ring_buffer<handoff>>> links;
    for (std::size_t s = 0; s + 1 < S; ++s) {
      links.push_back(std::make_unique<ring_buffer<handoff>>(std::bit_ceil(opt.queue_depth)));
    }
    std::vector<std::vector<std::size_t>> stages_of(static_cast<std::size_t>(devices_));
    std::vector<std::size_t> busy; // the devices that have stages
    for (std::size_t s = 0; s < S; ++s) {
      auto& mine = stages_of[static_cast<std::size_t>(plan_.stages[s].device)];
      if (mine.empty()) {
        busy.push_back(static_cast<std::size_t>(plan_.stages[s].device));
      }
      mine.push_back(s);
    }
    std::vector<std::vector<work_item>> items(static_cast<std::size_t>(devices_));
    if (opt.keep_items) { // reserved: a device's thread allocates nothing
      for (const std::size_t d : busy) {
        items[d].reserve(static_cast<std::size_t>(M) * stages_of[d].size());
      }
    }
    const auto t0 = detail::schedule_origin();
    const auto units = [&](clock::time_point t) {
      return std::chrono::duration<double, std::micro>(t - t0).count() /
             static_cast<double>(opt.unit.count());
    };
    const auto device = [&](std::size_t d) {
      clock::time_point free = t0; // when this device is free again, on the schedule's clock
      for (int mb = 0; mb < M; ++mb) {
        for (std::size_t s : stages_of[d]) {
          input_ref in{};
          clock::time_point ready;
          if (s == 0) {
            in = queues->next_input(0); // the user's buffer, read in place
            ready = clock::now();
          } else {
            ready = links[s - 1]->pop().ready;
          }
          // The work starts when both the device and the input are ready
          // and lasts exactly its cost; the thread sleeps until then. Time
          // lost waking up is absorbed, not added to every later item,
          // unless it exceeds the time there is to absorb it.
          const auto start = std::max(free, ready);
          const auto deadline = start + plan_.stages[s].cost * opt.unit;
          std::this_thread::sleep_until(deadline);
          const auto end = clock::now();
          free = deadline;
          if (s + 1 < S) {
            if (!links[s]->try_push(handoff{mb, deadline})) {
              links[s]->push(handoff{mb, deadline}); // blocked: the device is held
              free = clock::now();
            }
          } else {
            hand_back(queues->next_output(0), mb);
          }
          if (s == 0 && in.done) {
            in.done->set();
          }
          if (opt.keep_items) {
            items[d].push_back(
                {plan_.stages[s].stage, static_cast<int>(d), mb, units(start), units(end)});
          }
        }
      }
    };
    detail::run_device_threads(busy, t0, device);
    return threads_metrics(items, opt, t0, clock::now());
  }

private:
  // Queues of the host's own for M micro-batches: `inputs` holds each
  // micro-batch's number, `outputs` receives it back.
  static std::unique_ptr<queue_manager> host_queues(int M, std::vector<int>& inputs,
                                                    std::vector<int>& outputs) {
    auto queues = std::make_unique<queue_manager>(std::vector<std::string>{"input"},
                                                  std::vector<std::string>{"output"},
                                                  static_cast<std::size_t>(M));
    inputs.assign(static_cast<std::size_t>(M), 0);
    outputs.assign(static_cast<std::size_t>(M), -1);
    for (int mb = 0; mb < M; ++mb) {
      inputs[static_cast<std::size_t>(mb)] = mb;
      queues->enqueue_input(0, &inputs[static_cast<std::size_t>(mb)], sizeof(int));
      queues->enqueue_output(0, &outputs[static_cast<std::size_t>(mb)], sizeof(int));
    }
    return queues;
  }

  // What a threaded run that started at t0 and ended at `finish` did: its
  // items, device by device; its makespan in units, the last item's end
  // (or, without items, the wall time).
  run_metrics threads_metrics(std::vector<std::vector<work_item>>& items, const run_options& opt,
                              detail::steady_clock::time_point t0,
                              detail::steady_clock::time_point finish) const {
    run_metrics m;
    m.mode = "threads";
    m.micro_batches = opt.micro_batches;
    m.wall_seconds = std::chrono::duration<double>(finish - t0).count();
    double last_end = 0;
    for (auto& per_device : items) {
      for (auto& item : per_device) {
        last_end = std::max(last_end, item.end);
        m.items.push_back(item);
      }
    }
    m.makespan = opt.keep_items ? last_end
                                : std::chrono::duration<double, std::micro>(finish - t0).count() /
                                      static_cast<double>(opt.unit.count());
    detail::summarise(plan_, m, devices_);
    return m;
  }

  // The last stage's result: the micro-batch's number, written in place.
  static void hand_back(const output_ref& out, int mb) {
    if (out.bytes >= sizeof(int)) {
      *static_cast<int*>(out.data) = mb;
    }
    if (out.done) {
      out.done->set();
    }
  }

  void check(const run_options& opt) const {
    if (opt.micro_batches < 1) {
      throw config_error("at least one micro-batch is needed");
    }
    if (opt.queue_depth < 1) {
      throw config_error("queue depth must be at least 1");
    }
    if (opt.unit.count() < 1) {
      throw config_error("a cost unit must last at least 1 microsecond");
    }
  }

  pipeline_plan plan_;
  int devices_;
};

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_SESSION_HPP
