// Sizes and shapes of a model's tensors.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <onnx/shape_inference/implementation.h>

#include <string_view>
#include <unordered_map>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/tensor_data.hpp>

#include "shapes.hpp"

namespace shardpoint::onnx::shapes {

std::int64_t element_size(int type) {
  return static_cast<std::int64_t>(element_bytes(type).value_or(0));
}

std::int64_t tensor_bytes(const ::onnx::TensorProto& t) {
  const auto bytes =
      detail::checked_mul(static_cast<std::int64_t>(element_count(t)), element_size(t.data_type()));
  if (!bytes) {
    throw input_error("tensor " + io::quote(t.name()) + ": its data would be more than 2^62 bytes");
  }
  return *bytes;
}

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
      const auto bytes = detail::checked_mul(out.bytes, d.dim_value());
      if (!bytes) {
        throw input_error("a tensor's shape (a dimension of " + std::to_string(d.dim_value()) +
                          ") makes it more than 2^62 bytes");
      }
      out.bytes = *bytes;
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      out.per += (out.per.empty() ? "" : "*") + d.dim_param();
    } else {
      return std::nullopt;
    }
  }
  return out;
}

inferred_shapes::inferred_shapes(::onnx::ModelProto& model) {
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

inferred_shapes::~inferred_shapes() {
  for (auto& s : saved_) {
    s.graph->mutable_value_info()->Swap(&s.value_info);
    s.graph->mutable_output()->Swap(&s.output);
  }
}

const ::onnx::TypeProto* inferred_shapes::find(std::string_view name) const {
  const auto it = types_.find(name);
  return it == types_.end() ? nullptr : it->second;
}

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

bool is_floating(int type) {
  using T = ::onnx::TensorProto;
  return type == T::FLOAT || type == T::FLOAT16 || type == T::BFLOAT16 || type == T::DOUBLE;
}

bool has_free_dims(const inferred_shapes& types, std::string_view name,
                   std::set<std::string>& symbols) {
  const auto* type = types.find(name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return true;
  }
  bool free = false;
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() <= 0) {
      free = true;
      if (d.has_dim_param() && !d.dim_param().empty()) {
        symbols.insert(d.dim_param());
      }
    }
  }
  return free;
}

std::vector<std::int64_t> initializer_sizes(const ::onnx::GraphProto& g, const node_graph& nodes) {
  std::vector<std::int64_t> bytes(nodes.tensors.size(), -1);
  std::unordered_map<std::string_view, std::int64_t> by_name;
  for (const auto& t : g.initializer()) {
    by_name.emplace(t.name(), shapes::tensor_bytes(t));
  }
  if (!by_name.empty()) {
    for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
      if (const auto it = by_name.find(nodes.tensors[t]); it != by_name.end()) {
        bytes[t] = it->second;
      }
    }
  }
  return bytes;
}

} // namespace shardpoint::onnx::shapes
