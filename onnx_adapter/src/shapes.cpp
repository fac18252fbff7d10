// Sizes and shapes of a model's tensors.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <onnx/shape_inference/implementation.h>

#include <future>
#include <map>
#include <new>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/tensor_data.hpp>

#include "chunks.hpp"
#include "graph_nodes.hpp"
#include "infer.hpp"
#include "name_ids.hpp"
#include "node_view.hpp"
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

namespace {

// value_bytes, its symbolic dimensions into `per` when given.
std::optional<std::int64_t> bytes_of_value(const ::onnx::TypeProto& type, std::string_view tensor,
                                           std::string* per) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) {
    return std::nullopt;
  }
  const auto size = element_size(type.tensor_type().elem_type());
  if (size == 0) {
    return std::nullopt;
  }
  std::int64_t out = size;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      const auto bytes = detail::checked_mul(out, d.dim_value());
      if (!bytes) {
        throw input_error("tensor " + io::quote(tensor) + ": its shape (a dimension of " +
                          std::to_string(d.dim_value()) + ") makes it more than 2^62 bytes");
      }
      out = *bytes;
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      if (per != nullptr) {
        *per += (per->empty() ? "" : "*") + d.dim_param();
      }
    } else {
      return std::nullopt;
    }
  }
  return out;
}

} // namespace

std::optional<sized> value_bytes(const ::onnx::TypeProto& type, std::string_view tensor) {
  sized out;
  const auto bytes = bytes_of_value(type, tensor, &out.per);
  if (!bytes) {
    return std::nullopt;
  }
  out.bytes = *bytes;
  return out;
}

std::optional<std::int64_t> value_byte_count(const ::onnx::TypeProto& type,
                                             std::string_view tensor) {
  return bytes_of_value(type, tensor, nullptr);
}

namespace {

// The graph inputs that are not initializers (ir 3 lists those too).
std::vector<::onnx::ValueInfoProto*> true_inputs(::onnx::GraphProto& g) {
  std::unordered_set<std::string_view> initializers;
  for (const auto& t : g.initializer()) {
    initializers.insert(t.name());
  }
  std::vector<::onnx::ValueInfoProto*> out;
  for (auto& input : *g.mutable_input()) {
    if (!initializers.contains(input.name())) {
      out.push_back(&input);
    }
  }
  return out;
}

std::string names_of(const std::vector<::onnx::ValueInfoProto*>& inputs) {
  std::string out;
  for (const auto* i : inputs) {
    out += (out.empty() ? "" : ", ") + io::quote(i->name());
  }
  return out.empty() ? "none" : out;
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string out;
  for (auto d : dims) {
    out += (out.empty() ? "" : ",") + std::to_string(d);
  }
  return out;
}

// Applies the user's sizes to the graph inputs, checking them against the
// inputs as the model declares them (`original`) and against each other: a
// symbol has one size, an input one shape, however many flags name them.
class input_sizer {
public:
  input_sizer(::onnx::GraphProto& g,
              const google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto>& original)
      : inputs_(true_inputs(g)) {
    for (const auto& input : original) {
      original_.emplace(input.name(), &input);
    }
  }

  // `--input-shape NAME=DIMS`: every dimension of the input.
  void size_input(const std::string& name, const std::vector<std::int64_t>& dims) {
    const std::string flag =
        "--input-shape " + io::quote((name.empty() ? "" : name + "=") + dims_text(dims));
    if (name.empty() && inputs_.size() != 1) {
      throw bad_parameter_error(flag + " names no input and the model has " +
                                std::to_string(inputs_.size()) + " (" + names_of(inputs_) +
                                "): give NAME=" + dims_text(dims));
    }
    ::onnx::ValueInfoProto* input = name.empty() ? inputs_.front() : nullptr;
    for (auto* i : inputs_) {
      input = i->name() == name ? i : input;
    }
    if (input == nullptr) {
      throw bad_parameter_error(flag + ": the model has no input " + io::quote(name) +
                                " (its inputs: " + names_of(inputs_) + ")");
    }
    const auto& declared = original_.at(input->name())->type().tensor_type();
    if (declared.has_shape() && declared.shape().dim_size() != static_cast<int>(dims.size())) {
      throw bad_parameter_error(flag + ": input " + io::quote(input->name()) + " has " +
                                std::to_string(declared.shape().dim_size()) + " dimensions, not " +
                                std::to_string(dims.size()));
    }
    if (const auto [it, fresh] = shapes_.try_emplace(input->name(), dims); !fresh) {
      if (it->second != dims) {
        throw bad_parameter_error(flag + ": input " + io::quote(input->name()) +
                                  " is given another shape, " + dims_text(it->second));
      }
      return;
    }
    auto& shape = *input->mutable_type()->mutable_tensor_type()->mutable_shape();
    while (shape.dim_size() < static_cast<int>(dims.size())) {
      shape.add_dim();
    }
    for (int k = 0; k < shape.dim_size(); ++k) {
      const auto want = dims[static_cast<std::size_t>(k)];
      if (k < declared.shape().dim_size()) {
        const auto& d = declared.shape().dim(k);
        if (d.has_dim_value() && d.dim_value() > 0 && d.dim_value() != want) {
          throw bad_parameter_error(flag + ": dimension " + std::to_string(k) + " of input " +
                                    io::quote(input->name()) + " is fixed at " +
                                    std::to_string(d.dim_value()));
        }
        if (d.has_dim_param() && !d.dim_param().empty()) {
          agree(flag, d.dim_param(), want);
        }
      }
      shape.mutable_dim(k)->Clear();
      shape.mutable_dim(k)->set_dim_value(want);
    }
  }

  // `--dim SYMBOL=N`: every input dimension named SYMBOL.
  void size_symbol(const std::string& symbol, std::int64_t size) {
    const std::string flag = "--dim " + io::quote(symbol + "=" + std::to_string(size));
    std::set<std::string> declared;
    for (const auto& [name, input] : original_) {
      for (const auto& d : input->type().tensor_type().shape().dim()) {
        if (d.has_dim_param() && !d.dim_param().empty()) {
          declared.insert(d.dim_param());
        }
      }
    }
    if (!declared.contains(symbol)) {
      std::string known;
      for (const auto& s : declared) {
        known += (known.empty() ? "" : ", ") + io::quote(s);
      }
      throw bad_parameter_error(flag + ": no input of the model has a dimension named so (" +
                                (known.empty() ? "they have no symbolic dimension"
                                               : "their symbolic dimensions: " + known) +
                                ")");
    }
    agree(flag, symbol, size);
    for (auto* input : inputs_) {
      for (auto& d :
           *input->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (d.has_dim_param() && d.dim_param() == symbol) {
          d.Clear();
          d.set_dim_value(size);
        }
      }
    }
  }

private:
  // One size per symbol, whichever flags give it.
  void agree(const std::string& flag, const std::string& symbol, std::int64_t size) {
    if (const auto [it, fresh] = symbols_.try_emplace(symbol, size); !fresh && it->second != size) {
      throw bad_parameter_error(flag + ": dimension " + io::quote(symbol) + " is also given as " +
                                std::to_string(it->second));
    }
  }

  std::vector<::onnx::ValueInfoProto*> inputs_;
  std::map<std::string, const ::onnx::ValueInfoProto*> original_;
  std::map<std::string, std::vector<std::int64_t>> shapes_;
  std::map<std::string, std::int64_t> symbols_;
};

} // namespace

sized_inputs::sized_inputs(::onnx::ModelProto& model, const input_sizes* sizes) {
  if (sizes == nullptr || sizes->empty()) {
    return;
  }
  auto& g = *model.mutable_graph();
  saved_ = g.input();
  graph_ = &g;
  try {
    input_sizer sizer(g, saved_);
    for (const auto& [name, dims] : sizes->shapes) {
      sizer.size_input(name, dims);
    }
    for (const auto& [symbol, size] : sizes->dims) {
      sizer.size_symbol(symbol, size);
    }
  } catch (...) {
    g.mutable_input()->Swap(&saved_);
    graph_ = nullptr;
    throw;
  }
}

sized_inputs::~sized_inputs() {
  if (graph_ != nullptr) {
    graph_->mutable_input()->Swap(&saved_);
  }
}

bool inferred_shapes::leaves_untouched(const ::onnx::ModelProto& model, bool propagate_data) {
  return !propagate_data && node_inference::handles(model);
}

inferred_shapes::inferred_shapes(::onnx::ModelProto& model, bool propagate_data)
    : graph_(&model.graph()) {
  infer(model, propagate_data, leaves_untouched(model, propagate_data));
}

inferred_shapes::inferred_shapes(::onnx::ModelProto& model, bool propagate_data,
                                 const std::function<void()>& unshaped)
    : graph_(&model.graph()) {
  if (!leaves_untouched(model, propagate_data)) {
    unshaped(); // before InferShapes writes to the model
    infer(model, propagate_data, false);
    return;
  }
  auto beside = std::async(std::launch::async, unshaped);
  infer(model, propagate_data, true); // (throws bad_alloc at most; `beside` is waited for)
  beside.get();
}

inferred_shapes::inferred_shapes(const ::onnx::ModelProto& skeleton, const wire::node_views& nodes,
                                 const std::function<void()>& unshaped)
    : graph_(&skeleton.graph()), views_(&nodes) {
  if (!unshaped) { // (nothing to run beside it)
    by_node_ = node_inference::make_handled(skeleton, nodes);
    return;
  }
  auto beside = std::async(std::launch::async, unshaped);
  by_node_ = node_inference::make_handled(skeleton, nodes); // (bad_alloc at most)
  beside.get();
}

void inferred_shapes::infer(::onnx::ModelProto& model, bool propagate_data, bool by_node) {
  if (by_node) {
    by_node_ = node_inference::make_handled(model);
    return;
  }
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
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(false, 0, propagate_data));
  } catch (const std::bad_alloc&) {
    throw; // out of memory, not a model inference stopped on: said as such
  } catch (const std::exception&) {
    // Partial or no shapes: sizes stay unknown where inference stopped.
  }
  const auto& g = model.graph();
  for (const auto* values : {&g.input(), &g.value_info(), &g.output()}) { // a later one replaces
    for (const auto& v : *values) {
      if (v.has_type()) {
        types_[v.name()] = &v.type();
      }
    }
  }
  for (const auto& t : g.initializer()) { // replaces, as ir 3 lists them as inputs too
    auto& type = initializer_types_.emplace_back();
    initializer_type(t, type);
    types_[t.name()] = &type;
  }
}

inferred_shapes::~inferred_shapes() {
  for (auto& s : saved_) {
    s.graph->mutable_value_info()->Swap(&s.value_info);
    s.graph->mutable_output()->Swap(&s.output);
  }
}

const ::onnx::TypeProto* inferred_shapes::input_type(std::size_t v, std::size_t i) const {
  if (by_node_) {
    return by_node_->input_type(v, i);
  }
  return find(graph_->node(static_cast<int>(v)).input(static_cast<int>(i)));
}

const ::onnx::TypeProto* inferred_shapes::output_type(std::size_t v, std::size_t j) const {
  if (by_node_) {
    return by_node_->output_type(v, j);
  }
  return find(graph_->node(static_cast<int>(v)).output(static_cast<int>(j)));
}

const ::onnx::TypeProto* inferred_shapes::produced_type(const node_graph& nodes,
                                                        std::size_t t) const {
  const auto p = nodes.producer[t];
  const auto of = [&](const auto& outputs) -> const ::onnx::TypeProto* {
    if (outputs.size() == 1) { // (most nodes: t is their output)
      return output_type(p, 0);
    }
    for (std::size_t j = 0; j < static_cast<std::size_t>(outputs.size()); ++j) {
      if (std::string_view(outputs[static_cast<int>(j)]) == nodes.tensors[t]) { // one is t
        return output_type(p, j);
      }
    }
    return find(nodes.tensors[t]);
  };
  return views_ != nullptr ? of(view_nodes{*views_}.outputs(p))
                           : of(graph_->node(static_cast<int>(p)).output());
}

const ::onnx::TypeProto* inferred_shapes::find(std::string_view name) const {
  if (by_node_) {
    return by_node_->find(name);
  }
  const auto it = types_.find(name);
  return it == types_.end() ? nullptr : it->second;
}

std::optional<std::vector<std::int64_t>> dims_of(const ::onnx::TypeProto* type) {
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

bool has_free_dims(const ::onnx::TypeProto* type, std::set<std::string>& symbols) {
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

namespace {

weight_tensor tensor_weight(const ::onnx::TensorProto& t, bool constant) {
  const auto elements =
      static_cast<std::int64_t>(std::min<std::uint64_t>(element_count(t), INT64_MAX));
  return {elements, tensor_bytes(t), t.data_type(), constant,
          elements == 0 || element_bytes(t.data_type()).has_value()};
}

std::int64_t sum(std::int64_t a, std::int64_t b) {
  if (const auto s = detail::checked_add(a, b)) {
    return *s;
  }
  throw input_error("a model's weights would be more than 2^63 bytes");
}

// A Constant's value (`value`, `sparse_value` -- values and indices --,
// `value_float(s)`, `value_int(s)`, `value_string(s)`), or nothing for a
// Constant without one (which ONNX's checker refuses).
std::optional<weight_tensor> constant_value(const ::onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    const auto many = [&](std::int64_t count, std::int64_t size, int type) {
      return weight_tensor{count, count * size, type, true};
    };
    if (a.name() == "value" && a.has_t()) {
      return tensor_weight(a.t(), true);
    }
    if (a.name() == "sparse_value" && a.has_sparse_tensor()) {
      weight_tensor w = tensor_weight(a.sparse_tensor().values(), true);
      w.bytes = sum(w.bytes, tensor_bytes(a.sparse_tensor().indices()));
      return w;
    }
    if (a.name() == "value_float" && a.has_f()) {
      return many(1, 4, ::onnx::TensorProto::FLOAT);
    }
    if (a.name() == "value_floats") {
      return many(a.floats_size(), 4, ::onnx::TensorProto::FLOAT);
    }
    if (a.name() == "value_int" && a.has_i()) {
      return many(1, 8, ::onnx::TensorProto::INT64);
    }
    if (a.name() == "value_ints") {
      return many(a.ints_size(), 8, ::onnx::TensorProto::INT64);
    }
    if (a.name() == "value_string" || a.name() == "value_strings") {
      std::int64_t bytes = static_cast<std::int64_t>(a.s().size());
      for (const auto& x : a.strings()) {
        bytes = sum(bytes, static_cast<std::int64_t>(x.size()));
      }
      return weight_tensor{std::max<std::int64_t>(a.strings_size(), 1), bytes,
                           ::onnx::TensorProto::STRING, true};
    }
  }
  return std::nullopt;
}

bool is_constant(const ::onnx::NodeProto& n) {
  return n.op_type() == "Constant" && n.domain().empty();
}

// The weights of a subgraph and of the subgraphs within it.
void subgraph_weights(const ::onnx::GraphProto& g, std::vector<weight_tensor>& out) {
  for (const auto& t : g.initializer()) {
    out.push_back(tensor_weight(t, false));
  }
  for (const auto& t : g.sparse_initializer()) {
    weight_tensor w = tensor_weight(t.values(), false);
    w.bytes = sum(w.bytes, tensor_bytes(t.indices()));
    out.push_back(w);
  }
  for (const auto& n : g.node()) {
    if (is_constant(n)) {
      if (const auto w = constant_value(n)) {
        out.push_back(*w);
      }
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) {
        subgraph_weights(a.g(), out);
      }
      for (const auto& sub : a.graphs()) {
        subgraph_weights(sub, out);
      }
    }
  }
}

// weights_of's first pass: each of the graph's tensors that is an
// initializer (the first of its name, sparse ones too) gets its weight in
// `out`. The initializers are held by name, then every tensor looked up
// among them, its name hashed first side by side.
void initializer_weights(const ::onnx::GraphProto& g, const node_graph& nodes,
                         std::vector<weight_tensor>& out) {
  name_ids initializers(
      static_cast<std::size_t>(g.initializer_size() + g.sparse_initializer_size()));
  std::vector<weight_tensor> weights;
  const auto note = [&](std::string_view name, const weight_tensor& w) {
    if (initializers.add(name, static_cast<std::uint32_t>(weights.size())).second) {
      weights.push_back(w);
    }
  };
  for (const auto& t : g.initializer()) {
    note(t.name(), tensor_weight(t, false));
  }
  for (const auto& t : g.sparse_initializer()) {
    weight_tensor w = tensor_weight(t.values(), false);
    w.bytes = sum(w.bytes, tensor_bytes(t.indices()));
    note(t.values().name(), w);
  }
  if (weights.empty()) {
    return;
  }
  std::vector<std::size_t> hashes(nodes.tensors.size());
  in_chunks(hashes.size(), [&](std::size_t, std::size_t from, std::size_t to) {
    for (std::size_t t = from; t < to; ++t) {
      hashes[t] = name_ids::hash_only(nodes.tensors[t]);
    }
  });
  for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
    if (t + prefetch_ahead < hashes.size()) {
      initializers.prefetch(hashes[t + prefetch_ahead]);
    }
    if (const auto id = initializers.find(nodes.tensors[t], hashes[t])) {
      out[t] = weights[*id];
    }
  }
}

// weights_of on `graph_nodes`, the nodes of `g` (graph_nodes.hpp), the
// initializers `g`'s.
template <class Nodes>
model_weights weights_on(const Nodes& graph_nodes, const ::onnx::GraphProto& g,
                         const node_graph& nodes) {
  model_weights out;
  out.tensors.resize(nodes.tensors.size());
  out.held.resize(graph_nodes.size());
  initializer_weights(g, nodes, out.tensors);
  std::vector<bool> read(nodes.tensors.size(), false);
  for (const auto t : nodes.read_ids) {
    read[t] = true;
  }
  // Which nodes are Constants and which hold subgraphs, side by side: the
  // passes below then touch only those nodes.
  constexpr char constant = 1;
  constexpr char subgraphs = 2;
  std::vector<char> kind(graph_nodes.size());
  in_chunks(kind.size(), [&](std::size_t, std::size_t from, std::size_t to) {
    for (std::size_t v = from; v < to; ++v) {
      const bool held = graph_nodes.op_type(v) == "Constant" && graph_nodes.domain(v).empty();
      kind[v] =
          static_cast<char>((held ? constant : 0) | (graph_nodes.subgraphs(v) ? subgraphs : 0));
    }
  });
  ::onnx::NodeProto scratch; // (a view's node, parsed)
  for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
    const auto p = nodes.producer[t];
    if (p == node_graph::no_producer || (kind[p] & constant) == 0) {
      continue;
    }
    if (const auto w = constant_value(graph_nodes.node(p, scratch))) {
      if (read[t]) {
        out.tensors[t] = *w; // held by the nodes reading it, as an initializer
      } else {
        out.held[p].push_back(*w); // no reader: the Constant holds it
      }
    }
  }
  for (std::size_t v = 0; v < graph_nodes.size(); ++v) {
    if ((kind[v] & subgraphs) == 0) {
      continue;
    }
    for (const auto& a : graph_nodes.node(v, scratch).attribute()) {
      if (a.has_g()) {
        subgraph_weights(a.g(), out.held[v]);
      }
      for (const auto& sub : a.graphs()) {
        subgraph_weights(sub, out.held[v]);
      }
    }
  }
  return out;
}

} // namespace

const wire::node_views* inferable_views(const loaded_model& model, const input_sizes* sizes) {
  const wire::node_views* views = model.node_views();
  if (views == nullptr || views->initializers_as_views || views->subgraphs ||
      (sizes != nullptr && !sizes->empty()) ||
      !node_inference::handles(model.proto_without_nodes())) {
    return nullptr;
  }
  return views;
}

model_weights weights_of(const ::onnx::GraphProto& g, const node_graph& nodes) {
  return weights_on(proto_nodes{g}, g, nodes);
}

model_weights weights_of(const wire::node_views& views, const ::onnx::GraphProto& g,
                         const node_graph& nodes) {
  return weights_on(view_nodes{views}, g, nodes);
}

std::vector<std::int64_t> model_weights::tensor_bytes() const {
  std::vector<std::int64_t> out(tensors.size());
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    out[t] = tensors[t].bytes;
  }
  return out;
}

std::size_t model_weights::unsized() const {
  const auto count = [](const std::vector<weight_tensor>& ws) {
    return static_cast<std::size_t>(
        std::count_if(ws.begin(), ws.end(), [](const weight_tensor& w) { return !w.sized; }));
  };
  std::size_t out = count(tensors);
  for (const auto& h : held) {
    out += count(h);
  }
  return out;
}

std::int64_t model_weights::held_bytes(std::size_t v) const {
  std::int64_t out = 0;
  for (const auto& w : held[v]) {
    out = sum(out, w.bytes);
  }
  return out;
}

} // namespace shardpoint::onnx::shapes
