// shardpoint/memory/deepspeed.hpp -- DeepSpeed's own estimate of the model
// states per GPU and per node, so that a plan can be read against the figure
// DeepSpeed's users know: estimate_zero2_model_states_mem_needs
// (deepspeed/runtime/zero/stage_1_and_2.py) and
// estimate_zero3_model_states_mem_needs (deepspeed/runtime/zero/stage3.py).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE ESTIMATOR (Ψ the model's parameters, L its largest layer's, G GPUs per
// node, n nodes, N = G n GPUs, β the additional buffer factor, 1.5 by
// default; bytes; ⌊⌋ is DeepSpeed's int(), which truncates a float):
//
//                         per GPU           per node (CPU)
//   ZeRO-2  no offload    2Ψ + ⌊18Ψ / N⌋    ⌊4ΨGβ⌋
//           offload       2Ψ                ⌊Ψ max(4N, 16) β⌋
//   ZeRO-3  no offload    4L + ⌊18Ψ / N⌋    zero_init ? ⌊4LGβ⌋ : ⌊4ΨGβ⌋
//           offload the   4L + ⌊2Ψ / N⌋     ⌊Ψ f β⌋, f = zero_init ? 16/n : max(4G, 16/n)
//           optimizer
//           offload the   4L                ⌊Ψ f β⌋, f = zero_init ? 18/n : max(4G, 18/n)
//           parameters too
//
// The products are formed in the order the Python does them, in IEEE double
// as Python's float, so that every figure equals DeepSpeed's to the byte
// (the test table in tests/test_memory_deepspeed.cpp); inputs whose products
// leave the range where a double holds every integer (2^53) are refused.
//
// DeepSpeed's comment on the 18: "2 grads (16 bit) + 4 grads (32 bit) + 4
// params (32 bit) + 8 optimizer states (32 bit)"; the ZeRO paper and
// shardpoint's planner count 2 + 2 + 12 = 16 (no fp32 gradient copy), and
// shardpoint keeps persistent weights whole and gathers up to
// max_live_parameters ahead. `compare_with_deepspeed` in
// shardpoint/memory/formulas.hpp states those differences term by term.
//
// COMPLEXITY O(1).
#ifndef SHARDPOINT_MEMORY_DEEPSPEED_HPP
#define SHARDPOINT_MEMORY_DEEPSPEED_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../detail/text.hpp"
#include "../error.hpp"

namespace shardpoint {

/// The estimator's arguments, under DeepSpeed's names.
struct deepspeed_inputs {
  std::int64_t total_params = 0;
  std::int64_t largest_layer_params = 0; ///< ZeRO-3 only
  std::int64_t num_gpus_per_node = 1;
  std::int64_t num_nodes = 1;
  bool cpu_offload = true;        ///< the optimizer states on the CPU
  bool cpu_offload_params = true; ///< ZeRO-3: the parameters too
  bool zero_init = true;          ///< ZeRO-3: the model built partitioned
  double additional_buffer_factor = 1.5;
};

/// What it returns: bytes per GPU and per node's CPU memory; ZeRO-3 also
/// the largest layer's 4L.
struct deepspeed_estimate {
  std::int64_t gpu_bytes = 0;
  std::int64_t cpu_bytes = 0;
  std::int64_t largest_layer_bytes = 0;
};

namespace detail::deepspeed {

inline constexpr double exact = 9007199254740992.0; // 2^53

// Python's int() of a float figure, refused past 2^53.
inline std::int64_t truncated(double x) {
  if (!(x >= 0 && x < exact)) {
    throw bad_parameter_error(
        "shardpoint: DeepSpeed's estimate for these counts leaves the range a double "
        "holds exactly (2^53 bytes)");
  }
  return static_cast<std::int64_t>(x);
}

// An integer product Python forms exactly, refused past 2^53.
inline double product(double a, double b) {
  const double x = a * b;
  if (!(x < exact)) {
    truncated(x);
  }
  return x;
}

inline void check(const deepspeed_inputs& in, bool zero3) {
  if (in.total_params < 1 || in.num_gpus_per_node < 1 || in.num_nodes < 1 ||
      !(in.additional_buffer_factor >= 0) || !std::isfinite(in.additional_buffer_factor) ||
      (zero3 && (in.largest_layer_params < 0 || in.largest_layer_params > in.total_params)) ||
      static_cast<double>(in.num_gpus_per_node) * static_cast<double>(in.num_nodes) > exact) {
    throw bad_parameter_error(detail::cat(
        "shardpoint: DeepSpeed's estimator needs a positive parameter count, a largest layer "
        "of at most that many, and positive GPU and node counts, not ",
        in.total_params, " parameters, largest layer ", in.largest_layer_params, ", ",
        in.num_gpus_per_node, " GPU(s) per node on ", in.num_nodes, " node(s)"));
  }
}

} // namespace detail::deepspeed

/// estimate_zero2_model_states_mem_needs (the table at the top).
inline deepspeed_estimate deepspeed_zero2_estimate(const deepspeed_inputs& in) {
  namespace d = detail::deepspeed;
  d::check(in, false);
  const auto P = static_cast<double>(in.total_params);
  const auto G = static_cast<double>(in.num_gpus_per_node);
  const double N = d::product(G, static_cast<double>(in.num_nodes));
  const double beta = in.additional_buffer_factor;
  deepspeed_estimate out;
  if (in.cpu_offload) {
    out.gpu_bytes = d::truncated(d::product(2, P));
    out.cpu_bytes = d::truncated(d::product(P, std::max(4 * N, 16.0)) * beta);
  } else {
    out.gpu_bytes = d::truncated(d::product(2, P) + std::trunc(d::product(18, P) / N));
    out.cpu_bytes = d::truncated(d::product(d::product(P, 4), G) * beta);
  }
  return out;
}

/// estimate_zero3_model_states_mem_needs (the table at the top).
inline deepspeed_estimate deepspeed_zero3_estimate(const deepspeed_inputs& in) {
  namespace d = detail::deepspeed;
  d::check(in, true);
  const auto P = static_cast<double>(in.total_params);
  const auto L = static_cast<double>(in.largest_layer_params);
  const auto G = static_cast<double>(in.num_gpus_per_node);
  const auto n = static_cast<double>(in.num_nodes);
  const double N = d::product(n, G);
  const double gpus_factor = 1 / n;
  const double beta = in.additional_buffer_factor;
  deepspeed_estimate out;
  const double layer = d::product(4, L);
  out.largest_layer_bytes = d::truncated(layer);
  // zero_init: ((Ψ x b) x (1 / n)) x β; else (Ψ x max(4G, b x (1 / n))) x β,
  // Python's left-to-right order (its max keeps the larger operand, and the
  // product is a float either way).
  const auto per_node = [&](double b) {
    return d::truncated(in.zero_init
                            ? d::product(P, b) * gpus_factor * beta
                            : d::product(P, std::max(d::product(4, G), b * gpus_factor)) * beta);
  };
  if (in.cpu_offload) {
    if (in.cpu_offload_params) {
      out.gpu_bytes = d::truncated(layer);
      out.cpu_bytes = per_node(18);
    } else {
      out.gpu_bytes = d::truncated(layer + std::trunc(d::product(2, P) / N));
      out.cpu_bytes = per_node(16);
    }
  } else {
    out.gpu_bytes = d::truncated(layer + std::trunc(d::product(18, P) / N));
    out.cpu_bytes = d::truncated(d::product(d::product(in.zero_init ? L : P, 4), G) * beta);
  }
  return out;
}

/// One row of DeepSpeed's own table (what its *_all_cold functions print).
struct deepspeed_row {
  int zero_stage = 2;
  bool offload_optimizer = false;
  bool offload_parameters = false;
  bool zero_init = true; ///< ZeRO-3 only
  deepspeed_estimate estimate;
};

/// DeepSpeed's table for `in` (its offload and zero_init fields ignored):
/// ZeRO-2 without and with offload, then ZeRO-3 without offload, offloading
/// the optimizer states, and the parameters too, each with and without
/// zero_init.
inline std::vector<deepspeed_row> deepspeed_table(deepspeed_inputs in) {
  std::vector<deepspeed_row> rows;
  for (const bool offload : {false, true}) {
    in.cpu_offload = offload;
    rows.push_back({2, offload, false, true, deepspeed_zero2_estimate(in)});
  }
  for (const int offload : {0, 1, 2}) {
    for (const bool zero_init : {true, false}) {
      in.cpu_offload = offload > 0;
      in.cpu_offload_params = offload > 1;
      in.zero_init = zero_init;
      rows.push_back({3, offload > 0, offload > 1, zero_init, deepspeed_zero3_estimate(in)});
    }
  }
  return rows;
}

/// A per-GPU figure's term, as shardpoint counts it and as DeepSpeed's
/// estimator does, and why they differ.
struct deepspeed_term {
  const char* term = "";
  std::int64_t shardpoint_bytes = 0;
  std::int64_t deepspeed_bytes = 0;
  const char* why = "";
};

/// A plan read against DeepSpeed's estimator (compare_with_deepspeed in
/// shardpoint/memory/formulas.hpp): the estimator's inputs and table, and
/// the no-offload per-GPU figures of ZeRO-2 and ZeRO-3 term by term; each
/// side's terms sum to its figure.
struct deepspeed_comparison {
  deepspeed_inputs inputs;
  /// The largest layer is an assumption of the caller's (counts without
  /// one), which the report marks.
  bool largest_layer_assumed = false;
  std::vector<deepspeed_row> rows;
  std::vector<deepspeed_term> zero2;
  std::vector<deepspeed_term> zero3;
};

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_DEEPSPEED_HPP
