// What each node costs: compute, parameter bytes, output bytes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/error.hpp>
#include <shardpoint/onnx/costs.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/memory.hpp>
#include <shardpoint/onnx/tensor_data.hpp>

#include "chunks.hpp"
#include "graph_nodes.hpp"
#include "infer.hpp"
#include "node_view.hpp"
#include "shapes.hpp"

namespace shardpoint::onnx {

using shapes::dims_of;
using shapes::inferred_shapes;

namespace {

// Whether the FLOPs of `n` rest on a shape that is unknown or symbolic:
// its output's, and the input its op type's count reads.
// `io`: the types of its output 0 and inputs 0 and 1 (where it has them).
bool cost_is_guess(std::string_view op_type, std::size_t inputs, const ::onnx::TypeProto* const* io,
                   std::set<std::string>& symbols) {
  bool guess = shapes::has_free_dims(io[0], symbols);
  if ((op_type == "MatMul" || op_type == "Gemm") && inputs > 0) {
    guess = shapes::has_free_dims(io[1], symbols) || guess;
  } else if ((op_type == "Conv" || op_type == "ConvTranspose") && inputs > 1) {
    guess = shapes::has_free_dims(io[2], symbols) || guess;
  }
  return guess;
}

template <class Nodes>
std::int64_t mflops_of(const Nodes& nodes, std::size_t v, double flops);

// MFLOPs of node v (at least 1) from the shapes inference found (see
// cost_model); `guessed`, when given, takes it when its count is a guess.
// (`nodes`: graph_nodes.hpp's.)
template <class Nodes>
std::int64_t flops_cost(const Nodes& nodes, const inferred_shapes& types, std::size_t v,
                        guesses* guessed) {
  if (nodes.outputs(v).size() == 0) {
    return 1;
  }
  const std::string_view op_type = nodes.op_type(v);
  const auto inputs = static_cast<std::size_t>(nodes.inputs(v).size());
  // The types of its output 0 and inputs 0 and 1 (where it has them).
  const ::onnx::TypeProto* const io[3] = {types.output_type(v, 0),
                                          inputs > 0 ? types.input_type(v, 0) : nullptr,
                                          inputs > 1 ? types.input_type(v, 1) : nullptr};
  if (guessed != nullptr && cost_is_guess(op_type, inputs, io, guessed->symbols)) {
    ++guessed->cost_nodes;
  }
  if (guessed != nullptr && nodes.subgraphs(v)) {
    ++guessed->body_nodes;
  }
  const auto out = dims_of(io[0]);
  if (!out) {
    return 1;
  }
  double flops = 1;
  for (auto d : *out) {
    flops *= static_cast<double>(d);
  }
  const bool matmul = op_type == "MatMul" || op_type == "Gemm";
  const bool conv = op_type == "Conv" || op_type == "ConvTranspose";
  if (!matmul && !conv) {
    return mflops_of(nodes, v, flops); // (one per output element)
  }
  const auto in0 = inputs > 0 ? dims_of(io[1]) : std::nullopt;
  const auto in1 = inputs > 1 ? dims_of(io[2]) : std::nullopt;
  if (matmul && in0 && !in0->empty()) {
    bool trans_a = false;
    if (op_type == "Gemm") {     // (MatMul has no attributes)
      ::onnx::NodeProto scratch; // (a view's node, parsed)
      for (const auto& a : nodes.node(v, scratch).attribute()) {
        trans_a = trans_a || (a.name() == "transA" && a.i() != 0);
      }
    }
    const auto k = trans_a && in0->size() >= 2 ? (*in0)[in0->size() - 2] : in0->back();
    flops *= 2.0 * static_cast<double>(k);
  } else if (conv && in1 && in1->size() >= 2) {
    // Weight dims: Conv [out, in / group, k...], a multiply-add per output
    // element and weight column; ConvTranspose [in, out / group, k...], one
    // per input element and weight row.
    double per_element = 1;
    for (std::size_t i = 1; i < in1->size(); ++i) {
      per_element *= static_cast<double>((*in1)[i]);
    }
    if (op_type == "ConvTranspose") {
      if (!in0) {
        return 1; // (an input of unknown shape: 1, as any unknown)
      }
      flops = 1;
      for (auto d : *in0) {
        flops *= static_cast<double>(d);
      }
    }
    flops *= 2.0 * per_element;
  }
  return mflops_of(nodes, v, flops);
}

// `flops` of node v in whole MFLOPs, at least 1. A count no machine
// reaches (dims a model declares, up to 2^63 each) is bad input, not a
// number cast out of range; NaN and inf too.
template <class Nodes>
std::int64_t mflops_of(const Nodes& nodes, std::size_t v, double flops) {
  const double mflops = std::ceil(flops / 1e6);
  if (!(mflops < 0x1p62)) {
    throw bad_input_error(
        label_of(nodes, v) + ": its shapes make " +
        (std::isnan(mflops) ? std::string("an undefined number of") : "more than 4.6e24") +
        " floating-point operations; check the dimensions the model declares");
  }
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(mflops));
}

// A chunk's guesses added to `into`.
void add_guesses(guesses& into, guesses&& chunk) {
  into.cost_nodes += chunk.cost_nodes;
  into.body_nodes += chunk.body_nodes;
  into.bytes_nodes += chunk.bytes_nodes;
  into.symbols.merge(chunk.symbols);
}

// flops_cost of every node, in chunks side by side (a pass over every
// node's types, a tenth of `suggest` at 10^6 nodes on one core). The error
// is the first node's in order, as one pass would throw it.
template <class Nodes>
std::vector<std::int64_t> flops_costs(const Nodes& nodes, const inferred_shapes& types,
                                      guesses* guessed = nullptr) {
  const auto n = nodes.size();
  std::vector<std::int64_t> costs(n, 1);
  std::vector<guesses> chunks(chunk_count(n));
  in_chunks(n, [&](std::size_t chunk, std::size_t from, std::size_t to) {
    for (std::size_t v = from; v < to; ++v) {
      costs[v] = flops_cost(nodes, types, v, guessed != nullptr ? &chunks[chunk] : nullptr);
    }
  });
  if (guessed != nullptr) {
    for (auto& c : chunks) {
      add_guesses(*guessed, std::move(c));
    }
  }
  return costs;
}

// The bytes of the weights each node reads or holds (an initializer or
// Constant value read by several nodes counts in each).
std::vector<std::int64_t> parameter_bytes(const node_graph& nodes,
                                          const shapes::model_weights& weights) {
  const std::size_t n = nodes.read_offsets.empty() ? 0 : nodes.read_offsets.size() - 1;
  std::vector<std::int64_t> out(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    std::int64_t bytes = weights.held_bytes(v);
    for (auto t : nodes.reads(v)) {
      bytes = detail::checked_add(bytes, std::max<std::int64_t>(0, weights.tensors[t].bytes))
                  .value_or(INT64_MAX);
    }
    out[v] = bytes;
  }
  return out;
}

} // namespace

std::vector<std::int64_t> estimate_costs(::onnx::ModelProto& model, cost_model how,
                                         guesses* guessed, const input_sizes* sizes) {
  const shapes::sized_inputs sized(model, sizes); // checked whatever the costs need
  const auto& g = model.graph();
  if (how == cost_model::unit) {
    return std::vector<std::int64_t>(static_cast<std::size_t>(g.node_size()), 1);
  }
  if (how == cost_model::params) {
    const node_graph nodes = build_graph(g);
    auto costs = parameter_bytes(nodes, shapes::weights_of(g, nodes));
    for (auto& c : costs) {
      c = std::max<std::int64_t>(c, 1);
    }
    return costs;
  }
  const inferred_shapes types(model, sized.active());
  return flops_costs(proto_nodes{g}, types, guessed);
}

std::vector<std::int64_t> estimate_costs(loaded_model& model, cost_model how, guesses* guessed,
                                         const input_sizes* sizes) {
  const wire::node_views* views = shapes::inferable_views(model, sizes);
  if (views == nullptr) {
    return estimate_costs(model.proto(), how, guessed, sizes);
  }
  // As measure_nodes(loaded_model&): on the views, nothing parsed.
  const view_nodes nodes{*views};
  const auto& skeleton = model.proto_without_nodes();
  if (how == cost_model::unit) {
    return std::vector<std::int64_t>(nodes.size(), 1);
  }
  if (how == cost_model::params) {
    const node_graph graph = build_graph(model);
    auto costs = parameter_bytes(graph, shapes::weights_of(*views, skeleton.graph(), graph));
    for (auto& c : costs) {
      c = std::max<std::int64_t>(c, 1);
    }
    return costs;
  }
  const inferred_shapes types(skeleton, *views, std::function<void()>());
  return flops_costs(nodes, types, guessed);
}

node_weights measure_nodes(::onnx::ModelProto& model, const node_graph& nodes, cost_model how,
                           const input_sizes* sizes) {
  return measure_nodes(
      model, [&]() -> const node_graph& { return nodes; }, how, sizes);
}

namespace {

// measure_nodes on `graph_nodes` (graph_nodes.hpp), the nodes of `g` (or
// views, `g` then the skeleton's graph, without them), with the shapes
// `infer(unshaped)` gives, running `unshaped` beside it where it can.
template <class Nodes, class Infer>
node_weights measure_on(const Nodes& graph_nodes, const ::onnx::GraphProto& g, Infer infer,
                        const std::function<const node_graph&()>& graph_of, cost_model how) {
  const auto n = graph_nodes.size();
  node_weights w;
  // The node graph, the weights, and which outputs some other node reads
  // (each sized once): what does not need the shapes.
  std::vector<bool> read;
  const auto unshaped = [&] {
    const node_graph& nodes = graph_of();
    read.assign(nodes.tensors.size(), false);
    shapes::model_weights weights;
    if constexpr (std::is_same_v<Nodes, view_nodes>) {
      weights = shapes::weights_of(graph_nodes.w, g, nodes);
      w.made_from_shapes = tensors_made_from_shapes(graph_nodes.w, g);
    } else {
      weights = shapes::weights_of(g, nodes);
      w.made_from_shapes = tensors_made_from_shapes(g);
    }
    w.initializer_bytes = weights.tensor_bytes();
    w.unsized_weights = weights.unsized();
    w.held_bytes.resize(n);
    for (std::size_t v = 0; v < n; ++v) {
      w.held_bytes[v] = weights.held_bytes(v);
    }
    w.parameter_bytes = parameter_bytes(nodes, weights);
    for (std::size_t v = 0; v < n; ++v) {
      for (auto t : nodes.reads(v)) {
        if (nodes.producer[t] != v) {
          read[t] = true;
        }
      }
    }
  };
  // Shape inference is the longest step and runs node after node: the rest
  // runs beside it on another core where it can.
  const auto types_made = infer(unshaped); // (a pointer: inferred_shapes does not move)
  const inferred_shapes& types = *types_made;
  const node_graph& nodes = graph_of();
  if (how == cost_model::flops) {
    w.cost = flops_costs(graph_nodes, types, &w.guessed);
  } else if (how == cost_model::params) {
    w.cost = w.parameter_bytes;
    for (auto& c : w.cost) {
      c = std::max<std::int64_t>(c, 1);
    }
  } else {
    w.cost.assign(n, 1);
  }
  // Each read tensor's bytes (-1: unknown) and whether they are a guess,
  // in chunks side by side; then added up by producer, in order.
  const std::size_t tensors = nodes.tensors.size();
  std::vector<std::int64_t> bytes(tensors, -1);
  std::vector<char> guess(tensors, 0);
  std::vector<guesses> chunks(chunk_count(tensors));
  in_chunks(tensors, [&](std::size_t chunk, std::size_t from, std::size_t to) {
    for (std::size_t t = from; t < to; ++t) {
      if (nodes.producer[t] == node_graph::no_producer || !read[t]) {
        continue;
      }
      const auto* type = types.produced_type(nodes, t);
      guess[t] = shapes::has_free_dims(type, chunks[chunk].symbols) ? 1 : 0;
      if (type != nullptr) {
        if (const auto b = shapes::value_byte_count(*type, nodes.tensors[t])) {
          bytes[t] = *b;
        }
      }
    }
  });
  for (auto& c : chunks) {
    add_guesses(w.guessed, std::move(c));
  }
  w.output_bytes.assign(n, 0);
  std::vector<bool> guessed_bytes(n, false);
  for (std::size_t t = 0; t < tensors; ++t) {
    const auto p = nodes.producer[t];
    if (p == node_graph::no_producer || !read[t]) {
      continue;
    }
    guessed_bytes[p] = guess[t] != 0 || guessed_bytes[p];
    if (bytes[t] >= 0) {
      w.output_bytes[p] += bytes[t];
    }
  }
  w.guessed.bytes_nodes =
      static_cast<std::size_t>(std::count(guessed_bytes.begin(), guessed_bytes.end(), true));
  return w;
}

} // namespace

node_weights measure_nodes(::onnx::ModelProto& model,
                           const std::function<const node_graph&()>& graph_of, cost_model how,
                           const input_sizes* sizes) {
  std::optional<shapes::sized_inputs> sized;
  try {
    sized.emplace(model, sizes);
  } catch (const shardpoint::error&) {
    graph_of(); // a model whose graph cannot be built is reported first
    throw;
  }
  const bool propagate = sized->active();
  return measure_on(
      proto_nodes{model.graph()}, model.graph(),
      [&](const std::function<void()>& unshaped) {
        return std::make_unique<inferred_shapes>(model, propagate, unshaped);
      },
      graph_of, how);
}

node_weights measure_nodes(loaded_model& model, const std::function<const node_graph&()>& graph_of,
                           cost_model how, const input_sizes* sizes) {
  const wire::node_views* views = shapes::inferable_views(model, sizes);
  if (views == nullptr) {
    return measure_nodes(model.proto(), graph_of, how, sizes); // parsed
  }
  // Nodes as views, initializers parsed (node_reading::views_with_initializers),
  // nothing sized, and shapes the views' inference finds: nothing is parsed.
  const auto& skeleton = model.proto_without_nodes();
  return measure_on(
      view_nodes{*views}, skeleton.graph(),
      [&](const std::function<void()>& unshaped) {
        return std::make_unique<inferred_shapes>(skeleton, *views, unshaped);
      },
      graph_of, how);
}

std::size_t unsized_weights(const ::onnx::GraphProto& g, const node_graph& nodes) {
  return shapes::weights_of(g, nodes).unsized();
}

memory_items parameter_items(const node_graph& nodes, const node_weights& weights) {
  memory_items items;
  std::vector<std::uint32_t> item_of(nodes.tensors.size(), UINT32_MAX);
  for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
    if (weights.initializer_bytes[t] >= 0) {
      item_of[t] = static_cast<std::uint32_t>(items.bytes.size());
      items.bytes.push_back(static_cast<double>(weights.initializer_bytes[t]));
    }
  }
  const std::size_t n = nodes.read_offsets.empty() ? 0 : nodes.read_offsets.size() - 1;
  items.used.resize(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (auto t : nodes.reads(v)) {
      if (item_of[t] != UINT32_MAX) {
        items.used[v].push_back(item_of[t]);
      }
    }
    if (v < weights.held_bytes.size() && weights.held_bytes[v] > 0) { // its own, used by it alone
      items.used[v].push_back(static_cast<std::uint32_t>(items.bytes.size()));
      items.bytes.push_back(static_cast<double>(weights.held_bytes[v]));
    }
  }
  return items;
}

void check_input_sizes(const loaded_model& model, const input_sizes& sizes) {
  if (sizes.empty()) {
    return;
  }
  // The inputs, and the initializers' names (an initializer listed as an
  // input, as IR 3 lists them, is not sized), in a model of their own.
  ::onnx::ModelProto inputs;
  auto& g = *inputs.mutable_graph();
  const auto* views = model.node_views();
  const auto& whole =
      views != nullptr ? model.proto_without_nodes().graph() : model.proto().graph();
  *g.mutable_input() = whole.input();
  if (views != nullptr && views->initializers_as_views) { // (not in `whole`)
    for (const std::string_view name : views->initializers) {
      g.add_initializer()->set_name(std::string(name));
    }
  } else {
    for (const auto& t : whole.initializer()) {
      g.add_initializer()->set_name(t.name());
    }
  }
  const shapes::sized_inputs check(inputs, &sizes);
}

} // namespace shardpoint::onnx
