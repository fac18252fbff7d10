// What each pipeline stage of an ONNX model holds, for the memory planner.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/detail/checked.hpp>
#include <shardpoint/onnx/memory.hpp>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/detail/text.hpp>

#include "shapes.hpp"

namespace shardpoint::onnx {

namespace {

// Sets the symbolic batch dimension of the graph inputs to B for as long as
// it lives, and puts the inputs back as they were.
class batch_override {
public:
  batch_override(::onnx::GraphProto& g, std::int64_t batch) : graph_(g) {
    std::unordered_set<std::string_view> initializers;
    for (const auto& t : g.initializer()) {
      initializers.insert(t.name());
    }
    for (int i = 0; i < g.input_size(); ++i) {
      auto& input = *g.mutable_input(i);
      if (initializers.count(input.name()) || !input.type().has_tensor_type() ||
          !input.type().tensor_type().has_shape() ||
          input.type().tensor_type().shape().dim_size() == 0) {
        continue;
      }
      auto& dim = *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
      if (dim.has_dim_value() && dim.dim_value() > 0) {
        fixed_.emplace_back(input.name(), dim.dim_value());
        continue;
      }
      saved_.emplace_back(i, dim);
      dim.Clear();
      dim.set_dim_value(batch);
    }
  }
  batch_override(const batch_override&) = delete;
  batch_override& operator=(const batch_override&) = delete;
  ~batch_override() {
    for (auto& [i, dim] : saved_) {
      graph_.mutable_input(i)
          ->mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(0)
          ->Swap(&dim);
    }
  }

  [[nodiscard]] bool any_symbolic() const { return !saved_.empty(); }
  /// Inputs whose batch is a number: (name, batch).
  [[nodiscard]] const std::vector<std::pair<std::string, std::int64_t>>& fixed() const {
    return fixed_;
  }

private:
  ::onnx::GraphProto& graph_;
  std::vector<std::pair<int, ::onnx::TensorShapeProto_Dimension>> saved_;
  std::vector<std::pair<std::string, std::int64_t>> fixed_;
};

} // namespace

std::vector<std::int64_t> activation_bytes(::onnx::ModelProto& model, const node_graph& nodes,
                                           std::int64_t micro_batch_size,
                                           std::vector<std::string>& notes,
                                           const input_sizes* sizes, guesses* guessed) {
  if (micro_batch_size < 1) {
    throw bad_parameter_error(detail::cat(
        "shardpoint: the micro-batch size must be a positive integer, not ", micro_batch_size));
  }
  const auto n = static_cast<std::size_t>(model.graph().node_size());
  std::vector<std::int64_t> out(n, 0);
  std::int64_t scale_num = 1;
  std::int64_t scale_den = 1;
  // The user's sizes first: a batch dimension they set is not the micro-batch's.
  const shapes::sized_inputs sized(model, sizes);
  const batch_override batch(*model.mutable_graph(), micro_batch_size);
  if (!batch.any_symbolic() && !batch.fixed().empty()) {
    const auto& [name, b] = batch.fixed().front();
    if (b != micro_batch_size) {
      scale_num = micro_batch_size;
      scale_den = b;
      notes.push_back(detail::cat("input '", name, "' has a fixed batch of ", b,
                                  ": activations measured at ", b, " and scaled by ",
                                  micro_batch_size, "/", b));
    }
  }
  std::size_t unknown = 0;
  std::set<std::size_t> guessed_nodes;
  {
    const shapes::inferred_shapes types(model, sized.active());
    for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
      const auto p = nodes.producer[t];
      if (p == node_graph::no_producer) {
        continue;
      }
      // A Constant's value is a weight, held once, not per micro-batch.
      const auto& producer = model.graph().node(static_cast<int>(p));
      if (producer.op_type() == "Constant" && producer.domain().empty()) {
        continue;
      }
      const auto* type = types.find(nodes.tensors[t]);
      const auto b = type ? shapes::value_bytes(*type) : std::nullopt;
      if (!b) {
        ++unknown;
        continue;
      }
      if (guessed != nullptr && !b->per.empty()) { // symbolic dimensions counted as 1
        guessed_nodes.insert(p);
        for (std::size_t at = 0; at <= b->per.size();) {
          const auto star = std::min(b->per.find('*', at), b->per.size());
          guessed->symbols.insert(b->per.substr(at, star - at));
          at = star + 1;
        }
      }
      // b->bytes * num / den, rounded up; past 2^62 bytes refused.
      const auto product = detail::checked_mul(b->bytes, scale_num);
      const auto rounded = product ? detail::checked_add(*product, scale_den - 1) : std::nullopt;
      const auto sum = rounded ? detail::checked_add(out[p], *rounded / scale_den) : std::nullopt;
      if (!sum) {
        throw bad_parameter_error(detail::cat("shardpoint: the activations of node ", p,
                                              " at a micro-batch size of ", micro_batch_size,
                                              " would be more than 2^62 bytes"));
      }
      out[p] = *sum;
    }
  }
  if (guessed != nullptr) {
    guessed->bytes_nodes = guessed_nodes.size();
  }
  if (unknown > 0) {
    notes.push_back(detail::cat(unknown, " node output", unknown == 1 ? " has" : "s have",
                                " no shape ONNX shape inference can find; counted as 0 bytes"));
  }
  return out;
}

parameter_uses parameter_uses_of(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                 const std::vector<weight_decision>& decisions) {
  parameter_uses uses;
  const auto add = [&](std::int64_t elements, std::int64_t parts, int type) {
    uses.tensors.push_back(
        {elements, parts, shapes::element_size(type), shapes::is_floating(type)});
    return static_cast<std::uint32_t>(uses.tensors.size() - 1);
  };
  std::unordered_map<std::string_view, std::uint32_t> index;
  for (const auto& d : decisions) {
    std::int64_t elements = 1;
    for (auto x : d.shape) {
      elements *= x;
    }
    std::int64_t parts = 1;
    for (auto x : d.shard) {
      parts *= x;
    }
    index.emplace(d.name, add(elements, parts, d.onnx_type));
  }
  const shapes::model_weights weights = shapes::weights_of(graph, nodes);
  std::vector<std::uint32_t> constant(nodes.tensors.size(), UINT32_MAX);
  for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
    const auto& w = weights.tensors[t];
    if (w.constant && w.bytes >= 0) {
      constant[t] = add(w.elements, 1, w.onnx_type);
    }
  }
  const std::size_t n = nodes.read_offsets.empty() ? 0 : nodes.read_offsets.size() - 1;
  uses.used.resize(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (auto t : nodes.reads(v)) {
      if (const auto it = index.find(nodes.tensors[t]); it != index.end()) {
        uses.used[v].push_back(it->second);
      } else if (constant[t] != UINT32_MAX) {
        uses.used[v].push_back(constant[t]);
      }
    }
    for (const auto& w : weights.held[v]) {
      uses.used[v].push_back(add(w.elements, 1, w.onnx_type));
    }
  }
  return uses;
}

model_memory measure_memory(::onnx::ModelProto& model, const node_graph& nodes,
                            const sharding_result& stages,
                            const std::vector<weight_decision>& decisions,
                            std::int64_t micro_batch_size) {
  model_memory out;
  const auto produced = activation_bytes(model, nodes, micro_batch_size, out.notes);
  const auto index = get(boost::vertex_index, nodes.graph);
  out.stages =
      stage_memory_inputs(nodes.graph, stages, parameter_uses_of(model.graph(), nodes, decisions),
                          boost::make_iterator_property_map(produced.begin(), index));
  return out;
}

} // namespace shardpoint::onnx
