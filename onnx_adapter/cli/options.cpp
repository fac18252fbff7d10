// The option groups several commands take, on CLI11.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include <shardpoint/io/report.hpp>

#include "options.hpp"

namespace shardpoint::cli {

void add_to(CLI::App& cmd, model_points& m, const std::string& what, bool required) {
  cmd.add_option("--input-model,--input_model", m.input, what)->required(required);
  cmd.add_option("--manual-sharding-config,--manual_sharding_config", m.config,
                 "shard.yaml (list of {node, device, stage}) or a sharding_info / "
                 "pipelining_info mapping (YAML or .json); without it and --shard, the model's "
                 "own __ipu_number / __pipeline_stage attributes");
  cmd.add_option("--shard", m.shard_flags, "A sharding point NODE=DEVICE[:STAGE] (repeatable)");
  cmd.add_flag("--only_manual_sharding,--only-manual-sharding", m.strict,
               "Require unique names on every node; rename nothing");
}

void add_to(CLI::App& cmd, pipeline_flags& f, const std::string& bps_help) {
  cmd.add_option("--num-ipus,--num_ipus", f.num_ipus, "Devices available (checked)")
      ->check(device_count);
  cmd.add_flag("--enable-pipelining,--enable_pipelining", f.pipelining,
               "Validate for pipelined execution");
  cmd.add_option("--batches-per-step,--batches_per_step", f.batches_per_step, bps_help)
      ->check(batch_count);
}

void add_to(CLI::App& cmd, memory_flags& f, bool with_batches) {
  auto* g = cmd.add_option_group("memory plan", "What each device holds (shardpoint memory)");
  g->add_option("--tensor-parallel", f.tensor_parallel,
                "Tensor-parallel degree T: weights split by their shard tuples (Megatron pairs "
                "from the graph, or --layout)");
  g->add_option("--layout", f.layout,
                "Layout file: initializer -> column | row | vocab | replicated | [shard tuple]");
  g->add_option("--data-parallel", f.data_parallel, "Data-parallel degree DP");
  g->add_option("--sharded-data-parallel", f.sharded_data_parallel,
                "SageMaker's sharded data parallel degree: divides DP; or auto (the smallest "
                "that fits --device-memory)");
  auto* inf =
      g->add_flag("--inference", f.inference, "Weights in their stored types, no training state");
  auto* tr = g->add_flag("--training", f.training,
                         "Parameters, gradients and optimizer states (the default)");
  inf->excludes(tr);
  g->add_option("--optimizer", f.optimizer, "Training: adam (default), sgd, none")
      ->check(CLI::IsMember({"adam", "sgd", "none"}));
  g->add_option("--precision", f.precision, "Training: fp16 (mixed, default), bf16 (mixed), fp32")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  g->add_flag("--fp16", f.fp16, "SageMaker's fp16: --precision fp16");
  g->add_flag("--bf16", f.bf16, "SageMaker's bf16: --precision bf16");
  g->add_flag("--shard-optimizer-states", f.shard_optimizer_states,
              "Optimizer states divided over the data-parallel ranks (ZeRO stage 1)");
  g->add_option("--param-persistence-threshold", f.persistence_threshold,
                "Weights with fewer elements stay whole under sharding (default 1e6)");
  g->add_option("--max-live-parameters", f.max_live_parameters,
                "Most elements gathered at once under sharding (default 1e9)");
  g->add_option("--micro-batch-size", f.micro_batch_size,
                "Samples per micro-batch: the batch dimension of the activations (default 1)");
  if (with_batches) {
    g->add_option("--batches-per-step,--batches_per_step", f.batches_per_step,
                  "Micro-batches per step M (default 1)");
  }
  g->add_option("--schedule", f.schedule, "Training pipeline schedule: gpipe (default) or 1f1b")
      ->check(CLI::IsMember({"gpipe", "1f1b"}));
  g->add_option("--queue-depth", f.queue_depth,
                "Inference: entries queued between stages (default 4, as simulate)");
}

bool memory_flags_given(const CLI::App& cmd) {
  for (const char* flag :
       {"--tensor-parallel", "--layout", "--data-parallel", "--sharded-data-parallel",
        "--inference", "--training", "--optimizer", "--precision", "--fp16", "--bf16",
        "--shard-optimizer-states", "--param-persistence-threshold", "--max-live-parameters",
        "--micro-batch-size", "--schedule", "--queue-depth"}) {
    if (cmd.count(flag) > 0) {
      return true;
    }
  }
  return false;
}

void add_to(CLI::App& cmd, report_flag& r, const std::vector<std::string>& formats,
            const std::string& help) {
  cmd.add_option("--report", r.format, help)->check(CLI::IsMember(formats));
}

void print_findings(const std::vector<diagnostic>& diagnostics) {
  std::cerr << io::to_lines(diagnostics);
}

} // namespace shardpoint::cli
