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

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (const auto n : names) {
    out.append(out.empty() ? "" : ", ").append(io::printable(n));
  }
  return out;
}

std::vector<std::string> utf8(const std::vector<std::string_view>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto n : names) {
    out.push_back(io::utf8_escaped(n));
  }
  return out;
}

} // namespace

std::string inspect_model(const inspect_options& a, reading what) {
  // RE2: linear time in the name's length, no recursion, bounded memory, so
  // neither a long name nor a catastrophic pattern can stall or crash it.
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(a.grep, options);
  if (!re.ok()) {
    throw bad_parameter_error("--grep " + io::quote(a.grep) +
                              " is not a valid regular expression (RE2 syntax): " + re.error());
  }
  // The nodes as views into the model where it allows (a node graph of
  // views, #30): listing them parses nothing.
  auto file = load_model(a.model, a.data, what);
  // Device and stage columns when the model is sharded (read before any
  // node is named: an error names a node as the model has it).
  const bool sharded = onnx::has_annotations(file);
  const sharding_result r = sharded ? onnx::read_annotations(file) : sharding_result();
  // An unnamed node is listed by the name shard gives it (PopRT's
  // <op_type>_<index>), which --shard and configs take, in parentheses: it
  // is not in the model. (With a name on two nodes, which shard refuses,
  // none is given.) Naming parses the nodes; a model whose nodes are all
  // named is neither parsed nor hashed for it.
  bool any_unnamed = false;
  onnx::for_each_node(file, [&](std::size_t, const onnx::node_fields& n) {
    any_unnamed = any_unnamed || n.name.empty();
  });
  std::vector<std::size_t> named_here; // ascending
  try {
    if (any_unnamed) {
      named_here = onnx::assign_names(file, onnx::naming::rename_empty);
    }
  } catch (const bad_input_error&) {
  }
  const auto value = [](std::optional<int> v) { return v ? std::to_string(*v) : "-"; };
  const auto json_value = [](std::optional<int> v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  std::ostringstream table;
  // JSON: what nlohmann's dump(2) of the list of every node's object gives,
  // written an object at a time (a DOM of 10^6 objects took 1 GB and most
  // of the time): each object's own dump(2), indented one level.
  std::string json = "[";
  auto next_named = named_here.begin();
  onnx::for_each_node(file, [&](std::size_t i, const onnx::node_fields& n) {
    const bool given = next_named != named_here.end() && *next_named == i;
    next_named += given ? 1 : 0;
    if (!a.grep.empty() && !RE2::PartialMatch(n.name, re) && !RE2::PartialMatch(n.op_type, re)) {
      return;
    }
    if (a.report.format == "json") {
      nlohmann::json node = {{"index", i},
                             {"name", given ? std::string() : io::utf8_escaped(n.name)},
                             {"op_type", io::utf8_escaped(n.op_type)},
                             {"device", sharded ? json_value(r.device(i)) : nlohmann::json()},
                             {"stage", sharded ? json_value(r.stage(i)) : nlohmann::json()},
                             {"inputs", utf8(n.inputs)},
                             {"outputs", utf8(n.outputs)}};
      if (given) { // only there: a named node's dict is as it was
        node["shard_name"] = io::utf8_escaped(n.name);
      }
      json += json.size() == 1 ? "\n  " : ",\n  ";
      for (const char c : node.dump(2)) { // no line break inside a JSON string
        json += c;
        if (c == '\n') {
          json += "  ";
        }
      }
      return;
    }
    table << i << '\t'
          << io::printable(given ? "(" + std::string(n.name) + ")" : onnx::node_name(file, i))
          << '\t' << io::printable(n.op_type) << '\t';
    if (sharded) {
      table << "device " << value(r.device(i)) << "\tstage " << value(r.stage(i)) << '\t';
    }
    table << joined(n.inputs) << " -> " << joined(n.outputs) << '\n';
  });
  return a.report.format == "json" ? json + (json.size() == 1 ? "]\n" : "\n]\n") : table.str();
}

} // namespace shardpoint::app
