// The report printed after sharding: groups, parameter bytes, crossings.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <onnx/shape_inference/implementation.h>

#include <shardpoint/onnx/adapter.hpp>

namespace shardpoint::onnx {

namespace {

std::int64_t element_size(int type) {
  using T = ::onnx::TensorProto;
  switch (type) {
  case T::UINT8:
  case T::INT8:
  case T::BOOL:
    return 1;
  case T::UINT16:
  case T::INT16:
  case T::FLOAT16:
  case T::BFLOAT16:
    return 2;
  case T::FLOAT:
  case T::INT32:
  case T::UINT32:
    return 4;
  case T::DOUBLE:
  case T::INT64:
  case T::UINT64:
  case T::COMPLEX64:
    return 8;
  case T::COMPLEX128:
    return 16;
  default:
    return 0; // strings and unknown types: no fixed size
  }
}

std::int64_t tensor_bytes(const ::onnx::TensorProto& t) {
  std::int64_t count = 1;
  for (auto d : t.dims()) {
    count *= d;
  }
  return count * element_size(t.data_type());
}

struct sized {
  std::int64_t bytes = 0;
  std::string per; // symbolic dimensions, counted as 1
};

std::optional<sized> value_bytes(const ::onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) {
    return std::nullopt;
  }
  const auto size = element_size(type.tensor_type().elem_type());
  if (size == 0) {
    return std::nullopt;
  }
  sized out{size, ""};
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      out.bytes *= d.dim_value();
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      out.per += (out.per.empty() ? "" : "*") + d.dim_param();
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// Runs ONNX shape inference on `model` itself, not on a copy (copying 10^5
// nodes costs as much as inferring their shapes), and puts the model back as
// it was on destruction. InferShapes writes in two places: it appends to and
// refines `value_info`, and it refines graph outputs, in the main graph and in
// every subgraph it enters. Both are saved for every graph beforehand and
// swapped back afterwards; nothing else is touched (the round trip of every
// model in the tests checks this byte for byte).
class inferred_shapes {
public:
  explicit inferred_shapes(::onnx::ModelProto& model) {
    std::vector<::onnx::GraphProto*> pending{model.mutable_graph()};
    while (!pending.empty()) {
      auto* g = pending.back();
      pending.pop_back();
      saved_.push_back({g, g->value_info(), g->output()});
      for (auto& n : *g->mutable_node()) {
        for (auto& a : *n.mutable_attribute()) {
          if (a.has_g()) {
            pending.push_back(a.mutable_g());
          }
          for (auto& sub : *a.mutable_graphs()) {
            pending.push_back(&sub);
          }
        }
      }
    }
    try {
      ::onnx::shape_inference::InferShapes(model);
    } catch (const std::exception&) {
      // Partial or no shapes: sizes stay unknown where inference stopped.
    }
    const auto& g = model.graph();
    const auto note = [&](const ::onnx::ValueInfoProto& v) {
      if (v.has_type()) {
        types_[v.name()] = &v.type();
      }
    };
    for (const auto& v : g.input()) {
      note(v);
    }
    for (const auto& v : g.value_info()) {
      note(v);
    }
    for (const auto& v : g.output()) {
      note(v);
    }
    for (const auto& t : g.initializer()) { // replaces, as ir 3 lists them as inputs too
      auto& type = initializer_types_.emplace_back();
      type.mutable_tensor_type()->set_elem_type(t.data_type());
      auto& shape = *type.mutable_tensor_type()->mutable_shape();
      for (auto d : t.dims()) {
        shape.add_dim()->set_dim_value(d);
      }
      types_[t.name()] = &type;
    }
  }

  inferred_shapes(const inferred_shapes&) = delete;
  inferred_shapes& operator=(const inferred_shapes&) = delete;

  ~inferred_shapes() {
    for (auto& s : saved_) {
      s.graph->mutable_value_info()->Swap(&s.value_info);
      s.graph->mutable_output()->Swap(&s.output);
    }
  }

  /// The type of a top-level tensor, or nullptr when inference found none.
  /// Valid while *this lives.
  const ::onnx::TypeProto* find(std::string_view name) const {
    const auto it = types_.find(name);
    return it == types_.end() ? nullptr : it->second;
  }

private:
  struct saved_graph {
    ::onnx::GraphProto* graph;
    google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> value_info;
    google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> output;
  };
  std::vector<saved_graph> saved_;
  std::unordered_map<std::string_view, const ::onnx::TypeProto*> types_;
  std::deque<::onnx::TypeProto> initializer_types_;
};

// Dimensions with symbolic ones as 1; nothing when the shape is unknown.
std::optional<std::vector<std::int64_t>> dims_of(const inferred_shapes& types,
                                                 std::string_view name) {
  const auto* type = types.find(name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return std::nullopt;
  }
  std::vector<std::int64_t> dims;
  for (const auto& d : type->tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : 1);
  }
  return dims;
}

std::string human(std::int64_t bytes) {
  char buf[64];
  if (bytes >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  }
  return buf;
}

std::string opt(int v) {
  return v < 0 ? "-" : std::to_string(v);
}

} // namespace

report make_report(::onnx::ModelProto& model, const node_graph& nodes,
                   const sharding_result& result, std::vector<diagnostic> diagnostics) {
  const auto& g = model.graph();
  report r;
  r.diagnostics = std::move(diagnostics);
  // Bytes of every tensor that is an initializer, by tensor index.
  std::vector<std::int64_t> initializer_bytes(nodes.tensors.size(), -1);
  {
    std::unordered_map<std::string_view, std::int64_t> by_name;
    for (const auto& t : g.initializer()) {
      by_name.emplace(t.name(), tensor_bytes(t));
    }
    if (!by_name.empty()) {
      for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
        if (const auto it = by_name.find(nodes.tensors[t]); it != by_name.end()) {
          initializer_bytes[t] = it->second;
        }
      }
    }
  }
  std::map<std::pair<int, int>, std::pair<std::size_t, std::vector<std::uint32_t>>> groups;
  for (std::size_t v = 0; v < result.size(); ++v) {
    auto& [count, params] = groups[{result.device(v).value_or(-1), result.stage(v).value_or(-1)}];
    ++count;
    for (auto t : nodes.reads(v)) {
      if (initializer_bytes[t] >= 0) {
        params.push_back(t);
      }
    }
  }
  for (auto& [key, group] : groups) {
    auto& params = group.second;
    std::sort(params.begin(), params.end());
    params.erase(std::unique(params.begin(), params.end()), params.end());
    group_report gr{key.first, key.second, group.first, 0};
    for (auto t : params) {
      gr.parameter_bytes += initializer_bytes[t];
    }
    r.groups.push_back(gr);
  }

  r.boundary = result.has_stages() ? "stage" : "device";
  const auto side = [&](std::size_t v) {
    return (result.has_stages() ? result.stage(v) : result.device(v)).value_or(-1);
  };
  std::set<std::tuple<int, int, std::string_view>> crossings;
  for (std::size_t v = 0; v < result.size(); ++v) {
    for (auto t : nodes.reads(v)) {
      const auto p = nodes.producer[t];
      if (p != node_graph::no_producer && side(p) != side(v)) {
        crossings.emplace(side(p), side(v), nodes.tensors[t]);
      }
    }
  }
  if (!crossings.empty()) {
    const inferred_shapes types(model);
    for (const auto& [from, to, name] : crossings) {
      crossing_tensor c{std::string(name), from, to, std::nullopt, ""};
      if (const auto* type = types.find(name)) {
        if (const auto b = value_bytes(*type)) {
          c.bytes = b->bytes;
          c.per = b->per;
        }
      }
      r.crossings.push_back(std::move(c));
    }
  }
  return r;
}

std::vector<std::int64_t> estimate_costs(::onnx::ModelProto& model, cost_model how) {
  const auto& g = model.graph();
  std::vector<std::int64_t> costs(static_cast<std::size_t>(g.node_size()), 1);
  if (how == cost_model::unit) {
    return costs;
  }
  const inferred_shapes types(model);
  for (int v = 0; v < g.node_size(); ++v) {
    const auto& n = g.node(v);
    if (n.output_size() == 0) {
      continue;
    }
    const auto out = dims_of(types, n.output(0));
    if (!out) {
      continue;
    }
    double flops = 1;
    for (auto d : *out) {
      flops *= static_cast<double>(d);
    }
    const auto in0 = n.input_size() > 0 ? dims_of(types, n.input(0)) : std::nullopt;
    const auto in1 = n.input_size() > 1 ? dims_of(types, n.input(1)) : std::nullopt;
    if ((n.op_type() == "MatMul" || n.op_type() == "Gemm") && in0 && !in0->empty()) {
      bool trans_a = false;
      for (const auto& a : n.attribute()) {
        trans_a = trans_a || (a.name() == "transA" && a.i() != 0);
      }
      const auto k = trans_a && in0->size() >= 2 ? (*in0)[in0->size() - 2] : in0->back();
      flops *= 2.0 * static_cast<double>(k);
    } else if ((n.op_type() == "Conv" || n.op_type() == "ConvTranspose") && in1 &&
               in1->size() >= 2) {
      double per_output = 1; // weight dims: [out, in / group, kh, kw, ...]
      for (std::size_t i = 1; i < in1->size(); ++i) {
        per_output *= static_cast<double>((*in1)[i]);
      }
      flops *= 2.0 * per_output;
    }
    costs[static_cast<std::size_t>(v)] =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(flops / 1e6)));
  }
  return costs;
}

std::string to_table(const report& r) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %-8s %8s  %s\n", "device", "stage", "nodes", "parameters");
  os << line;
  for (const auto& g : r.groups) {
    std::snprintf(line, sizeof line, "%-8s %-8s %8zu  %s (%lld bytes)\n", opt(g.device).c_str(),
                  opt(g.stage).c_str(), g.nodes, human(g.parameter_bytes).c_str(),
                  static_cast<long long>(g.parameter_bytes));
    os << line;
  }
  os << "\ntensors crossing " << r.boundary << " boundaries: " << r.crossings.size() << '\n';
  for (const auto& c : r.crossings) {
    os << "  " << r.boundary << ' ' << opt(c.from) << " -> " << opt(c.to) << "  " << c.name << "  "
       << (c.bytes ? human(*c.bytes) + " (" + std::to_string(*c.bytes) + " bytes" +
                         (c.per.empty() ? ")" : " per " + c.per + ")")
                   : std::string("size unknown"))
       << '\n';
  }
  os << "\nvalidation: ";
  if (r.diagnostics.empty()) {
    os << "no problems\n";
  } else {
    os << r.diagnostics.size() << " finding(s)\n";
    for (const auto& d : r.diagnostics) {
      os << "  " << to_string(d.severity) << " [" << to_string(d.rule) << "] " << d.message << '\n';
    }
  }
  return os.str();
}

std::string to_json(const report& r) {
  nlohmann::json j;
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups) {
    j["groups"].push_back({{"device", g.device < 0 ? nlohmann::json() : nlohmann::json(g.device)},
                           {"stage", g.stage < 0 ? nlohmann::json() : nlohmann::json(g.stage)},
                           {"nodes", g.nodes},
                           {"parameter_bytes", g.parameter_bytes}});
  }
  j["boundary"] = r.boundary;
  j["crossings"] = nlohmann::json::array();
  for (const auto& c : r.crossings) {
    j["crossings"].push_back({{"tensor", c.name},
                              {"from", c.from},
                              {"to", c.to},
                              {"bytes", c.bytes ? nlohmann::json(*c.bytes) : nlohmann::json()},
                              {"per", c.per}});
  }
  j["diagnostics"] = nlohmann::json::array();
  for (const auto& d : r.diagnostics) {
    j["diagnostics"].push_back({{"severity", std::string(to_string(d.severity))},
                                {"rule", std::string(to_string(d.rule))},
                                {"message", d.message},
                                {"nodes", d.vertices}});
  }
  return j.dump(2) + "\n";
}

} // namespace shardpoint::onnx
