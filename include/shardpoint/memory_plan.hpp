// shardpoint/memory_plan.hpp -- the bytes every device holds: pipeline
// stages x tensor-parallel ranks x sharded data parallelism (SageMaker's,
// ../shared/seeds/sharded-data-parallelism.txt), and whether they fit.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE MODEL (every figure per device; e a weight's elements, e_t = e / P its
// slice on one tensor-parallel rank, P the product of its shard tuple)
//
//   Bytes per element (the ZeRO paper's accounting):
//                          parameter p  gradient g  optimizer state K
//     mixed fp16 / bf16:       2            2        adam 12, sgd 4, none 0
//     fp32 training:           4            4        adam 8,  sgd 0, none 0
//     inference:        stored type         0        0
//   (Adam in mixed precision keeps an fp32 master copy, momentum and
//   variance; SGD without momentum only the master copy, which fp32 weights
//   already are; `none` keeps no optimizer state.) A weight that is not
//   trainable (an integer constant) holds its stored bytes and nothing else.
//
//   Sharding degree N (sharded data parallelism, 1 when off) and optimizer
//   degree N_o (N, or the data-parallel degree with optimizer-state sharding,
//   else 1). A share of x elements over n devices is ceil(x / n) (partitions
//   padded to equal size). A weight is persistent when e < threshold (at e =
//   threshold it is sharded; threshold 0 keeps nothing whole):
//     parameter_bytes        sum p * (persistent ? e_t : ceil(e_t / N))
//     gradient_bytes         sum g * ceil(e_t / N)
//     optimizer_state_bytes  sum K * ceil(e_t / N_o)
//     gathered_bytes         (p + g) * min(max_live_parameters, L) when N > 1,
//                            L the largest layer's non-persistent elements
//                            (a layer: the weights one vertex reads): the
//                            parameters all-gathered for it and their full
//                            gradients before the reduce-scatter.
//   Activations, A(s) = produced(s) + received(s) for one micro-batch (the
//   outputs of the stage's vertices, and of the outside vertices it reads):
//     training   A(s) x in flight: M micro-batches for GPipe, min(M, S - s)
//                for stage s of S under 1F1B
//     inference  produced(s) + Q x received(s), Q the queue depth between
//                stages rounded up to a power of two, as the runtime's
//   total_bytes is the sum of the five. Every tensor-parallel rank of a stage
//   and every shard of a sharding group holds the same bytes.
//
//   zero_stages (ZeRO's comparison, the model states p + g + K of the largest
//   device with N' = N when sharding, else the data-parallel degree):
//     plain (p + g + K) e_t; optimizer_states (p + g) e_t + K ceil(e_t / N');
//     gradients p e_t + (g + K) ceil(e_t / N'); parameters as sharded data
//     parallelism with degree N' (persistent weights whole).
//
// RULES (`memory_rules`, one table, checked in order; SageMaker's words):
//   positive degrees and counts, below 2^31, and at most 2^20 devices in all
//   (the plan lists every device); non-negative thresholds; the sharding degree
//   between 1 and the data-parallel degree and dividing it; sharding not with
//   tensor parallelism, pipeline parallelism or optimizer-state sharding, and
//   only for training; fp16 and bf16 mutually exclusive; bf16 training only
//   with sharded data parallelism.
//
// COMPLEXITY O(stages x (weights + layers) + devices) per plan; `auto`
// plans once per divisor of the data-parallel degree.
#ifndef SHARDPOINT_MEMORY_PLAN_HPP
#define SHARDPOINT_MEMORY_PLAN_HPP

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/checked.hpp"
#include "detail/text.hpp"
#include "error.hpp"
#include "evaluate.hpp"
#include "graph_access.hpp"
#include "memory_items.hpp"
#include "sharding_result.hpp"

namespace shardpoint {

enum class optimizer_kind { adam, sgd, none };
enum class pipeline_schedule { gpipe, one_f_one_b };

/// How the model is trained or run, in SageMaker's terms where it has them.
struct parallel_config {
  bool training = true;
  optimizer_kind optimizer = optimizer_kind::adam;
  /// 16-bit mixed precision, SageMaker's fp16 / bf16 parameters; neither is
  /// fp32. Default: the ZeRO paper's mixed precision.
  bool fp16 = true;
  bool bf16 = false;
  std::int64_t tensor_parallel = 1;
  std::int64_t data_parallel = 1;
  std::int64_t sharded_data_parallel = 1;               ///< the sharding degree N
  bool shard_optimizer_states = false;                  ///< optimizer states over data_parallel
  std::int64_t param_persistence_threshold = 1'000'000; ///< elements
  std::int64_t max_live_parameters = 1'000'000'000;     ///< elements
  /// Samples per micro-batch: what the caller's activation bytes are for
  /// (checked here, used by whoever measures the activations).
  std::int64_t micro_batch_size = 1;
  std::int64_t micro_batches = 1; ///< M, batches per step
  pipeline_schedule schedule = pipeline_schedule::gpipe;
  std::int64_t queue_depth = 4; ///< inference: entries between stages
};

/// A weight: its elements, into how many slices tensor parallelism cuts it
/// (the product of its shard tuple; 1 replicated), and the bytes of one
/// element as stored (what inference holds). A weight that is not trainable
/// (an integer constant) holds its stored bytes in training too, with no
/// gradient, no optimizer state, never sharded nor gathered.
struct parameter_tensor {
  std::int64_t elements = 0;
  std::int64_t tensor_parallel_parts = 1;
  std::int64_t stored_element_bytes = 4;
  bool trainable = true;
};

/// What a stage holds: its weights, which of them each of its layers reads
/// (indices into `parameters`), and its activations for one micro-batch.
struct stage_memory_input {
  std::vector<parameter_tensor> parameters;
  std::vector<std::vector<std::uint32_t>> layers;
  std::int64_t produced_bytes = 0; ///< outputs of its vertices
  std::int64_t received_bytes = 0; ///< outputs of outside vertices it reads
};

struct device_memory {
  int stage = 0;
  std::int64_t tensor_parallel_rank = 0;
  std::int64_t data_parallel_rank = 0; ///< the shard within a sharding group
  std::int64_t parameter_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_state_bytes = 0;
  std::int64_t gathered_bytes = 0;
  std::int64_t activation_bytes = 0;
  std::int64_t total_bytes = 0;
};

struct memory_plan {
  std::vector<device_memory> devices; ///< stage, then tensor-parallel rank, then shard
  std::int64_t largest_total_bytes = 0;
  std::optional<std::int64_t> capacity; ///< bytes per device, when given
  bool fits = true;                     ///< every device within `capacity`
  std::int64_t sharded_data_parallel = 1;
};

/// The model-state bytes of the largest device, sharding more and more.
struct zero_stage_bytes {
  std::int64_t plain = 0;
  std::int64_t optimizer_states = 0;
  std::int64_t gradients = 0;
  std::int64_t parameters = 0;
};

/// A rule on the configuration: `broken` says whether `c` (with `stages`
/// pipeline stages) breaks it, `message` what to tell the user.
struct memory_rule {
  std::string_view name;
  bool (*broken)(const parallel_config& c, std::int64_t stages);
  std::string (*message)(const parallel_config& c, std::int64_t stages);
};

namespace detail::memory {

using config = const parallel_config&;
using count = std::int64_t;

inline std::string not_positive(config x, count) {
  const std::pair<const char*, std::int64_t> all[] = {
      {"tensor parallel degree", x.tensor_parallel},
      {"data parallel degree", x.data_parallel},
      {"sharded data parallel degree", x.sharded_data_parallel},
      {"micro-batch size", x.micro_batch_size},
      {"batches per step", x.micro_batches},
      {"queue depth", x.queue_depth}};
  for (const auto& [what, value] : all) {
    if (value < 1) {
      return cat("the ", what, " must be a positive integer, not ", value);
    }
  }
  return {};
}
inline bool any_not_positive(config x, count) {
  return !not_positive(x, 0).empty();
}

/// The most devices a plan describes (pipeline stages x tensor parallel x
/// data parallel), and the largest degree or batch count: the plan lists
/// every device, so its memory grows with their number.
inline constexpr std::int64_t max_planned_devices = std::int64_t{1} << 20;
inline constexpr std::int64_t max_degree = std::int64_t{1} << 31;

inline std::string too_large(config x, count stages) {
  const std::pair<const char*, std::int64_t> all[] = {{"tensor parallel degree", x.tensor_parallel},
                                                      {"data parallel degree", x.data_parallel},
                                                      {"micro-batch size", x.micro_batch_size},
                                                      {"batches per step", x.micro_batches},
                                                      {"queue depth", x.queue_depth}};
  for (const auto& [what, value] : all) {
    if (value >= max_degree) {
      return cat("the ", what, " must be below 2^31, not ", value);
    }
  }
  const auto devices = checked_mul(std::max<count>(stages, 1), x.tensor_parallel);
  const auto all_devices = devices ? checked_mul(*devices, x.data_parallel) : std::nullopt;
  if (!all_devices || *all_devices > max_planned_devices) {
    return cat("the layout has ", std::max<count>(stages, 1), " stage(s) x ", x.tensor_parallel,
               " tensor-parallel x ", x.data_parallel,
               " data-parallel devices; shardpoint plans at most 2^20 (1048576) devices");
  }
  return {};
}
inline bool any_too_large(config x, count stages) {
  return !any_not_positive(x, stages) && !too_large(x, stages).empty();
}

inline bool negative_threshold(config x, count) {
  return x.param_persistence_threshold < 0 || x.max_live_parameters < 0;
}
inline std::string negative_threshold_message(config x, count) {
  return x.param_persistence_threshold < 0
             ? cat("the parameter persistence threshold must be non-negative, not ",
                   x.param_persistence_threshold)
             : cat("the maximum of live parameters must be non-negative, not ",
                   x.max_live_parameters);
}

inline bool degree_off(config x, count) {
  return x.sharded_data_parallel > x.data_parallel ||
         x.data_parallel % x.sharded_data_parallel != 0;
}
inline std::string degree_off_message(config x, count) {
  return cat("the sharded data parallel degree must be an integer between one and the data "
             "parallelism degree and must evenly divide it: ",
             x.sharded_data_parallel, " does not divide ", x.data_parallel);
}

inline bool sharding_inference(config x, count) {
  return !x.training && (x.sharded_data_parallel > 1 || x.shard_optimizer_states);
}
inline std::string sharding_inference_message(config, count) {
  return "sharded data parallelism and optimizer state sharding split the training state; "
         "inference has none";
}

inline bool with_tensor_parallel(config x, count) {
  return x.sharded_data_parallel > 1 && x.tensor_parallel > 1;
}
inline std::string with_tensor_parallel_message(config x, count) {
  return cat("sharded data parallelism currently is not compatible with tensor parallelism "
             "(tensor parallel degree ",
             x.tensor_parallel, "); set the tensor parallel degree to 1");
}

inline bool with_pipeline(config x, count stages) {
  return x.sharded_data_parallel > 1 && stages > 1;
}
inline std::string with_pipeline_message(config, count stages) {
  return cat("sharded data parallelism currently is not compatible with pipeline parallelism (",
             stages, " pipeline stages); use one stage");
}

inline bool with_optimizer_sharding(config x, count) {
  return x.sharded_data_parallel > 1 && x.shard_optimizer_states;
}
inline std::string with_optimizer_sharding_message(config, count) {
  return "sharded data parallelism currently is not compatible with optimizer state sharding; "
         "turn off optimizer state sharding";
}

inline bool both_16_bit(config x, count) {
  return x.training && x.fp16 && x.bf16;
}
inline std::string both_16_bit_message(config, count) {
  return "you can't activate both data types in one training job: the fp16 and bf16 parameters "
         "are mutually exclusive";
}

inline bool bf16_alone(config x, count) {
  return x.training && x.bf16 && x.sharded_data_parallel == 1;
}
inline std::string bf16_alone_message(config, count) {
  return "BF16 training works only when sharded data parallelism is activated (a sharded data "
         "parallel degree above 1)";
}

} // namespace detail::memory

/// The rules, in the order they are checked. A later version relaxes one by
/// removing its line.
inline constexpr std::array<memory_rule, 10> memory_rules{{
    {"positive-degrees", detail::memory::any_not_positive, detail::memory::not_positive},
    {"degrees-in-range", detail::memory::any_too_large, detail::memory::too_large},
    {"non-negative-thresholds", detail::memory::negative_threshold,
     detail::memory::negative_threshold_message},
    {"sharded-degree-divides-data-parallel", detail::memory::degree_off,
     detail::memory::degree_off_message},
    {"sharding-needs-training", detail::memory::sharding_inference,
     detail::memory::sharding_inference_message},
    {"sharding-not-with-tensor-parallelism", detail::memory::with_tensor_parallel,
     detail::memory::with_tensor_parallel_message},
    {"sharding-not-with-pipeline-parallelism", detail::memory::with_pipeline,
     detail::memory::with_pipeline_message},
    {"sharding-not-with-optimizer-state-sharding", detail::memory::with_optimizer_sharding,
     detail::memory::with_optimizer_sharding_message},
    {"fp16-or-bf16", detail::memory::both_16_bit, detail::memory::both_16_bit_message},
    {"bf16-needs-sharding", detail::memory::bf16_alone, detail::memory::bf16_alone_message},
}};

/// The first rule `config` breaks with `stages` pipeline stages, or null.
inline const memory_rule* broken_memory_rule(const parallel_config& config, std::int64_t stages) {
  for (const auto& r : memory_rules) {
    if (r.broken(config, stages)) {
      return &r;
    }
  }
  return nullptr;
}

/// Throws bad_parameter_error with the message of the first rule broken.
inline void check_memory_rules(const parallel_config& config, std::int64_t stages) {
  if (const memory_rule* r = broken_memory_rule(config, stages)) {
    throw bad_parameter_error("shardpoint: " + r->message(config, stages));
  }
}

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
// rather than wrapped past 2^63 (portable: no compiler builtins).
inline void overflow() {
  throw bad_parameter_error("shardpoint: the memory plan overflows 64 bits; are the counts right?");
}

inline std::int64_t mul(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) {
    throw bad_parameter_error(
        cat("shardpoint: a negative count in the memory plan (", a, " x ", b, ")"));
  }
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) {
    overflow();
  }
  return a * b;
}

inline std::int64_t add(std::int64_t a, std::int64_t b) {
  if (b > std::numeric_limits<std::int64_t>::max() - a) {
    overflow();
  }
  return a + b;
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
    const bool persistent = t.elements < c.param_persistence_threshold;
    const std::int64_t p = c.training ? b.parameter : t.stored_element_bytes;
    out.parameters = add(out.parameters, mul(p, persistent ? e : share(e, d.parameters)));
    out.gradients = add(out.gradients, mul(b.gradient, share(e, d.gradients)));
    out.optimizer = add(out.optimizer, mul(b.optimizer, share(e, d.optimizer)));
  }
  if (d.parameters > 1) {
    std::int64_t largest = 0;
    for (const auto& layer : in.layers) {
      std::int64_t sum = 0;
      for (auto i : layer) {
        if (i >= in.parameters.size()) {
          throw bad_parameter_error(
              cat("shardpoint: a layer names parameter ", i, " of ", in.parameters.size()));
        }
        const auto& t = in.parameters[i];
        if (t.trainable && t.elements >= c.param_persistence_threshold) {
          sum = add(sum, slice(t));
        }
      }
      largest = std::max(largest, sum);
    }
    out.gathered =
        mul(b.parameter + b.gradient, std::min<std::int64_t>(c.max_live_parameters, largest));
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

/// The bytes of every device, for `stages` as given (stage s is
/// stages[s]) and `config`; fits compares with `capacity` bytes when given.
/// Throws bad_parameter_error for a broken rule (memory_rules).
inline memory_plan plan_memory(std::span<const stage_memory_input> stages,
                               const parallel_config& config,
                               std::optional<std::int64_t> capacity = std::nullopt) {
  namespace m = detail::memory;
  check_memory_rules(config, static_cast<std::int64_t>(stages.size()));
  const std::int64_t n = config.sharded_data_parallel;
  const m::degrees d{n, n, config.shard_optimizer_states ? config.data_parallel : n};
  const std::int64_t shards = std::max(d.parameters, d.optimizer);
  memory_plan plan;
  plan.capacity = capacity;
  plan.sharded_data_parallel = n;
  plan.devices.reserve(stages.size() * static_cast<std::size_t>(std::min<std::int64_t>(
                                           m::mul(config.tensor_parallel, shards), 1 << 20)));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const m::model_states st = m::states_of(stages[s], config, d);
    device_memory dev;
    dev.stage = static_cast<int>(s);
    dev.parameter_bytes = st.parameters;
    dev.gradient_bytes = st.gradients;
    dev.optimizer_state_bytes = st.optimizer;
    dev.gathered_bytes = st.gathered;
    dev.activation_bytes = m::activations(stages[s], config, s, stages.size());
    dev.total_bytes =
        m::add(m::add(m::add(st.parameters, st.gradients), m::add(st.optimizer, st.gathered)),
               dev.activation_bytes);
    plan.largest_total_bytes = std::max(plan.largest_total_bytes, dev.total_bytes);
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
  const auto largest = [&](const m::degrees& d) {
    std::int64_t out = 0;
    for (const auto& s : stages) {
      const m::model_states st = m::states_of(s, config, {d.parameters, d.gradients, d.optimizer});
      out = std::max(out, m::add(m::add(st.parameters, st.gradients), st.optimizer));
    }
    return out;
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

/// A stage's weights as per-vertex uses of shared tensors, as memory_items
/// is for bytes: each tensor a stage's vertices read is held once.
struct parameter_uses {
  std::vector<parameter_tensor> tensors;
  std::vector<std::vector<std::uint32_t>> used; ///< per vertex index
};

/// What each stage of `result` holds, per stage 0..num_stages()-1 (every
/// vertex in stage 0 when the result has no stages): the tensors its
/// vertices use (each vertex a layer), the output bytes of its vertices
/// (`produced`, a readable vertex property map) and of the outside vertices
/// it reads, each once (as evaluate's received bytes).
namespace detail::memory {

template <class Ref, class G, class Produced>
std::vector<stage_memory_input> inputs(const Ref& a, const G& g, const sharding_result& result,
                                       const parameter_uses& params, const Produced& produced) {
  const std::size_t n = a.size();
  if (result.size() != n || params.used.size() != n) {
    throw size_mismatch_error(cat("shardpoint: stage_memory_inputs() given ", result.size(),
                                  " results and ", params.used.size(),
                                  " parameter uses for a graph of ", n, " vertices"));
  }
  std::vector<int> stage(n, 0);
  if (result.has_stages()) {
    for (std::size_t v = 0; v < n; ++v) {
      const auto s = result.stage(v);
      if (!s) {
        throw invalid_sharding_error(cat("shardpoint: ", a.describe(v), " has no stage"), v);
      }
      stage[v] = *s;
    }
  }
  const int count = result.has_stages() ? result.num_stages() : 1;
  // Produced bytes as the cost, so that a stage's cost is what it produces
  // and its received bytes are evaluate's, each outside producer once.
  const partition_metrics pm =
      evaluate(g, sharding_result(n, {}, stage), produced, constant_weight{0}, produced);
  std::vector<stage_memory_input> out(static_cast<std::size_t>(count));
  std::vector<std::vector<std::int64_t>> local(out.size()); // per stage: tensor -> its index
  for (std::size_t v = 0; v < n; ++v) {
    auto& in = out[static_cast<std::size_t>(stage[v])];
    auto& map = local[static_cast<std::size_t>(stage[v])];
    std::vector<std::uint32_t> layer;
    for (auto t : params.used[v]) {
      if (t >= params.tensors.size()) {
        throw bad_parameter_error(cat("shardpoint: ", a.describe(v), " uses parameter ", t, " of ",
                                      params.tensors.size()),
                                  v);
      }
      if (map.empty()) {
        map.assign(params.tensors.size(), -1);
      }
      if (map[t] < 0) {
        map[t] = static_cast<std::int64_t>(in.parameters.size());
        in.parameters.push_back(params.tensors[t]);
      }
      layer.push_back(static_cast<std::uint32_t>(map[t]));
    }
    if (!layer.empty()) {
      in.layers.push_back(std::move(layer));
    }
  }
  for (std::size_t s = 0; s < out.size() && s < pm.stages.size(); ++s) {
    out[s].produced_bytes = static_cast<std::int64_t>(pm.stages[s].cost);
    out[s].received_bytes = static_cast<std::int64_t>(pm.stages[s].received_bytes);
  }
  return out;
}

} // namespace detail::memory

/// What each stage of `result` holds, stage 0..num_stages()-1 (all in stage
/// 0 when the result has no stages): the tensors its vertices use, each
/// once (each vertex a layer); the output bytes of its vertices (`produced`,
/// a readable property map from vertex to bytes) and of the outside
/// vertices it reads, each once, as evaluate's received bytes. `g` as every
/// algorithm takes it (graph_access.hpp); `params.used` by vertex index.
template <vertex_list_graph G, class Produced>
std::vector<stage_memory_input> stage_memory_inputs(const G& g, const sharding_result& result,
                                                    const parameter_uses& params,
                                                    const Produced& produced) {
  static_assert(vertex_weight_map<Produced, G>,
                "shardpoint: the produced-bytes map must be a readable property map from vertex "
                "to a number");
  if constexpr (!detail::accessible<G>) {
    detail::require_graph<G>();
    return {};
  } else {
    return detail::memory::inputs(detail::access(g), g, result, params, produced);
  }
}

namespace detail::memory {

template <class Ref, class Produced>
memory_items items(const Ref& a, const parameter_uses& params, const Produced& produced,
                   const parallel_config& config, std::int64_t stages) {
  const std::size_t n = a.size();
  if (params.used.size() != n) {
    throw size_mismatch_error(cat("shardpoint: plan_memory_items() given ", params.used.size(),
                                  " parameter uses for a graph of ", n, " vertices"));
  }
  if (stages < 1) {
    throw bad_parameter_error(
        cat("shardpoint: plan_memory_items() needs at least one stage, not ", stages));
  }
  check_memory_rules(config, stages);
  const std::int64_t sd = config.sharded_data_parallel;
  const degrees d{sd, sd, config.shard_optimizer_states ? config.data_parallel : sd};
  memory_items out;
  out.bytes.reserve(params.tensors.size() + n);
  for (const auto& t : params.tensors) {
    stage_memory_input one;
    one.parameters.push_back(t);
    const model_states st = states_of(one, config, d);
    out.bytes.push_back(static_cast<double>(add(add(st.parameters, st.gradients), st.optimizer)));
  }
  // Every micro-batch a stage may hold: the most of any stage.
  const std::int64_t copies = !config.training ? queue_entries(config)
                              : config.schedule == pipeline_schedule::gpipe
                                  ? config.micro_batches
                                  : std::min(config.micro_batches, stages);
  out.used.resize(n);
  const auto first_output = static_cast<std::uint32_t>(out.bytes.size());
  for (std::size_t v = 0; v < n; ++v) {
    for (auto t : params.used[v]) {
      if (t >= params.tensors.size()) {
        throw bad_parameter_error(cat("shardpoint: ", a.describe(v), " uses parameter ", t, " of ",
                                      params.tensors.size()),
                                  v);
      }
      out.used[v].push_back(t);
    }
    const auto b = static_cast<std::int64_t>(a.read(produced, v));
    out.bytes.push_back(static_cast<double>(mul(b, copies)));
    out.used[v].push_back(first_output + static_cast<std::uint32_t>(v));
  }
  for (std::size_t u = 0; u < n; ++u) {
    a.for_each_successor(u, [&](std::size_t v) {
      out.used[v].push_back(first_output + static_cast<std::uint32_t>(u));
    });
  }
  return out;
}

} // namespace detail::memory

/// The planner as memory items for balanced_shard and evaluate: each weight
/// an item of its model-state bytes on one device, each vertex's output an
/// item used by the vertex and its consumers, of its bytes times the most
/// micro-batches any of `stages` stages holds (M for GPipe, min(M, S) for
/// 1F1B, the queue depth for inference). A stage's sum is then at least
/// plan_memory's total for any device of it, exactly that total for GPipe
/// training -- except the gathered working set of sharded data
/// parallelism, which exists only with one stage. Throws as plan_memory for
/// a broken rule.
template <vertex_list_graph G, class Produced>
memory_items plan_memory_items(const G& g, const parameter_uses& params, const Produced& produced,
                               const parallel_config& config, std::int64_t stages) {
  static_assert(vertex_weight_map<Produced, G>,
                "shardpoint: the produced-bytes map must be a readable property map from vertex "
                "to a number");
  if constexpr (!detail::accessible<G>) {
    detail::require_graph<G>();
    return {};
  } else {
    return detail::memory::items(detail::access(g), params, produced, config, stages);
  }
}

} // namespace shardpoint

#endif // SHARDPOINT_MEMORY_PLAN_HPP
