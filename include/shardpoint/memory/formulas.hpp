// shardpoint/memory/formulas.hpp -- the bytes of every device: the ZeRO
// accounting, activations per schedule, the automatic sharding degree,
// ZeRO's stage comparison and the plan from counts alone.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Part of the memory planner; the model, the rules and the complexity are
// stated at the top of shardpoint/memory_plan.hpp.
#ifndef SHARDPOINT_MEMORY_FORMULAS_HPP
#define SHARDPOINT_MEMORY_FORMULAS_HPP

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../detail/checked.hpp"
#include "../detail/text.hpp"
#include "../error.hpp"
#include "config.hpp"
#include "deepspeed.hpp"
#include "rules.hpp"

namespace shardpoint {

/// Bytes per element of a parameter, its gradient and its optimizer state
/// in training (the table at the top); inference: {0, 0, 0} (stored type).
struct state_bytes {
  std::int64_t parameter = 0;
  std::int64_t gradient = 0;
  std::int64_t optimizer = 0;
};

inline state_bytes training_bytes(const parallel_config& c) {
  const bool mixed = c.fp16 || c.bf16;
  if (!c.training) {
    return {};
  }
  if (mixed) {
    return {2, 2,
            c.optimizer == optimizer_kind::adam  ? 12
            : c.optimizer == optimizer_kind::sgd ? 4
                                                 : 0};
  }
  return {4, 4, c.optimizer == optimizer_kind::adam ? 8 : 0};
}

namespace detail::memory {

// Products and sums of byte counts, which are never negative, refused
// past 2^62 (detail::max_count, the bound of every count shardpoint takes)
// rather than wrapped or reported past what the docs promise.
inline void overflow() {
  throw bad_parameter_error(
      "shardpoint: the memory plan passes 2^62 bytes (4 EiB); are the counts right?");
}

// `a` `sign` `b` by `op` (checked_mul, checked_add): a negative count or a
// result past 2^62 is refused.
template <class Op>
std::int64_t combine(std::int64_t a, std::int64_t b, const char* sign, Op op) {
  if (a < 0 || b < 0) {
    throw bad_parameter_error(
        cat("shardpoint: a negative count in the memory plan (", a, sign, b, ")"));
  }
  const auto result = op(a, b);
  if (!result) {
    overflow();
  }
  return *result;
}

inline std::int64_t mul(std::int64_t a, std::int64_t b) {
  return combine(a, b, " x ", checked_mul);
}

inline std::int64_t add(std::int64_t a, std::int64_t b) {
  return combine(a, b, " + ", checked_add);
}

inline std::int64_t share(std::int64_t elements, std::int64_t devices) {
  return elements / devices + (elements % devices != 0 ? 1 : 0);
}

inline std::int64_t slice(const parameter_tensor& t) {
  if (t.elements < 0 || t.tensor_parallel_parts < 1 || t.stored_element_bytes < 0) {
    throw bad_parameter_error(cat("shardpoint: a parameter of ", t.elements, " elements in ",
                                  t.tensor_parallel_parts, " parts of ", t.stored_element_bytes,
                                  " bytes each is not a tensor"));
  }
  return share(t.elements, t.tensor_parallel_parts);
}

/// How far model states are sharded: parameters, gradients, optimizer.
struct degrees {
  std::int64_t parameters = 1;
  std::int64_t gradients = 1;
  std::int64_t optimizer = 1;
};

inline bool persistent(const parameter_tensor& t, const parallel_config& c) {
  return t.elements < c.param_persistence_threshold;
}

/// The most trainable elements one layer of `in` reads on a tensor-parallel
/// rank; only those sharding gathers (not persistent) when `sharded_only`.
inline std::int64_t largest_layer(const stage_memory_input& in, const parallel_config& c,
                                  bool sharded_only) {
  std::int64_t largest = 0;
  for (const auto& layer : in.layers) {
    std::int64_t sum = 0;
    for (auto i : layer) {
      if (i >= in.parameters.size()) {
        throw bad_parameter_error(
            cat("shardpoint: a layer names parameter ", i, " of ", in.parameters.size()));
      }
      const auto& t = in.parameters[i];
      if (t.trainable && !(sharded_only && persistent(t, c))) {
        sum = add(sum, slice(t));
      }
    }
    largest = std::max(largest, sum);
  }
  return largest;
}

struct model_states {
  std::int64_t parameters = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;
  std::int64_t gathered = 0;
};

inline model_states states_of(const stage_memory_input& in, const parallel_config& c,
                              const degrees& d) {
  const state_bytes b = training_bytes(c);
  model_states out;
  for (const auto& t : in.parameters) {
    const std::int64_t e = slice(t);
    if (!t.trainable) {
      out.parameters = add(out.parameters, mul(t.stored_element_bytes, e));
      continue;
    }
    const std::int64_t p = c.training ? b.parameter : t.stored_element_bytes;
    out.parameters = add(out.parameters, mul(p, persistent(t, c) ? e : share(e, d.parameters)));
    out.gradients = add(out.gradients, mul(b.gradient, share(e, d.gradients)));
    out.optimizer = add(out.optimizer, mul(b.optimizer, share(e, d.optimizer)));
  }
  if (d.parameters > 1) {
    // The current layer whole, its parameters and their gradients before
    // the reduce-scatter, whatever max_live says (DeepSpeed's coordinator
    // fetches a module entire); prefetching fills up to max_live parameters.
    const std::int64_t layer = largest_layer(in, c, true);
    std::int64_t sharded = 0;
    for (const auto& t : in.parameters) {
      sharded = add(sharded, t.trainable && !persistent(t, c) ? slice(t) : 0);
    }
    const std::int64_t live = std::max(layer, std::min(c.max_live_parameters, sharded));
    out.gathered = add(mul(b.gradient, layer), mul(b.parameter, live));
  }
  return out;
}

/// Entries of a queue between stages: the depth rounded up to a power of
/// two, as the runtime's ring buffers have it.
inline std::int64_t queue_entries(const parallel_config& c) {
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(
      std::clamp<std::int64_t>(c.queue_depth, 1, std::int64_t{1} << 40))));
}

inline std::int64_t activations(const stage_memory_input& in, const parallel_config& c,
                                std::size_t stage, std::size_t stages) {
  if (in.produced_bytes < 0 || in.received_bytes < 0) {
    throw bad_parameter_error(cat("shardpoint: stage ", stage, " has negative activation bytes"));
  }
  if (!c.training) {
    return add(in.produced_bytes, mul(queue_entries(c), in.received_bytes));
  }
  const std::int64_t in_flight =
      c.schedule == pipeline_schedule::gpipe
          ? c.micro_batches
          : std::min<std::int64_t>(c.micro_batches, static_cast<std::int64_t>(stages - stage));
  return mul(add(in.produced_bytes, in.received_bytes), in_flight);
}

} // namespace detail::memory

/// Why `config`'s schedule cannot be planned on `stages`, or nothing. 1F1B's
/// micro-batches in flight, min(M, S - s) at stage s, hold only with each
/// stage on a device of its own: stages sharing a device interleave on it,
/// and what they hold is another schedule's (the runtime refuses 1F1B on
/// such a sharding too). ZB-H1 holds 1F1B's, and is a schedule only with
/// at least as many micro-batches as stages (as the runtime's). GPipe and
/// inference count no order, so plan any.
inline std::optional<std::string> unplannable_schedule(std::span<const stage_memory_input> stages,
                                                       const parallel_config& config) {
  if (!config.training || config.schedule == pipeline_schedule::gpipe) {
    return std::nullopt;
  }
  const char* name = config.schedule == pipeline_schedule::zb_h1 ? "zb-h1" : "1f1b";
  if (config.schedule == pipeline_schedule::zb_h1 &&
      config.micro_batches < static_cast<std::int64_t>(stages.size())) {
    return detail::cat("the zb-h1 schedule needs at least as many micro-batches (",
                       config.micro_batches, ") as stages (", stages.size(), ")");
  }
  std::map<int, std::size_t> first; // device -> its first stage
  for (std::size_t s = 0; s < stages.size(); ++s) {
    if (stages[s].device < 0) {
      continue;
    }
    const auto [at, fresh] = first.emplace(stages[s].device, s);
    if (!fresh) {
      return detail::cat("stages ", at->second, " and ", s, " share device ", stages[s].device,
                         ": the ", name,
                         " schedule holds min(M, S - s) micro-batches at stage s "
                         "only with each stage on a device of its own");
    }
  }
  return std::nullopt;
}

/// The bytes of every device, for `stages` as given (stage s is
/// stages[s]) and `config`; the largest device sums the stages one device
/// holds (stage_memory_input::device), and fits compares it with `capacity`
/// bytes when given. Throws bad_parameter_error for a broken rule
/// (memory_rules), unsupported_error for a schedule it cannot count on these
/// stages (unplannable_schedule: 1F1B or ZB-H1 with stages sharing a
/// device, ZB-H1 with fewer micro-batches than stages).
inline memory_plan plan_memory(std::span<const stage_memory_input> stages,
                               const parallel_config& config,
                               std::optional<std::int64_t> capacity = std::nullopt) {
  namespace m = detail::memory;
  check_memory_rules(config, static_cast<std::int64_t>(stages.size()));
  if (auto why = unplannable_schedule(stages, config)) {
    throw unsupported_error("shardpoint: " + *why);
  }
  const std::int64_t n = config.sharded_data_parallel;
  const m::degrees d{n, n, config.shard_optimizer_states ? config.data_parallel : n};
  const std::int64_t shards = std::max(d.parameters, d.optimizer);
  memory_plan plan;
  plan.capacity = capacity;
  plan.sharded_data_parallel = n;
  plan.devices.reserve(stages.size() * static_cast<std::size_t>(std::min<std::int64_t>(
                                           m::mul(config.tensor_parallel, shards), 1 << 20)));
  std::map<int, std::int64_t> on_device; // stages' totals by the device holding them
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const m::model_states st = m::states_of(stages[s], config, d);
    device_memory dev;
    dev.stage = static_cast<int>(s);
    dev.device = stages[s].device;
    dev.parameter_bytes = st.parameters;
    dev.gradient_bytes = st.gradients;
    dev.optimizer_state_bytes = st.optimizer;
    dev.gathered_bytes = st.gathered;
    dev.activation_bytes = m::activations(stages[s], config, s, stages.size());
    dev.total_bytes =
        m::add(m::add(m::add(st.parameters, st.gradients), m::add(st.optimizer, st.gathered)),
               dev.activation_bytes);
    // Every rank of a stage holds the same: a device's rank holds its
    // stages' totals.
    std::int64_t held = dev.total_bytes;
    if (stages[s].device >= 0) {
      auto& sum = on_device[stages[s].device];
      held = sum = m::add(sum, dev.total_bytes);
    }
    plan.largest_total_bytes = std::max(plan.largest_total_bytes, held);
    for (std::int64_t t = 0; t < config.tensor_parallel; ++t) {
      for (std::int64_t r = 0; r < shards; ++r) {
        dev.tensor_parallel_rank = t;
        dev.data_parallel_rank = r;
        plan.devices.push_back(dev);
      }
    }
  }
  plan.fits = !capacity || plan.largest_total_bytes <= *capacity;
  return plan;
}

/// `plan_memory` with the smallest sharding degree that fits `capacity`:
/// the divisors of the data-parallel degree from 1 up, those a rule refuses
/// skipped. When none fits, the plan of the degree that comes closest (fits
/// false). Throws the error of degree 1 when the rules refuse every degree.
inline memory_plan plan_memory_auto(std::span<const stage_memory_input> stages,
                                    parallel_config config, std::int64_t capacity) {
  std::optional<memory_plan> best;
  std::optional<parallel_config> first_refused;
  for (std::int64_t n = 1; n <= std::max<std::int64_t>(config.data_parallel, 1); ++n) {
    if (config.data_parallel % n != 0) {
      continue;
    }
    config.sharded_data_parallel = n;
    if (broken_memory_rule(config, static_cast<std::int64_t>(stages.size())) != nullptr) {
      if (!first_refused) {
        first_refused = config;
      }
      continue;
    }
    memory_plan plan = plan_memory(stages, config, capacity);
    if (plan.fits) {
      return plan;
    }
    if (!best || plan.largest_total_bytes < best->largest_total_bytes) {
      best = std::move(plan);
    }
  }
  if (!best) {
    check_memory_rules(first_refused.value_or(config), static_cast<std::int64_t>(stages.size()));
  }
  return *best;
}

/// ZeRO's comparison for a training configuration (see the top).
inline zero_stage_bytes compare_zero_stages(std::span<const stage_memory_input> stages,
                                            parallel_config config) {
  namespace m = detail::memory;
  if (!config.training) {
    throw bad_parameter_error("shardpoint: the ZeRO stages compare training states; inference "
                              "has none");
  }
  const std::int64_t n =
      config.sharded_data_parallel > 1 ? config.sharded_data_parallel : config.data_parallel;
  if (n < 1) {
    throw bad_parameter_error(detail::cat("shardpoint: the data parallel degree must be a positive "
                                          "integer, not ",
                                          n));
  }
  // The largest device's: the stages of one device summed, as plan_memory
  // sums them (a trial's comparison gave one stage of a two-stage device).
  const auto largest = [&](const m::degrees& d) {
    std::vector<std::int64_t> by_device(stages.size(), 0); // at its first stage's index
    std::map<int, std::size_t> first_of;                   // device -> its first stage
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const std::size_t first =
          stages[i].device < 0 ? i : first_of.emplace(stages[i].device, i).first->second;
      const m::model_states st =
          m::states_of(stages[i], config, {d.parameters, d.gradients, d.optimizer});
      by_device[first] =
          m::add(by_device[first], m::add(m::add(st.parameters, st.gradients), st.optimizer));
    }
    return by_device.empty() ? std::int64_t{0}
                             : *std::max_element(by_device.begin(), by_device.end());
  };
  // Gathered bytes are no model state: only `parameters` shards parameters,
  // and its working set is left out as the comparison defines.
  zero_stage_bytes z;
  z.plain = largest({1, 1, 1});
  z.optimizer_states = largest({1, 1, n});
  z.gradients = largest({1, n, n});
  z.parameters = largest({n, n, n});
  return z;
}

/// The plan's data parallelism read against DeepSpeed's estimator (the top
/// of shardpoint/memory/deepspeed.hpp): Ψ the stage's trainable elements, L
/// its largest layer's, N the sharding degree (the data-parallel degree
/// when not sharding), `gpus_per_node` of them on a node (0: all on one).
/// Mixed-precision Adam training of one stage without tensor parallelism,
/// what the estimator assumes; bad_parameter_error otherwise.
inline deepspeed_comparison compare_with_deepspeed(std::span<const stage_memory_input> stages,
                                                   parallel_config config,
                                                   std::int64_t gpus_per_node = 0) {
  namespace m = detail::memory;
  if (!config.training || !(config.fp16 || config.bf16) ||
      config.optimizer != optimizer_kind::adam || stages.size() != 1 ||
      config.tensor_parallel != 1) {
    throw bad_parameter_error(
        "shardpoint: DeepSpeed's estimator is for mixed-precision Adam training of one stage "
        "without tensor parallelism (--training, --precision fp16 or bf16, --optimizer adam, "
        "one stage, --tensor-parallel 1)");
  }
  const std::int64_t n =
      config.sharded_data_parallel > 1 ? config.sharded_data_parallel : config.data_parallel;
  const std::int64_t g = gpus_per_node == 0 ? n : gpus_per_node;
  if (n < 1 || g < 1 || n % g != 0) {
    throw bad_parameter_error(detail::cat(
        "shardpoint: ", g, " GPU(s) per node do not divide the ", n, " GPUs the states are ",
        config.sharded_data_parallel > 1 ? "sharded over (the sharded data parallel degree)"
                                         : "divided over (the data-parallel degree)"));
  }
  const stage_memory_input& in = stages[0];
  deepspeed_comparison out;
  std::int64_t constants = 0;
  for (const auto& t : in.parameters) {
    if (t.trainable) {
      out.inputs.total_params = m::add(out.inputs.total_params, m::slice(t));
    } else {
      constants = m::add(constants, m::mul(t.stored_element_bytes, m::slice(t)));
    }
  }
  out.inputs.largest_layer_params = m::largest_layer(in, config, false);
  out.inputs.num_gpus_per_node = g;
  out.inputs.num_nodes = n / g;
  out.rows = deepspeed_table(out.inputs);
  const deepspeed_estimate& ds2 = out.rows[0].estimate; // no offload
  const deepspeed_estimate& ds3 = out.rows[2].estimate; // no offload, zero_init
  const std::int64_t whole = ds2.gpu_bytes - m::mul(2, out.inputs.total_params);

  const m::model_states z2 = m::states_of(in, config, {1, n, n});
  out.zero2.push_back({"fp16 parameters, whole on every GPU", z2.parameters - constants,
                       m::mul(2, out.inputs.total_params), "the same count: 2 bytes a parameter"});
  out.zero2.push_back(
      {"gradients and optimizer states, partitioned", m::add(z2.gradients, z2.optimizer), whole,
       "DeepSpeed counts 18 bytes a parameter (fp16 and fp32 gradients, fp32 master weights, "
       "Adam's two moments), shardpoint the ZeRO paper's 2 + 12 (no fp32 copy of the "
       "gradients); shardpoint rounds each weight's share up"});

  const m::model_states z3 = m::states_of(in, config, {n, n, n});
  out.zero3.push_back(
      {"model states, partitioned",
       m::add(m::add(z3.parameters - constants, z3.gradients), z3.optimizer),
       ds3.gpu_bytes - ds3.largest_layer_bytes,
       "DeepSpeed counts 18 bytes a parameter, shardpoint the ZeRO paper's 2 + 2 + 12 (no fp32 "
       "copy of the gradients); shardpoint keeps weights under the persistence threshold whole "
       "on every GPU and rounds each weight's share up"});
  out.zero3.push_back(
      {"the largest layer gathered", z3.gathered, ds3.largest_layer_bytes,
       n == 1 ? "on one GPU nothing is partitioned, so shardpoint gathers nothing; DeepSpeed's "
                "estimator counts the largest layer's 4 bytes a parameter whatever the degree"
              : "both hold the largest layer's fp16 parameters and gradients (4 bytes a "
                "parameter; shardpoint only its weights over the persistence threshold), "
                "shardpoint also the parameters prefetched up to the live-parameter limit"});
  if (constants > 0) {
    for (auto* terms : {&out.zero2, &out.zero3}) {
      terms->push_back({"integer constants", constants, 0,
                        "held by the model whole; no parameters to DeepSpeed"});
    }
  }
  return out;
}

/// What a model of `parameters` elements in all holds, from counts alone
/// (DeepSpeed's "cold" estimate): one stage, its weights a pool of
/// `largest_layer` elements (the largest layer, default all of them) and
/// the rest, each `element_bytes` as stored. Nothing is known to be small,
/// so the persistence threshold applies to the two pools.
inline stage_memory_input from_counts(std::int64_t parameters,
                                      std::optional<std::int64_t> largest_layer,
                                      std::int64_t element_bytes = 4) {
  const std::int64_t layer = largest_layer.value_or(parameters);
  if (parameters < 1) {
    throw bad_parameter_error(
        detail::cat("shardpoint: a model has at least 1 parameter, not ", parameters));
  }
  if (layer < 1 || layer > parameters) {
    throw bad_parameter_error(detail::cat("shardpoint: a model of ", parameters,
                                          " parameters cannot have a largest layer of ", layer));
  }
  stage_memory_input in;
  in.parameters.push_back({layer, 1, element_bytes});
  if (parameters > layer) {
    in.parameters.push_back({parameters - layer, 1, element_bytes});
  }
  in.layers.push_back({0});
  return in;
}

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_FORMULAS_HPP
