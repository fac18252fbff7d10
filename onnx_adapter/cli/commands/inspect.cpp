// shardpoint inspect: list a model's nodes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "api.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

std::string joined(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    out.append(out.empty() ? "" : ", ").append(n);
  }
  return out;
}

} // namespace

std::string inspect_model(const inspect_options& a) {
  std::regex re;
  try {
    re = std::regex(a.grep.empty() ? std::string(".*") : a.grep);
  } catch (const std::regex_error& e) {
    throw usage_error("--grep '" + a.grep + "' is not a valid regular expression: " + e.what());
  }
  const auto file = load_model(a.model, a.data, reading::graph);
  const auto& g = file.proto().graph();
  // Device and stage columns when the model is sharded.
  const bool sharded = onnx::has_annotations(g);
  const sharding_result r = sharded ? onnx::read_annotations(g) : sharding_result();
  const auto value = [](std::optional<int> v) { return v ? std::to_string(*v) : "-"; };
  const auto json_value = [](std::optional<int> v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  std::ostringstream table;
  auto list = nlohmann::json::array();
  for (int v = 0; v < g.node_size(); ++v) {
    const auto& n = g.node(v);
    if (!a.grep.empty() && !std::regex_search(n.name(), re) &&
        !std::regex_search(n.op_type(), re)) {
      continue;
    }
    const auto i = static_cast<std::size_t>(v);
    if (a.report.format == "json") {
      list.push_back({{"index", v},
                      {"name", n.name()},
                      {"op_type", n.op_type()},
                      {"device", sharded ? json_value(r.device(i)) : nlohmann::json()},
                      {"stage", sharded ? json_value(r.stage(i)) : nlohmann::json()},
                      {"inputs", std::vector<std::string>(n.input().begin(), n.input().end())},
                      {"outputs", std::vector<std::string>(n.output().begin(), n.output().end())}});
      continue;
    }
    table << v << '\t' << (n.name().empty() ? "<unnamed>" : n.name()) << '\t' << n.op_type()
          << '\t';
    if (sharded) {
      table << "device " << value(r.device(i)) << "\tstage " << value(r.stage(i)) << '\t';
    }
    table << joined(n.input()) << " -> " << joined(n.output()) << '\n';
  }
  return a.report.format == "json" ? list.dump(2) + "\n" : table.str();
}

namespace {

int run(const inspect_options& a) {
  std::cout << inspect_model(a);
  return exit_ok;
}

} // namespace

action add_inspect(CLI::App& app) {
  auto a = std::make_shared<inspect_options>();
  auto* cmd = app.add_subcommand("inspect", "List nodes: index, name, op type, [device, stage,] "
                                            "inputs -> outputs");
  cmd->add_option("model", a->model, "Model to list")->required();
  cmd->add_option("--grep", a->grep, "Only nodes whose name or op type matches REGEX");
  a->report.add_to(*cmd, {"table", "json"},
                   "table: a tab-separated line per node; json: a list of objects");
  return [a] { return run(*a); };
}

} // namespace shardpoint::cli
