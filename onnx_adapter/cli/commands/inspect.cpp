// shardpoint inspect: list a model's nodes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>
#include <regex>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

struct inspect_options {
  std::string model;
  std::string grep;
};

std::string joined(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    out.append(out.empty() ? "" : ", ").append(n);
  }
  return out;
}

int run(const inspect_options& a) {
  std::regex re;
  try {
    re = std::regex(a.grep.empty() ? std::string(".*") : a.grep);
  } catch (const std::regex_error& e) {
    throw usage_error("--grep '" + a.grep + "' is not a valid regular expression: " + e.what());
  }
  const auto file = onnx::read_model(a.model);
  const auto& g = file.proto().graph();
  // Device and stage columns when the model is sharded.
  const bool sharded = onnx::has_annotations(g);
  const sharding_result r = sharded ? onnx::read_annotations(g) : sharding_result();
  const auto value = [](std::optional<int> v) { return v ? std::to_string(*v) : "-"; };
  for (int v = 0; v < g.node_size(); ++v) {
    const auto& n = g.node(v);
    if (!a.grep.empty() && !std::regex_search(n.name(), re) &&
        !std::regex_search(n.op_type(), re)) {
      continue;
    }
    std::cout << v << '\t' << (n.name().empty() ? "<unnamed>" : n.name()) << '\t' << n.op_type()
              << '\t';
    if (sharded) {
      const auto i = static_cast<std::size_t>(v);
      std::cout << "device " << value(r.device(i)) << "\tstage " << value(r.stage(i)) << '\t';
    }
    std::cout << joined(n.input()) << " -> " << joined(n.output()) << '\n';
  }
  return exit_ok;
}

} // namespace

action add_inspect(CLI::App& app) {
  auto a = std::make_shared<inspect_options>();
  auto* cmd = app.add_subcommand("inspect", "List nodes: index, name, op type, [device, stage,] "
                                            "inputs -> outputs");
  cmd->add_option("model", a->model, "Model to list")->required();
  cmd->add_option("--grep", a->grep, "Only nodes whose name or op type matches REGEX");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
