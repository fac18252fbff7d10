// shardpoint weights strategy | split | merge: tensor-parallel weights in
// MindSpore's terms (the seed document weight-sharding-strategy; docs/formats.md).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <shardpoint/io/detail/table.hpp>
#include <shardpoint/io/text.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

std::string text(const std::vector<std::int64_t>& v, bool tuple) {
  std::string s = tuple ? "(" : "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    s.append(i ? ", " : "").append(std::to_string(v[i]));
  }
  return s + (tuple && v.size() == 1 ? ",)" : tuple ? ")" : "]");
}

// The decisions as a table whose columns fit their longest entry (at least
// the widths of a short model's: 32, 16, 6, 11, 10), names escaped as every
// printed name is.
void print_decisions(const std::vector<onnx::weight_decision>& decisions) {
  constexpr auto left = io::detail::text_table::side::left;
  io::detail::text_table table(
      {{32, left}, {16, left}, {6, left}, {11, left}, {10, left}, {0, left}});
  table.row({"weight", "shape", "stage", "layout", "shard", "why"});
  for (const auto& d : decisions) {
    std::string stages;
    for (int s : d.stages) {
      stages.append(stages.empty() ? "" : ",").append(std::to_string(s));
    }
    table.row({io::printable(d.name), text(d.shape, false), stages, io::to_string(d.choice.how),
               text(d.shard, true), io::printable(d.choice.reason)});
  }
  std::cout << table.text();
}

} // namespace

namespace {

int run_strategy(const weights_options& a) {
  const auto r = write_strategy(a);
  print_decisions(r.decisions);
  print_warnings(r.warnings);
  std::cerr << "shardpoint: wrote " << r.files << " strategy file(s) to "
            << io::printable(a.strategy_dir) << '\n';
  if (!a.layout_out.empty()) { // (a trial's layout file was written unsaid)
    std::cerr << "shardpoint: wrote " << io::printable(a.layout_out) << '\n';
  }
  return exit_ok;
}

int run_split(const weights_options& a) {
  print_warnings(split_weights(a));
  std::cerr << "shardpoint: wrote the weights of every rank to " << io::printable(a.ranks_dir)
            << '\n';
  return exit_ok;
}

int run_merge(const weights_options& a) {
  print_warnings(merge_weights(a));
  std::cerr << "shardpoint: wrote " << io::printable(a.output) << '\n';
  return exit_ok;
}

} // namespace

action add_weights(CLI::App& app) {
  auto a = std::make_shared<weights_options>();
  auto* cmd = app.add_subcommand(
      "weights", "Tensor-parallel weights in MindSpore's terms: strategy files, per-rank "
                 "weights, and back");
  cmd->require_subcommand(1);
  auto* strategy = cmd->add_subcommand(
      "strategy", "Decide how every weight is split and write a MindSpore strategy per stage");
  cli_options to_strategy(*strategy);
  strategy_options(to_strategy, *a);
  auto* split = cmd->add_subcommand("split", "Cut every weight into what each rank loads");
  cli_options to_split(*split);
  split_weights_options(to_split, *a);
  auto* merge =
      cmd->add_subcommand("merge", "Re-assemble the full weights from every rank's files");
  cli_options to_merge(*merge);
  merge_weights_options(to_merge, *a);
  return [a, strategy, split] {
    if (strategy->parsed()) {
      return run_strategy(*a);
    }
    if (split->parsed()) {
      return run_split(*a);
    }
    return run_merge(*a);
  };
}

} // namespace shardpoint::cli
