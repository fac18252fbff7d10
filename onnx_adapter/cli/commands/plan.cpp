// shardpoint plan: the best training layout -- pipeline x tensor x data
// parallel, ZeRO stage, micro-batch, schedule -- of a model on a cluster.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

int run(const plan_options& a) {
  const auto r = plan_model(a);
  print_warnings(r.warnings);
  std::cout << r.report;
  if (verdict_of(r) == verdict::rule_broken) {
    std::cerr << "shardpoint: no layout fits (the report says which rule refused each)\n";
  }
  print_written(r.written);
  return exit_code(verdict_of(r));
}

} // namespace

action add_plan(CLI::App& app) {
  auto a = std::make_shared<plan_options>();
  auto* cmd = app.add_subcommand(
      "plan", "The best training layout (pipeline x tensor x data parallel, ZeRO stage, "
              "micro-batch, schedule) of a model on a cluster, under its memory");
  cmd->add_option("--input-model,--input_model", a->input,
                  "Model to lay out (or give a transformer's counts)");
  add_to(*cmd, a->shapes);
  cmd->add_option("--batch-dim", a->batch_dim,
                  "Where the model's batch is, for the activations: a symbolic dimension's name or "
                  "INPUT:AXIS (default: found by name)");
  auto* t = cmd->add_option_group("transformer", "A GPT-like transformer by its counts, "
                                                 "instead of a model");
  t->add_option("--layers", a->layers, "Transformer layers");
  t->add_option("--hidden", a->hidden, "Hidden size");
  t->add_option("--sequence", a->sequence, "Sequence length");
  t->add_option("--vocabulary", a->vocabulary, "Vocabulary size");
  t->add_option("--heads", a->heads, "Attention heads (default hidden / 64, marked a guess)");
  auto* c = cmd->add_option_group("cluster", "The devices (flags win over --cluster)");
  c->add_option("--cluster", a->cluster_file, "A YAML file of the keys below (docs/plan.md)");
  c->add_option("--devices", a->devices, "Devices in all");
  c->add_option("--devices-per-node", a->devices_per_node, "Devices a node (default: all)");
  c->add_option("--device-memory", a->device_memory, "Memory of a device (80GiB, 16GB, ...)");
  c->add_option("--device-flops", a->device_flops,
                "FLOP/s a device sustains (312e12, 312T, 19.5 TFLOPS)");
  c->add_option("--intra-node-bandwidth", a->intra_node_bandwidth,
                "Bytes a second between devices of a node (300GB/s)");
  c->add_option("--inter-node-bandwidth", a->inter_node_bandwidth,
                "Bytes a second between nodes (25GB/s)");
  cmd->add_option("--global-batch", a->global_batch, "Samples a training step")->required();
  cmd->add_option("--dtype", a->dtype, "fp16 (default), bf16 or fp32")
      ->check(CLI::IsMember({"fp16", "bf16", "fp32"}));
  cmd->add_option("--optimizer", a->optimizer, "adam (default), sgd or none")
      ->check(CLI::IsMember({"adam", "sgd", "none"}));
  cmd->add_option("--max-micro-batch-size", a->max_micro_batch_size,
                  "The largest micro-batch tried (default 64)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 31));
  cmd->add_option("--schedules", a->schedules,
                  "Schedules tried (default all: gpipe,1f1b,interleaved,zb-h1)")
      ->delimiter(',')
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1"}));
  cmd->add_option("--virtual-stages", a->virtual_stages,
                  "v of the interleaved schedule (default 2)")
      ->check(CLI::Range(2, 64));
  cmd->add_option("--backward-ratio", a->backward_ratio,
                  "A backward's compute in forwards (default 2)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--weight-share", a->weight_share,
                  "zb-h1: the weight gradient's part of the backward (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--top-k", a->top_k, "Layouts listed: N (default 10) or all");
  add_to(*cmd, a->report, planning_reports,
         "Report: table, json, or the best layout drawn (html, svg) to --report-file");
  cmd->add_option("--emit", a->emit,
                  "A new folder for the files that run the best layout (plan.json, shard.yaml, "
                  "the sharded model, MindSpore strategy files)");
  cmd->add_flag("--force", a->force, "Replace an --emit folder shardpoint wrote before");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
