// inspect: list a model's nodes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::app {

namespace {

std::string joined(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    out.append(out.empty() ? "" : ", ").append(io::printable(n));
  }
  return out;
}

std::vector<std::string> utf8(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    out.push_back(io::utf8_escaped(n));
  }
  return out;
}

} // namespace

std::string inspect_model(const inspect_options& a) {
  // RE2: linear time in the name's length, no recursion, bounded memory, so
  // neither a long name nor a catastrophic pattern can stall or crash it.
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(a.grep, options);
  if (!re.ok()) {
    throw bad_parameter_error("--grep " + io::quote(a.grep) +
                              " is not a valid regular expression (RE2 syntax): " + re.error());
  }
  auto file = load_model(a.model, a.data, reading::graph);
  auto& g = *file.proto().mutable_graph();
  // An unnamed node is listed by the name shard gives it (PopRT's
  // <op_type>_<index>), which --shard and configs take, in parentheses: it
  // is not in the model. (With a name on two nodes, which shard refuses,
  // none is given.)
  // (A model whose nodes are all named is not hashed for it.)
  std::vector<bool> named_here(static_cast<std::size_t>(g.node_size()), false);
  const bool any_unnamed = std::any_of(g.node().begin(), g.node().end(),
                                       [](const auto& node) { return node.name().empty(); });
  try {
    for (const std::size_t v : any_unnamed ? onnx::assign_names(g, onnx::naming::rename_empty)
                                           : std::vector<std::size_t>()) {
      named_here[v] = true;
    }
  } catch (const bad_input_error&) {
  }
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
    if (!a.grep.empty() && !RE2::PartialMatch(n.name(), re) &&
        !RE2::PartialMatch(n.op_type(), re)) {
      continue;
    }
    const auto i = static_cast<std::size_t>(v);
    if (a.report.format == "json") {
      list.push_back({{"index", v},
                      {"name", named_here[i] ? std::string() : io::utf8_escaped(n.name())},
                      {"op_type", io::utf8_escaped(n.op_type())},
                      {"device", sharded ? json_value(r.device(i)) : nlohmann::json()},
                      {"stage", sharded ? json_value(r.stage(i)) : nlohmann::json()},
                      {"inputs", utf8(n.input())},
                      {"outputs", utf8(n.output())}});
      if (named_here[i]) { // only there: a named node's dict is as it was
        list.back()["shard_name"] = io::utf8_escaped(n.name());
      }
      continue;
    }
    table << v << '\t'
          << io::printable(named_here[i] ? "(" + n.name() + ")" : onnx::node_name(g, i)) << '\t'
          << io::printable(n.op_type()) << '\t';
    if (sharded) {
      table << "device " << value(r.device(i)) << "\tstage " << value(r.stage(i)) << '\t';
    }
    table << joined(n.input()) << " -> " << joined(n.output()) << '\n';
  }
  return a.report.format == "json" ? list.dump(2) + "\n" : table.str();
}

} // namespace shardpoint::app
