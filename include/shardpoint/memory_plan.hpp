// shardpoint/memory_plan.hpp -- the bytes every device holds: pipeline
// stages x tensor-parallel ranks x sharded data parallelism (SageMaker's,
// the seed document sharded-data-parallelism), and whether they fit.
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
//     gathered_bytes         g * L + p * max(L, min(max_live_parameters, E))
//                            when N > 1, L the largest layer's non-persistent
//                            elements (a layer: the weights one vertex reads),
//                            E all non-persistent elements: the layer being
//                            computed is gathered whole with its full
//                            gradients before the reduce-scatter, whatever
//                            max_live says (DeepSpeed fetches a module
//                            entire), and prefetching fills up to max_live
//                            (DeepSpeed's estimator: 4L, the same for
//                            mixed precision when max_live <= L).
//   Activations, A(s) = produced(s) + received(s) for one micro-batch (the
//   outputs of the stage's vertices, and of the outside vertices it reads):
//     training   A(s) x in flight: M micro-batches for GPipe, min(M, S - s)
//                for stage s of S under 1F1B
//     inference  produced(s) + Q x received(s), Q the queue depth between
//                stages rounded up to a power of two, as the runtime's
//   total_bytes is the sum of the five. Every tensor-parallel rank of a stage
//   and every shard of a sharding group holds the same bytes. The largest
//   device, which `fits` compares with the capacity, sums the stages one
//   device holds (stage_memory_input::device, from the sharding's devices).
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
//
// The planner lives in shardpoint/memory/, one concern a header:
//   config.hpp         what is planned (parallel_config, stage_memory_input,
//                      memory_plan, ...)
//   rules.hpp          memory_rules, check_memory_rules
//   formulas.hpp       plan_memory, plan_memory_auto, compare_zero_stages,
//                      compare_with_deepspeed, from_counts
//   deepspeed.hpp      DeepSpeed's own estimator, to the byte
//   stage_inputs.hpp   stage_memory_inputs: a partitioned graph's stages
//   planner_items.hpp  plan_memory_items: the planner as balanced_shard's cap
#ifndef SHARDPOINT_MEMORY_PLAN_HPP
#define SHARDPOINT_MEMORY_PLAN_HPP

#include "memory/config.hpp"
#include "memory/deepspeed.hpp"
#include "memory/formulas.hpp"
#include "memory/planner_items.hpp"
#include "memory/rules.hpp"
#include "memory/stage_inputs.hpp"

#endif // SHARDPOINT_MEMORY_PLAN_HPP
