// Helpers shared by the synthetic model generators (internal).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SYNTH_SUPPORT_HPP
#define SHARDPOINT_ONNX_SYNTH_SUPPORT_HPP

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace shardpoint::onnx::synth {

/// A new model's header: its IR version, producer, the default domain's
/// opset and the graph's name; returns the graph.
inline ::onnx::GraphProto& start_model(::onnx::ModelProto& model, std::int64_t ir_version,
                                       const std::string& producer, std::int64_t opset,
                                       const std::string& graph_name) {
  model.set_ir_version(ir_version);
  model.set_producer_name(producer);
  auto& o = *model.add_opset_import();
  o.set_domain("");
  o.set_version(opset);
  auto& g = *model.mutable_graph();
  g.set_name(graph_name);
  return g;
}

/// A node whose single output has the node's name.
inline ::onnx::NodeProto& add_node(::onnx::GraphProto& g, const std::string& name,
                                   const std::string& type,
                                   const std::vector<std::string>& inputs) {
  auto& n = *g.add_node();
  n.set_name(name);
  n.set_op_type(type);
  for (const auto& i : inputs) {
    n.add_input(i);
  }
  n.add_output(name);
  return n;
}

/// A FLOAT initializer filled with a deterministic pattern in
/// [-amplitude, amplitude): not trained values, but not all equal either.
inline void add_weight(::onnx::GraphProto& g, const std::string& name,
                       const std::vector<std::int64_t>& dims, float amplitude, std::int64_t seed) {
  auto& t = *g.add_initializer();
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::FLOAT);
  std::int64_t count = 1;
  for (auto d : dims) {
    t.add_dims(d);
    count *= d;
  }
  std::string raw(static_cast<std::size_t>(count) * 4, '\0');
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = amplitude * std::sin(static_cast<float>(i + seed) * 0.618034F);
    std::memcpy(raw.data() + i * 4, &v, 4);
  }
  t.set_raw_data(std::move(raw));
}

/// A FLOAT tensor value; a negative dimension is the symbolic "N".
inline void set_value(::onnx::ValueInfoProto& v, const std::string& name,
                      const std::vector<std::int64_t>& dims) {
  v.set_name(name);
  auto& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(::onnx::TensorProto::FLOAT);
  for (auto d : dims) {
    auto& dim = *t.mutable_shape()->add_dim();
    if (d < 0) {
      dim.set_dim_param("N");
    } else {
      dim.set_dim_value(d);
    }
  }
}

inline void add_ints(::onnx::NodeProto& n, const char* name, const std::vector<std::int64_t>& v) {
  auto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::INTS);
  for (auto x : v) {
    a.add_ints(x);
  }
}

inline void add_int(::onnx::NodeProto& n, const char* name, std::int64_t v) {
  auto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::INT);
  a.set_i(v);
}

inline void add_float(::onnx::NodeProto& n, const char* name, float v) {
  auto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::FLOAT);
  a.set_f(v);
}

} // namespace shardpoint::onnx::synth

#endif
