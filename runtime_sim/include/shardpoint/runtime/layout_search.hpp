// shardpoint/runtime/layout_search.hpp -- the best training layout of a
// model on a cluster: pipeline x tensor x data parallel degrees, ZeRO
// stage, micro-batch size and schedule, under a memory cap (`plan`).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE SPACE (exhaustive; nothing is pruned)
//
//   N devices, n a node, a global batch G. Every layout with
//     pp x tp x dp = N                 (pipeline, tensor, data parallel);
//     zero in {0, 1, 2, 3}             (0 only when dp = 1: plain data
//                                       parallelism; 1 optimizer states, 2
//                                       and gradients, 3 and parameters
//                                       sharded over the dp ranks);
//     b a divisor of G / dp, b <= the largest micro-batch size asked,
//       m = G / (dp b) micro-batches a step;
//     a schedule of runtime/schedules.hpp: gpipe, 1f1b, zb-h1, and
//       interleaved with v = 2 virtual stages a device when pp >= 2;
//   is a candidate. A candidate is infeasible, with its reason, when dp does
//   not divide G, tp does not divide a count the model says it must (a
//   transformer's heads), the schedule's rule refuses m (interleaved: a
//   multiple of pp; zb-h1: at least pp), the model has fewer vertices than
//   stages, the schedule would emulate more than 10^6 stage micro-batches,
//   or a device holds more than its memory. A search that would emulate more
//   than 2 x 10^7 stage micro-batches in all, or whose every layout the
//   other rules allow is over 10^6, is refused before it starts.
//
// THE COST MODEL (per candidate; every time in seconds; sources in
// docs/plan.md)
//
//   Ranks: tensor-parallel fastest, then data parallel, then pipeline
//   (Megatron-LM's order): device group g of stage s holds ranks g k ..
//   (g + 1) k - 1, k = tp dp, g = s mod pp. A group of ranks is inside a
//   node when it lies in one block of n consecutive ranks; then it uses the
//   intra-node bandwidth, else the inter-node one.
//
//   1. Split. balanced_shard (exact, shardpoint/balanced_shard.hpp) cuts the
//      graph into S = pp v stages minimising the largest stage compute,
//      sum over its vertices of flops(u) / (tp if u splits else 1). One
//      split per (S, tp), shared by the candidates that have them. When a
//      candidate does not fit on it (step 4), balanced_shard again under a
//      memory cap of the device's memory / v: each weight weighs its model
//      states on a device of the layout (step 4's per-weight formulas,
//      without ZeRO-3's working set; memory_items, so a stage holds a shared
//      weight once), each vertex its held activations for b samples times
//      the peak micro-batches in flight the first split's schedule had. When
//      that split fits, the candidate takes it (`memory_capped`).
//   2. Stage times for a micro-batch of b samples, F the device FLOP/s:
//        compute_f(s) = b sum flops_tp(u) / F
//        tp_f(s)      = sum over its vertices of ring all-reduce of
//                       b allreduce_bytes(u) over tp ranks:
//                       2 (tp - 1) / tp x bytes / bandwidth(tp group)
//        p2p_f(s)     = b (bytes s sends to later stages) / bandwidth(s, s+1)
//        zero3_f(s)   = all-gather of its sharded parameters (those of at
//                       least the persistence threshold's elements, as the
//                       memory planner shards them), (dp - 1)/dp x their
//                       bytes / bandwidth(dp group), ZeRO-3 only
//        forward(s)   = compute_f + tp_f + p2p_f + zero3_f
//        backward(s)  = r compute_f + tp_f + p2p_b + zero3_f, r the backward
//                       ratio, p2p_b the gradient of what s received; of it,
//                       the weight share w of r compute_f is zb-h1's W.
//      The schedule runs them (run_schedule, communication overlapping
//      nothing): its makespan.
//   3. Data-parallel synchronisation, once a step, after the makespan, the
//      slowest stage's: ZeRO 0-2 the gradients all-reduced (reduce-scatter
//      plus all-gather, 2 (dp - 1)/dp x grad bytes); ZeRO-3 reduce-scattered
//      ((dp - 1)/dp x grad bytes) and the persistent parameters, whole on
//      every rank, all-gathered after the step ((dp - 1)/dp x their
//      bytes). step_time = makespan + sync;
//      throughput = G / step_time samples a second.
//   4. Memory of a device of stage s: the memory planner's model states
//      (memory/formulas.hpp states_of: weights split by tp where they
//      split, ZeRO degrees {1,1,1}, {1,1,dp}, {1,dp,dp}, {dp,dp,dp} with
//      ZeRO-3's gathered working set) plus activations: the schedule's
//      in-flight peak on s times b (held(s) + received(s)), held(s) the
//      vertices' activation bytes (split ones over tp). peak = the largest
//      device; headroom = memory - peak; infeasible above the memory.
//
//   The best is the feasible candidate of least step time (ties: less peak
//   memory, then the order of the space above): by construction never
//   worse than any other, every candidate being costed.
//
// COMPLEXITY: candidates <= d(N)^2 x 4 x d(G) x 4 (d: the number of
// divisors); a split per (S, tp); a candidate costs O(V + S m).
#ifndef SHARDPOINT_RUNTIME_LAYOUT_SEARCH_HPP
#define SHARDPOINT_RUNTIME_LAYOUT_SEARCH_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/balanced_shard.hpp>
#include <shardpoint/detail/text.hpp>
#include <shardpoint/error.hpp>
#include <shardpoint/memory_plan.hpp>

#include "schedules.hpp"

namespace shardpoint::runtime {

/// A weight of the model.
struct layout_weight {
  std::int64_t elements = 0;
  bool splits = false; ///< tensor parallelism cuts it into tp slices
  bool trainable = true;
  std::int64_t stored_element_bytes = 4;
};

/// A vertex of the model; bytes and FLOPs for one sample.
struct layout_vertex {
  double flops = 0;                        ///< forward
  bool splits = false;                     ///< tensor parallelism divides its flops
  std::int64_t activation_bytes = 0;       ///< held from forward to backward, whole
  std::int64_t split_activation_bytes = 0; ///< held, divided over the tp ranks
  std::int64_t output_bytes = 0;           ///< what a later stage reading it receives
  std::int64_t allreduce_bytes = 0;        ///< all-reduced over tp ranks, forward and backward
  std::vector<std::uint32_t> weights;      ///< indices into layout_model::weights
};

/// The model: vertices indexed as the graph's, and the weights they read.
struct layout_model {
  std::vector<layout_vertex> vertices;
  std::vector<layout_weight> weights;
  /// Counts the tensor-parallel degree must divide, with what they count
  /// ("heads", ...): a layout whose degree does not is refused.
  std::vector<std::pair<std::string, std::int64_t>> tensor_divides;
};

/// The machines.
struct cluster_spec {
  int devices = 1;
  int devices_per_node = 1;
  std::int64_t device_memory = 0;     ///< bytes a device holds
  double device_flops = 1e12;         ///< FLOP/s a device sustains
  double intra_node_bandwidth = 1e11; ///< bytes/s between devices of a node
  double inter_node_bandwidth = 1e10; ///< bytes/s between nodes
};

/// What to search, and how to train.
struct search_space {
  std::int64_t global_batch = 1;
  std::int64_t max_micro_batch_size = 64;
  std::vector<schedule_kind> schedules{schedule_kind::gpipe, schedule_kind::one_f_one_b,
                                       schedule_kind::interleaved, schedule_kind::zb_h1};
  int interleave = 2; ///< v of the interleaved schedule
  double backward_ratio = 2;
  double weight_share = 0.5;
  parallel_config training; ///< precision and optimizer (its degrees are ignored)
};

/// One point of the space.
struct layout {
  int pipeline = 1;
  int tensor = 1;
  int data = 1;
  int zero = 0;
  std::int64_t micro_batch_size = 1;
  std::int64_t micro_batches = 1;
  schedule_kind schedule = schedule_kind::one_f_one_b;
  int virtual_stages = 1;

  friend bool operator==(const layout&, const layout&) = default;
};

/// A stage of a costed candidate.
struct stage_cost {
  double forward = 0;
  double backward = 0;
  double weight_share = 0; ///< of `backward`, the weight gradient's (as stage_times)
  int in_flight = 0;
  std::int64_t parameter_bytes = 0; ///< the memory planner's model states, in parts
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_bytes = 0;
  std::int64_t gathered_bytes = 0; ///< ZeRO-3's working set
  std::int64_t model_state_bytes = 0;
  std::int64_t activation_bytes = 0; ///< at the in-flight peak
  std::int64_t total_bytes = 0;
};

struct layout_candidate {
  layout at;
  bool feasible = false;
  std::string reason; ///< why not, when infeasible
  /// The rule that refuses it, in a word: memory, batch, tensor, schedule,
  /// stages.
  const char* refused_by = "";
  double step_time = 0;
  double makespan = 0;
  double sync_time = 0;
  double throughput = 0; ///< samples a second
  double bubble = 0;     ///< the devices' mean
  std::int64_t peak_memory = 0;
  std::int64_t headroom = 0;
  std::vector<stage_cost> stages;
  std::size_t split = 0; ///< index into layout_search_result::splits
  /// Whether its split is the memory-capped one (step 1), the time-balanced
  /// one not fitting.
  bool memory_capped = false;
};

struct layout_search_result {
  /// Feasible ones best first, then the infeasible ones in the space's order.
  std::vector<layout_candidate> candidates;
  std::size_t feasible = 0;
  /// The splits the candidates use, with their stage count and tp degree
  /// (stage_received_bytes: what each stage reads from others, a sample).
  std::vector<balanced_sharding> splits;
  std::vector<std::pair<int, int>> split_keys;
};

namespace detail::layouts {

using shardpoint::detail::cat;

inline std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) {
        out.push_back(n / d);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether ranks first .. last lie in one node of n.
inline bool one_node(std::int64_t first, std::int64_t last, std::int64_t n) {
  return first / n == last / n;
}

// Ring all-reduce time of `bytes` over `ranks` (2 (r - 1) / r x bytes / bw).
inline double all_reduce(double bytes, std::int64_t ranks, double bandwidth) {
  return ranks <= 1 ? 0
                    : 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks) * bytes /
                          bandwidth;
}

// All-gather or reduce-scatter: (r - 1) / r x bytes / bw.
inline double gather(double bytes, std::int64_t ranks, double bandwidth) {
  return ranks <= 1
             ? 0
             : static_cast<double>(ranks - 1) / static_cast<double>(ranks) * bytes / bandwidth;
}

inline void check(const layout_model& m, const cluster_spec& c, const search_space& s) {
  if (c.devices < 1 || c.devices > (1 << 20) || c.devices_per_node < 1) {
    throw bad_parameter_error(cat("a cluster needs 1 to 2^20 devices and at least one a node, not ",
                                  c.devices, " and ", c.devices_per_node));
  }
  if (c.device_memory <= 0 || !(c.device_flops > 0) || !(c.intra_node_bandwidth > 0) ||
      !(c.inter_node_bandwidth > 0) || !std::isfinite(c.device_flops) ||
      !std::isfinite(c.intra_node_bandwidth) || !std::isfinite(c.inter_node_bandwidth)) {
    throw bad_parameter_error("a device's memory, FLOP/s and both bandwidths must be positive");
  }
  if (s.global_batch < 1 || s.global_batch > (std::int64_t{1} << 31) ||
      s.max_micro_batch_size < 1) {
    throw bad_parameter_error(cat("the global batch must be in [1, 2^31] and the micro-batch "
                                  "size at least 1, not ",
                                  s.global_batch, " and ", s.max_micro_batch_size));
  }
  if (s.interleave < 2 || !(s.backward_ratio >= 0) || !std::isfinite(s.backward_ratio) ||
      !(s.weight_share >= 0 && s.weight_share <= 1) || s.schedules.empty()) {
    throw bad_parameter_error("the search needs a schedule, v >= 2, a backward ratio >= 0 and a "
                              "weight share in [0, 1]");
  }
  if (m.vertices.empty()) {
    throw bad_parameter_error("a model to lay out needs at least one vertex");
  }
  for (std::size_t v = 0; v < m.vertices.size(); ++v) {
    const auto& x = m.vertices[v];
    if (!(x.flops >= 0) || !std::isfinite(x.flops) || x.activation_bytes < 0 ||
        x.split_activation_bytes < 0 || x.output_bytes < 0 || x.allreduce_bytes < 0) {
      throw bad_parameter_error(cat("vertex ", v, " has a negative or non-finite figure"));
    }
    for (const auto w : x.weights) {
      if (w >= m.weights.size()) {
        throw bad_parameter_error(cat("vertex ", v, " reads weight ", w, " of ", m.weights.size()));
      }
    }
  }
}

// What one stage of a split holds and sends, for one sample.
struct stage_sums {
  double flops = 0;                    // tp-scaled
  double allreduce = 0;                // bytes, all-reduced over tp, once each way
  double sent = 0;                     // bytes to later stages, each vertex once
  double received = 0;                 // bytes from earlier stages, each vertex once a stage
  double held = 0;                     // activation bytes, tp-scaled
  stage_memory_input memory;           // weights (tp-sliced), layers
  std::int64_t trainable_elements = 0; // on one tp rank
  std::int64_t sharded_elements = 0;   // of those, what ZeRO-3 shards (not persistent)
};

template <class G>
std::vector<stage_sums> sums_of(const G& g, const layout_model& m, const sharding_result& split,
                                int stages, int tp, std::int64_t persistence_threshold) {
  std::vector<stage_sums> out(static_cast<std::size_t>(stages));
  std::vector<int> stage_of(m.vertices.size());
  for (std::size_t v = 0; v < m.vertices.size(); ++v) {
    stage_of[v] = *split.stage(v);
  }
  std::vector<std::map<std::uint32_t, std::uint32_t>> weight_slot(out.size());
  std::vector<std::pair<std::size_t, int>> reads; // (producer, reading stage)
  const auto access = shardpoint::detail::access(g);
  for (std::size_t v = 0; v < m.vertices.size(); ++v) {
    const auto& x = m.vertices[v];
    auto& s = out[static_cast<std::size_t>(stage_of[v])];
    s.flops += x.splits ? x.flops / tp : x.flops;
    s.allreduce += static_cast<double>(x.allreduce_bytes);
    s.held += static_cast<double>(x.activation_bytes) +
              static_cast<double>(x.split_activation_bytes) / tp;
    std::vector<std::uint32_t> layer;
    for (const auto w : x.weights) {
      auto& slots = weight_slot[static_cast<std::size_t>(stage_of[v])];
      auto [it, fresh] = slots.emplace(w, static_cast<std::uint32_t>(s.memory.parameters.size()));
      if (fresh) {
        const auto& t = m.weights[w];
        s.memory.parameters.push_back(
            {t.elements, t.splits ? tp : 1, t.stored_element_bytes, t.trainable});
        if (t.trainable) {
          const std::int64_t slice = (t.elements + (t.splits ? tp - 1 : 0)) / (t.splits ? tp : 1);
          s.trainable_elements += slice;
          s.sharded_elements += t.elements < persistence_threshold ? 0 : slice;
        }
      }
      layer.push_back(it->second);
    }
    s.memory.layers.push_back(std::move(layer));
    bool sends = false;
    access.for_each_successor(v, [&](std::size_t u) {
      if (stage_of[u] != stage_of[v]) {
        sends = true;
        reads.emplace_back(v, stage_of[u]);
      }
    });
    if (sends) {
      s.sent += static_cast<double>(x.output_bytes);
    }
  }
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  for (const auto& [v, s] : reads) {
    out[static_cast<std::size_t>(s)].received += static_cast<double>(m.vertices[v].output_bytes);
  }
  return out;
}

// A split's stage_received_bytes as the layout counts them (sums_of's
// received: each outside vertex read once a stage, a sample), where
// balanced_shard, given no bytes, left none.
inline void set_received(balanced_sharding& split, const std::vector<stage_sums>& sums) {
  split.stage_received_bytes.assign(sums.size(), 0);
  for (std::size_t s = 0; s < sums.size(); ++s) {
    split.stage_received_bytes[s] = sums[s].received;
  }
}

// Each vertex's compute at tensor-parallel degree tp (step 1).
inline std::vector<double> compute_of(const layout_model& m, int tp) {
  std::vector<double> cost;
  cost.reserve(m.vertices.size());
  for (const auto& x : m.vertices) {
    cost.push_back(x.splits ? x.flops / tp : x.flops);
  }
  return cost;
}

// What the memory-capped split weighs (step 1): each weight's model-state
// bytes on a device of layout `at` (the memory planner's per-weight
// formulas), and each vertex's held activations for `in_flight`
// micro-batches of b samples, an item of its own.
inline memory_items capped_items(const layout_model& m, const layout& at, const search_space& s,
                                 int in_flight) {
  const state_bytes b = training_bytes(s.training);
  const std::int64_t dp = at.data;
  const std::int64_t d_param = at.zero == 3 ? dp : 1;
  const std::int64_t d_grad = at.zero >= 2 ? dp : 1;
  const std::int64_t d_opt = at.zero >= 1 ? dp : 1;
  const auto share = [](std::int64_t e, std::int64_t n) { return (e + n - 1) / n; };
  memory_items items;
  for (const auto& w : m.weights) {
    const std::int64_t e = w.splits ? share(w.elements, at.tensor) : w.elements;
    if (!w.trainable) {
      items.bytes.push_back(static_cast<double>(w.stored_element_bytes * e));
      continue;
    }
    const bool whole = w.elements < s.training.param_persistence_threshold;
    items.bytes.push_back(static_cast<double>(b.parameter * (whole ? e : share(e, d_param)) +
                                              b.gradient * share(e, d_grad) +
                                              b.optimizer * share(e, d_opt)));
  }
  for (const auto& x : m.vertices) {
    items.used.push_back(x.weights);
    items.used.back().push_back(static_cast<std::uint32_t>(items.bytes.size()));
    items.bytes.push_back(static_cast<double>(in_flight) *
                          static_cast<double>(at.micro_batch_size) *
                          (static_cast<double>(x.activation_bytes) +
                           static_cast<double>(x.split_activation_bytes) / at.tensor));
  }
  return items;
}

// Step 2: each stage's forward, backward and weight-gradient times on
// layout `at`, and (`sync`) its data-parallel synchronisation after the step.
inline std::vector<stage_times> stage_times_of(const layout& at,
                                               const std::vector<stage_sums>& sums,
                                               const cluster_spec& k, const search_space& s,
                                               std::vector<double>& sync) {
  const std::int64_t n = k.devices_per_node;
  const std::int64_t per_group = static_cast<std::int64_t>(at.tensor) * at.data;
  const auto bandwidth = [&](bool inside) {
    return inside ? k.intra_node_bandwidth : k.inter_node_bandwidth;
  };
  // Tensor-parallel ranks are consecutive; a stage's data-parallel ranks
  // span its group of tp x dp.
  const double tp_bw = bandwidth(one_node(0, at.tensor - 1, n) && n % at.tensor == 0);
  const double dp_bw = bandwidth(one_node(0, per_group - 1, n) && n % per_group == 0);
  const auto S = sums.size();
  const auto p = static_cast<std::size_t>(at.pipeline);
  const auto b = static_cast<double>(at.micro_batch_size);
  const state_bytes bytes = training_bytes(s.training);
  std::vector<stage_times> times(S);
  sync.assign(S, 0);
  for (std::size_t i = 0; i < S; ++i) {
    const auto& x = sums[i];
    const auto link = [&](std::size_t from, std::size_t to) { // stages' device groups
      const auto lo = static_cast<std::int64_t>(std::min(from % p, to % p));
      const auto hi = static_cast<std::int64_t>(std::max(from % p, to % p));
      return bandwidth(one_node(lo * per_group, (hi + 1) * per_group - 1, n));
    };
    const double compute = b * x.flops / k.device_flops;
    const double tp = all_reduce(b * x.allreduce, at.tensor, tp_bw);
    const double send = i + 1 < S ? b * x.sent / link(i, i + 1) : 0;
    const double back = i > 0 ? b * x.received / link(i - 1, i) : 0;
    const double grads =
        static_cast<double>(bytes.gradient) * static_cast<double>(x.trainable_elements);
    const double sharded =
        static_cast<double>(bytes.parameter) * static_cast<double>(x.sharded_elements);
    const double gather3 = at.zero == 3 ? gather(sharded, at.data, dp_bw) : 0;
    times[i].forward = compute + tp + send + gather3;
    times[i].backward = s.backward_ratio * compute + tp + back + gather3;
    times[i].weight_share =
        times[i].backward > 0 ? s.backward_ratio * compute * s.weight_share / times[i].backward : 0;
    // ZeRO-3: gradients reduce-scattered; the persistent parameters, whole
    // on every rank, all-gathered again after the step.
    const double persistent = static_cast<double>(bytes.parameter) *
                              static_cast<double>(x.trainable_elements - x.sharded_elements);
    sync[i] = at.zero == 3 ? gather(grads, at.data, dp_bw) + gather(persistent, at.data, dp_bw)
                           : all_reduce(grads, at.data, dp_bw);
  }
  return times;
}

// Step 4: what each device of candidate `c` holds -- its stages' model
// states and the activations in flight in run `r` -- and whether it fits.
inline void memory_of(layout_candidate& c, const std::vector<stage_sums>& sums,
                      const std::vector<stage_times>& times, const schedule_result& r,
                      const cluster_spec& k, const search_space& s) {
  const auto& at = c.at;
  const auto S = sums.size();
  const auto p = static_cast<std::size_t>(at.pipeline);
  const auto b = static_cast<double>(at.micro_batch_size);
  // Memory, per device: its stages' (v of them with interleaving).
  parallel_config pc = s.training;
  pc.training = true;
  pc.tensor_parallel = at.tensor;
  pc.data_parallel = at.data;
  const std::int64_t dp = at.data;
  namespace mem = shardpoint::detail::memory;
  const mem::degrees d = at.zero == 0   ? mem::degrees{1, 1, 1}
                         : at.zero == 1 ? mem::degrees{1, 1, dp}
                         : at.zero == 2 ? mem::degrees{1, dp, dp}
                                        : mem::degrees{dp, dp, dp};
  std::vector<std::int64_t> device_total(p, 0);
  c.stages.clear();
  for (std::size_t i = 0; i < S; ++i) {
    const auto st = mem::states_of(sums[i].memory, pc, d);
    stage_cost sc;
    sc.forward = times[i].forward;
    sc.backward = times[i].backward;
    sc.weight_share = times[i].weight_share;
    sc.in_flight = r.in_flight[i];
    sc.parameter_bytes = st.parameters;
    sc.gradient_bytes = st.gradients;
    sc.optimizer_bytes = st.optimizer;
    sc.gathered_bytes = st.gathered;
    sc.model_state_bytes =
        mem::add(mem::add(st.parameters, st.gradients), mem::add(st.optimizer, st.gathered));
    const double held = static_cast<double>(r.in_flight[i]) * b * (sums[i].held + sums[i].received);
    if (!(held < 9e18)) {
      mem::overflow();
    }
    sc.activation_bytes = static_cast<std::int64_t>(std::ceil(held));
    sc.total_bytes = mem::add(sc.model_state_bytes, sc.activation_bytes);
    device_total[i % p] = mem::add(device_total[i % p], sc.total_bytes);
    c.stages.push_back(sc);
  }
  std::size_t worst = 0;
  for (std::size_t g = 0; g < p; ++g) {
    if (device_total[g] > device_total[worst]) {
      worst = g;
    }
  }
  c.peak_memory = device_total[worst];
  c.headroom = k.device_memory - c.peak_memory;
  c.feasible = c.peak_memory <= k.device_memory;
  if (!c.feasible) {
    c.refused_by = "memory";
    c.reason = cat("a device of pipeline rank ", worst, " holds ", c.peak_memory,
                   " bytes, more than the ", k.device_memory, " it has");
  }
}

// Costs candidate `c` on its split (steps 2 to 4 of the top; step 3 is the
// schedule run on the stage times).
inline void cost(layout_candidate& c, const std::vector<stage_sums>& sums, const cluster_spec& k,
                 const search_space& s) {
  const auto& at = c.at;
  std::vector<double> sync;
  const auto times = stage_times_of(at, sums, k, s, sync);
  schedule_options o;
  o.kind = at.schedule;
  o.devices = at.pipeline;
  o.micro_batches = static_cast<int>(at.micro_batches);
  o.virtual_stages = at.virtual_stages;
  const schedule_result r = run_schedule(times, o);
  c.makespan = r.makespan;
  c.sync_time = *std::max_element(sync.begin(), sync.end());
  c.step_time = c.makespan + c.sync_time;
  c.throughput = c.step_time > 0 ? static_cast<double>(s.global_batch) / c.step_time : 0;
  double bubble = 0;
  for (const double x : r.bubble) {
    bubble += x;
  }
  c.bubble = bubble / static_cast<double>(r.bubble.size());
  memory_of(c, sums, times, r, k, s);
}

// Most stage micro-batches one candidate's schedule emulates, and all of
// them together (the search refuses to start beyond).
constexpr std::int64_t max_stage_batches = 1'000'000;
constexpr std::int64_t max_work = 20'000'000;

// Refuses `c` when its tensor-parallel degree, its stages or its schedule
// cannot be (reason and rule set); true when they can.
inline bool runnable(layout_candidate& c, const layout_model& m, std::size_t vertices) {
  const auto& at = c.at;
  const auto S =
      static_cast<std::size_t>(at.pipeline) * static_cast<std::size_t>(at.virtual_stages);
  for (const auto& [what, n] : m.tensor_divides) {
    if (n % at.tensor != 0) {
      c.refused_by = "tensor";
      c.reason = cat("tensor parallelism ", at.tensor, " does not divide the ", n, " ", what);
      return false;
    }
  }
  if (S > vertices) {
    c.refused_by = "stages";
    c.reason = cat("the model's ", vertices, " vertices cannot make ", S, " stages");
  } else if (at.schedule == schedule_kind::interleaved && at.micro_batches % at.pipeline != 0) {
    c.refused_by = "schedule";
    c.reason = cat("interleaved needs the micro-batches (", at.micro_batches,
                   ") a multiple of the pipeline degree (", at.pipeline, ")");
  } else if (at.schedule == schedule_kind::zb_h1 && at.micro_batches < at.pipeline) {
    c.refused_by = "schedule";
    c.reason = cat("zb-h1 needs at least as many micro-batches (", at.micro_batches,
                   ") as pipeline stages (", at.pipeline, ")");
  } else if (at.micro_batches > max_stage_batches / static_cast<std::int64_t>(S)) {
    c.refused_by = "schedule";
    c.reason = cat("the search emulates at most ", max_stage_batches,
                   " stage micro-batches a layout, not ", at.micro_batches, " on ",
                   shardpoint::detail::counted(static_cast<std::size_t>(S), "stage"));
  }
  return c.reason.empty();
}

// The best first: least step time, less peak memory, the space's order.
// Step times within 1e-9 of each other are equal (sums in another order
// differ in the last bits).
inline bool better(const layout_candidate& a, const layout_candidate& b) {
  if (std::abs(a.step_time - b.step_time) > 1e-9 * std::max(a.step_time, b.step_time)) {
    return a.step_time < b.step_time;
  }
  return a.peak_memory < b.peak_memory;
}

// Step 1: the space, in its order, each candidate refused or runnable (its
// split and costs to come).
inline std::vector<layout_candidate> enumerate(const layout_model& m, const cluster_spec& cluster,
                                               const search_space& space) {
  std::vector<layout_candidate> all;
  const std::int64_t N = cluster.devices;
  for (const auto pp : divisors(N)) {
    for (const auto tp : divisors(N / pp)) {
      const std::int64_t dp = N / pp / tp;
      for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
        const auto candidate = [&](std::int64_t b, schedule_kind kind) {
          layout_candidate c;
          c.at = {static_cast<int>(pp),
                  static_cast<int>(tp),
                  static_cast<int>(dp),
                  zero,
                  b,
                  b > 0 ? space.global_batch / dp / b : 0,
                  kind,
                  kind == schedule_kind::interleaved ? space.interleave : 1};
          return c;
        };
        if (space.global_batch % dp != 0) {
          auto c = candidate(0, space.schedules.front());
          c.refused_by = "batch";
          c.reason =
              shardpoint::detail::cat("the data-parallel degree ", dp,
                                      " does not divide the global batch ", space.global_batch);
          all.push_back(std::move(c));
          continue;
        }
        for (const auto b : divisors(space.global_batch / dp)) {
          for (const auto kind : space.schedules) {
            if (b <= space.max_micro_batch_size && (kind != schedule_kind::interleaved || pp > 1)) {
              all.push_back(candidate(b, kind));
              runnable(all.back(), m, m.vertices.size());
            }
          }
        }
      }
    }
  }
  return all;
}

// The work limit, before any is done: every emulated stage micro-batch. A
// space whose every layout the other rules allow is over the limit of one
// layout is refused alike, not searched to "nothing fits" (a trial's global
// batch 2^31 exited 3 where 10^6 exited 2).
inline void check_work(const std::vector<layout_candidate>& all) {
  std::int64_t work = 0;
  std::int64_t runnable = 0;
  std::int64_t over = 0;
  for (const auto& c : all) {
    const std::int64_t stages = static_cast<std::int64_t>(c.at.pipeline) * c.at.virtual_stages;
    if (c.reason.empty()) {
      work += stages * c.at.micro_batches;
      ++runnable;
    } else if (c.refused_by == std::string_view("schedule") &&
               c.at.micro_batches > max_stage_batches / stages) {
      ++over;
    }
  }
  if (work > max_work) {
    throw bad_parameter_error(shardpoint::detail::cat(
        "the search would emulate ", work, " stage micro-batches, more than ", max_work,
        ": lower the global batch, raise the largest micro-batch size or try fewer schedules"));
  }
  if (runnable == 0 && over > 0) {
    throw bad_parameter_error(shardpoint::detail::cat(
        "every layout would emulate more than ", max_stage_batches,
        " stage micro-batches (the search's limit for one): lower the global batch or raise "
        "the largest micro-batch size"));
  }
}

// The fallback of step 2 for a candidate that does not fit on the
// time-balanced split: the split balanced under the memory cap, costed; it
// replaces `c` (and joins `out`'s splits) when it fits.
template <class G>
void try_capped(const G& g, const layout_model& m, layout_candidate& c, const cluster_spec& cluster,
                const search_space& space, layout_search_result& out) {
  const int S = c.at.pipeline * c.at.virtual_stages;
  int in_flight = 0;
  for (const auto& st : c.stages) {
    in_flight = std::max(in_flight, st.in_flight);
  }
  balance_options o;
  o.stages = S;
  o.memory_capacity = static_cast<double>(cluster.device_memory) / c.at.virtual_stages;
  std::optional<balanced_sharding> capped;
  try {
    capped = balanced_shard(g, compute_of(m, c.at.tensor).data(),
                            capped_items(m, c.at, space, in_flight), o);
  } catch (const infeasible_partition_error&) {
    return; // no split fits even by this bound: the time-balanced one's reason stands
  }
  layout_candidate again = c;
  again.reason.clear();
  again.refused_by = "";
  const auto sums =
      sums_of(g, m, capped->result, S, c.at.tensor, space.training.param_persistence_threshold);
  cost(again, sums, cluster, space);
  set_received(*capped, sums);
  if (again.feasible) {
    again.split = out.splits.size();
    again.memory_capped = true;
    out.splits.push_back(std::move(*capped));
    out.split_keys.emplace_back(S, c.at.tensor);
    c = std::move(again);
  }
}

} // namespace detail::layouts

/// Every candidate of the space (see the top) for the model `m` on graph
/// `g` (vertex i of g is m.vertices[i]; edges from producer to consumer),
/// costed; feasible ones best first. Throws bad_parameter_error for
/// figures out of range and what balanced_shard throws (a cycle).
template <class G>
layout_search_result search_layouts(const G& g, const layout_model& m, const cluster_spec& cluster,
                                    const search_space& space) {
  namespace L = detail::layouts;
  L::check(m, cluster, space);
  const auto V = m.vertices.size();
  if (static_cast<std::size_t>(num_vertices(g)) != V) {
    throw bad_parameter_error(
        shardpoint::detail::cat("a graph of ", num_vertices(g), " vertices and a model of ", V));
  }
  layout_search_result out;
  // The time-balanced split of S stages at tensor degree tp, made once.
  std::map<std::pair<int, int>, std::pair<std::size_t, std::vector<L::stage_sums>>> splits;
  const auto split_for = [&](int S, int tp) -> std::pair<std::size_t, std::vector<L::stage_sums>>& {
    auto it = splits.find({S, tp});
    if (it != splits.end()) {
      return it->second;
    }
    const auto cost = L::compute_of(m, tp);
    balance_options o;
    o.stages = S;
    auto split = balanced_shard(g, cost.data(), o);
    auto sums = L::sums_of(g, m, split.result, S, tp, space.training.param_persistence_threshold);
    L::set_received(split, sums);
    out.splits.push_back(std::move(split));
    out.split_keys.emplace_back(S, tp);
    return splits.emplace(std::pair{S, tp}, std::pair{out.splits.size() - 1, std::move(sums)})
        .first->second;
  };
  auto all = L::enumerate(m, cluster, space);
  L::check_work(all);
  std::vector<layout_candidate> feasible;
  std::vector<layout_candidate> refused;
  for (auto& c : all) {
    if (c.reason.empty()) {
      auto& [index, sums] = split_for(c.at.pipeline * c.at.virtual_stages, c.at.tensor);
      c.split = index;
      L::cost(c, sums, cluster, space);
      if (!c.feasible) {
        L::try_capped(g, m, c, cluster, space, out);
      }
    }
    (c.feasible ? feasible : refused).push_back(std::move(c));
  }
  std::stable_sort(feasible.begin(), feasible.end(), L::better);
  out.feasible = feasible.size();
  out.candidates = std::move(feasible);
  out.candidates.insert(out.candidates.end(), std::make_move_iterator(refused.begin()),
                        std::make_move_iterator(refused.end()));
  return out;
}

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_LAYOUT_SEARCH_HPP
