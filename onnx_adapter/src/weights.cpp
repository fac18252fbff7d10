// Tensor parallelism inside each pipeline stage: layouts, strategies,
// per-rank weights, and back.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <shardpoint/io/files.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/tensor_data.hpp>
#include <shardpoint/onnx/weights.hpp>
#include <shardpoint/tensor_layout.hpp>

#include "graph_nodes.hpp"
#include "name_ids.hpp"
#include "node_view.hpp"

namespace shardpoint::onnx {
namespace fs = std::filesystem;
using K = io::layout_choice::kind;

namespace {

// ---- the graph as the derivation sees it -------------------------------------

// A node as the derivation reads it: protobuf's, or a view
// (graph_nodes.hpp) of a model read with its nodes as views.
class node_ref {
public:
  explicit node_ref(const ::onnx::NodeProto& n) : proto_(&n) {}
  node_ref(const wire::node_views& views, std::size_t v) : views_(&views), v_(v) {}

  [[nodiscard]] std::string_view op_type() const {
    return proto_ != nullptr ? std::string_view(proto_->op_type()) : views_->nodes[v_].op_type();
  }
  [[nodiscard]] std::string_view name() const {
    return proto_ != nullptr ? std::string_view(proto_->name()) : views_->nodes[v_].name();
  }
  [[nodiscard]] int input_size() const {
    return proto_ != nullptr ? proto_->input_size() : static_cast<int>(views_->nodes[v_].inputs);
  }
  [[nodiscard]] std::string_view input(int i) const {
    return proto_ != nullptr ? std::string_view(proto_->input(i))
                             : views_->inputs(v_)[static_cast<std::size_t>(i)];
  }
  [[nodiscard]] int output_size() const {
    return proto_ != nullptr ? proto_->output_size() : static_cast<int>(views_->nodes[v_].outputs);
  }
  [[nodiscard]] std::string_view output(int i) const {
    return proto_ != nullptr ? std::string_view(proto_->output(i))
                             : views_->outputs(v_)[static_cast<std::size_t>(i)];
  }
  /// Its attribute `name` of type INT, or nothing (a view's parsed).
  [[nodiscard]] std::optional<std::int64_t> int_attribute(std::string_view name) const {
    ::onnx::NodeProto scratch;
    const ::onnx::NodeProto& n =
        proto_ != nullptr ? *proto_ : view_nodes{*views_}.node(v_, scratch);
    for (const auto& a : n.attribute()) {
      if (a.name() == name) {
        return a.i();
      }
    }
    return std::nullopt;
  }

private:
  const ::onnx::NodeProto* proto_ = nullptr;
  const wire::node_views* views_ = nullptr;
  std::size_t v_ = 0;
};

// Every name an id (name_ids, a flat table: string-keyed hash maps of
// vectors were most of `memory` at 10^6 nodes, 9 of its 11 s); per id the
// initializer of that name (the first), the node writing it (the first)
// and the nodes reading it, in node order. The nodes are `g`'s, or views
// (`views`; `g` then the skeleton's graph, which holds the initializers).
struct graph_view {
  const ::onnx::GraphProto& g;
  const wire::node_views* views = nullptr;
  name_ids ids;
  std::vector<const ::onnx::TensorProto*> initializers; // by id; nullptr: none
  std::vector<int> producers;                           // by id; -1: none
  std::vector<std::uint32_t> consumer_offsets;          // by id, into consumer_nodes
  std::vector<int> consumer_nodes;

  explicit graph_view(const ::onnx::GraphProto& graph, const wire::node_views* node_views = nullptr)
      : g(graph), views(node_views), ids(expected(graph, node_views)) {
    for (const auto& t : g.initializer()) {
      if (intern(t.name()).second) {
        initializers.back() = &t;
      }
    }
    std::vector<std::uint32_t> counts;
    for (int v = 0; v < size(); ++v) {
      const node_ref n = node(v);
      for (int k = 0; k < n.output_size(); ++k) {
        int& p = producers[intern(n.output(k)).first];
        p = p < 0 ? v : p;
      }
      for (int k = 0; k < n.input_size(); ++k) {
        if (const std::string_view i = n.input(k); !i.empty()) {
          const auto id = intern(i).first;
          counts.resize(ids.size(), 0);
          ++counts[id];
        }
      }
    }
    counts.resize(ids.size(), 0);
    consumer_offsets.assign(ids.size() + 1, 0);
    for (std::size_t id = 0; id < counts.size(); ++id) {
      consumer_offsets[id + 1] = consumer_offsets[id] + counts[id];
    }
    consumer_nodes.resize(consumer_offsets.back());
    std::vector<std::uint32_t> next(consumer_offsets.begin(), consumer_offsets.end() - 1);
    for (int v = 0; v < size(); ++v) {
      const node_ref n = node(v);
      for (int k = 0; k < n.input_size(); ++k) {
        if (const std::string_view i = n.input(k); !i.empty()) {
          consumer_nodes[next[*ids.find(i)]++] = v;
        }
      }
    }
  }
  [[nodiscard]] int size() const {
    return views != nullptr ? static_cast<int>(views->size()) : g.node_size();
  }
  [[nodiscard]] node_ref node(int v) const {
    return views != nullptr ? node_ref(*views, static_cast<std::size_t>(v)) : node_ref(g.node(v));
  }
  [[nodiscard]] const ::onnx::TensorProto* initializer(std::string_view t) const {
    const auto id = ids.find(t);
    return id ? initializers[*id] : nullptr;
  }
  [[nodiscard]] bool is_weight(std::string_view t) const { return initializer(t) != nullptr; }
  /// The id of initializer `t`, or nothing when `t` is none.
  [[nodiscard]] std::optional<std::uint32_t> weight_id(std::string_view t) const {
    const auto id = ids.find(t);
    return id && initializers[*id] != nullptr ? id : std::nullopt;
  }
  /// The node writing `t`, or -1.
  [[nodiscard]] int producer(std::string_view t) const {
    const auto id = ids.find(t);
    return id ? producers[*id] : -1;
  }
  [[nodiscard]] std::string label(int v) const {
    const node_ref n = node(v);
    return std::string(n.op_type()) + " " +
           (n.name().empty() ? "#" + std::to_string(v) : "'" + std::string(n.name()) + "'");
  }
  /// node_name()'s spelling: its name, or "<unnamed OP>".
  [[nodiscard]] std::string display_name(std::size_t v) const {
    const node_ref n = node(static_cast<int>(v));
    return n.name().empty() ? "<unnamed " + std::string(n.op_type()) + ">" : std::string(n.name());
  }
  /// A MatMul or Gemm's weight: input 1 when it is an initializer.
  [[nodiscard]] std::optional<std::string_view> weight_of(int v) const {
    const node_ref n = node(v);
    if ((n.op_type() == "MatMul" || n.op_type() == "Gemm") && n.input_size() >= 2 &&
        is_weight(n.input(1)) && !is_weight(n.input(0))) {
      return n.input(1);
    }
    return std::nullopt;
  }
  [[nodiscard]] bool transposed(int v) const {
    const node_ref n = node(v);
    if (n.op_type() != "Gemm") {
      return false;
    }
    const auto trans_b = n.int_attribute("transB"); // (the first of that name)
    return trans_b && *trans_b != 0;
  }
  [[nodiscard]] int single_consumer(std::string_view t) const {
    const auto id = ids.find(t);
    if (!id || consumer_offsets[*id + 1] - consumer_offsets[*id] != 1) {
      return -1;
    }
    return consumer_nodes[consumer_offsets[*id]];
  }

private:
  static std::size_t expected(const ::onnx::GraphProto& graph, const wire::node_views* views) {
    const std::size_t nodes =
        views != nullptr ? views->size() : static_cast<std::size_t>(graph.node_size());
    return static_cast<std::size_t>(graph.initializer_size()) + 2 * nodes;
  }
  // `name`'s id, and whether it is new (its slots added).
  std::pair<std::uint32_t, bool> intern(std::string_view name) {
    const auto added = ids.add(name, static_cast<std::uint32_t>(ids.size()));
    if (added.second) {
      initializers.push_back(nullptr);
      producers.push_back(-1);
    }
    return added;
  }
};

// A node's first output; none for a node without outputs (a model may hold
// one: it is walked past, never indexed).
std::optional<std::string_view> first_output(const node_ref& n) {
  return n.output_size() > 0 ? std::optional(n.output(0)) : std::nullopt;
}

bool passes_through(std::string_view op) {
  return op == "Cast" || op == "Identity" || op == "Dropout";
}

// Ops of a block between its column and row layers (attention and MLP).
bool block_op(std::string_view op) {
  static const std::unordered_set<std::string_view> ops{
      "Add",      "Sub",     "Mul",     "Div",       "Softmax", "MatMul",      "Transpose",
      "Reshape",  "Relu",    "Gelu",    "Erf",       "Tanh",    "Sigmoid",     "Cast",
      "Identity", "Dropout", "Squeeze", "Unsqueeze", "Split",   "Concat",      "Slice",
      "Where",    "Pow",     "Sqrt",    "FastGelu",  "Silu",    "HardSigmoid", "LeakyRelu",
      "Neg",      "Exp",     "Softplus"};
  return ops.count(op) > 0;
}

// The bias a layer's output gets: the first Add with an initializer after it
// (through casts), or Gemm's C.
std::optional<std::string_view> bias_of(const graph_view& v, int layer) {
  const node_ref n = v.node(layer);
  if (n.op_type() == "Gemm" && n.input_size() >= 3 && v.is_weight(n.input(2))) {
    return n.input(2);
  }
  const auto out = first_output(n);
  if (!out) {
    return std::nullopt;
  }
  std::string_view t = *out;
  for (int hops = 0; hops < 4; ++hops) {
    const int c = v.single_consumer(t);
    if (c < 0) {
      return std::nullopt;
    }
    const node_ref cn = v.node(c);
    if (passes_through(cn.op_type())) {
      if (!first_output(cn)) {
        return std::nullopt;
      }
      t = *first_output(cn);
      continue;
    }
    if (cn.op_type() == "Add" && cn.input_size() == 2) {
      const std::string_view other = cn.input(0) == t ? cn.input(1) : cn.input(0);
      return v.is_weight(other) ? std::optional(other) : std::nullopt;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Whether `layer`'s output rejoins the residual stream: through bias Adds
// and casts into an Add of two activations. Returns that Add, or -1.
int residual_join(const graph_view& v, int layer) {
  const auto out = first_output(v.node(layer));
  if (!out) {
    return -1;
  }
  std::string_view t = *out;
  for (int hops = 0; hops < 8; ++hops) {
    const int c = v.single_consumer(t);
    if (c < 0) {
      return -1;
    }
    const node_ref cn = v.node(c);
    if (passes_through(cn.op_type())) {
      if (!first_output(cn)) {
        return -1;
      }
      t = *first_output(cn);
      continue;
    }
    if (cn.op_type() != "Add" || cn.input_size() != 2) {
      return -1;
    }
    const std::string_view other = cn.input(0) == t ? cn.input(1) : cn.input(0);
    if (!v.is_weight(other)) {
      return c;
    }
    if (!first_output(cn)) {
      return -1;
    }
    t = *first_output(cn); // a bias: on
  }
  return -1;
}

// The column layers feeding row layer `row`: walking back from its input
// through block ops, the MatMul/Gemm with weights met first on each path.
std::vector<int> column_partners(const graph_view& v, int row) {
  std::vector<int> found;
  std::set<int> seen;
  std::vector<std::string_view> todo{v.node(row).input(0)};
  while (!todo.empty() && seen.size() < 512) {
    const std::string_view t = todo.back();
    todo.pop_back();
    const int p = v.producer(t);
    if (p < 0 || !seen.insert(p).second) {
      continue;
    }
    const node_ref pn = v.node(p);
    if (v.weight_of(p)) {
      found.push_back(p);
      continue;
    }
    if (!block_op(pn.op_type())) {
      continue;
    }
    // An Add of two activations is a residual join: another block's end.
    if (pn.op_type() == "Add" && pn.input_size() == 2 && !v.is_weight(pn.input(0)) &&
        !v.is_weight(pn.input(1))) {
      continue;
    }
    for (int k = 0; k < pn.input_size(); ++k) {
      if (const std::string_view i = pn.input(k); !i.empty() && !v.is_weight(i)) {
        todo.push_back(i);
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::int64_t> dims_of(const ::onnx::TensorProto& t) {
  return {t.dims().begin(), t.dims().end()};
}

std::string tuple_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) {
    s.append(i ? ", " : "").append(std::to_string(v[i]));
  }
  return s + (v.size() == 1 ? ",)" : ")");
}

} // namespace

namespace {

// derive_layout on the graph as `v` sees it.
std::vector<io::layout_choice> derive_on(const graph_view& v, const ::onnx::GraphProto& graph,
                                         const node_graph& nodes) {
  std::map<std::string, io::layout_choice> chosen;
  const auto choose = [&](std::string_view name, K how, std::string reason) {
    auto [it, fresh] = chosen.try_emplace(std::string(name));
    if (fresh || it->second.how == K::replicated) {
      it->second = {std::string(name), how, {}, "", std::move(reason)};
    }
  };
  for (int r = 0; r < v.size(); ++r) {
    const auto w = v.weight_of(r);
    if (!w) {
      continue;
    }
    const int join = residual_join(v, r);
    if (join < 0) {
      continue;
    }
    const auto partners = column_partners(v, r);
    if (partners.empty()) {
      continue;
    }
    choose(*w, K::row,
           "row-parallel: " + v.label(r) + " rejoins the residual stream at " + v.label(join));
    if (const auto b = bias_of(v, r)) {
      choose(*b, K::row, "bias of row-parallel " + v.label(r) + ": kept whole");
    }
    for (int c : partners) {
      choose(*v.weight_of(c), K::column,
             "column-parallel: " + v.label(c) + " opens the block of " + v.label(r));
      if (const auto b = bias_of(v, c)) {
        choose(*b, K::column, "bias of column-parallel " + v.label(c));
      }
    }
  }
  for (int n = 0; n < v.size(); ++n) {
    const node_ref node = v.node(n);
    if (node.op_type() == "Gather" && node.input_size() >= 1 && v.is_weight(node.input(0)) &&
        v.initializer(node.input(0))->dims_size() == 2) {
      choose(node.input(0), K::vocab, "vocab-parallel: " + v.label(n) + " looks rows up in it");
    }
  }
  // Every initializer a node reads, in the model's order.
  std::vector<char> read(v.ids.size(), 0); // by id
  for (std::size_t n = 0; n + 1 < nodes.read_offsets.size(); ++n) {
    for (auto t : nodes.reads(n)) {
      if (const auto id = v.weight_id(nodes.tensors[t])) {
        read[*id] = 1;
      }
    }
  }
  std::vector<io::layout_choice> out;
  for (const auto& t : graph.initializer()) {
    if (read[*v.ids.find(t.name())] == 0) {
      continue;
    }
    if (const auto it = chosen.find(t.name()); it != chosen.end()) {
      out.push_back(it->second);
    } else {
      out.push_back({t.name(), K::replicated, {}, "", "not part of a column/row pair"});
    }
  }
  return out;
}

} // namespace

std::vector<io::layout_choice> derive_layout(const ::onnx::GraphProto& graph,
                                             const node_graph& nodes) {
  return derive_on(graph_view(graph), graph, nodes);
}

namespace {

// The stages reading each initializer, with a node of each for messages.
// (By the weight's id in `v`: a table of strings was half a second at 10^6
// nodes.)
struct readers_map {
  std::unordered_map<std::uint32_t, std::map<int, std::size_t>> by_id;
  const graph_view* v = nullptr;

  [[nodiscard]] const std::map<int, std::size_t>* find(std::string_view name) const {
    const auto id = v->ids.find(name);
    const auto at = id ? by_id.find(*id) : by_id.end();
    return at != by_id.end() ? &at->second : nullptr;
  }
};
readers_map readers_of(const graph_view& v, const node_graph& nodes,
                       const sharding_result& stages) {
  readers_map readers;
  readers.v = &v;
  for (std::size_t n = 0; n + 1 < nodes.read_offsets.size(); ++n) {
    const int s = stages.stage(n).value_or(0);
    for (auto t : nodes.reads(n)) {
      if (const auto id = v.weight_id(nodes.tensors[t])) {
        readers.by_id[*id].try_emplace(s, n);
      }
    }
  }
  return readers;
}

// The layout of every weight read: the file's (replicated where it names
// none), or derived from the graph. Each weight once: a strategy names each
// once, and a model naming two alike (ONNX forbids it, a broken export may
// not) cannot be described.
std::vector<io::layout_choice> layouts_of(const ::onnx::GraphProto& graph, const graph_view& v,
                                          const node_graph& nodes, const readers_map& readers,
                                          const std::vector<io::layout_choice>* file) {
  std::vector<io::layout_choice> choices;
  if (file != nullptr) {
    std::map<std::string, const io::layout_choice*> named;
    for (const auto& c : *file) {
      if (!v.is_weight(c.name)) {
        throw bad_input_error(c.where + ": the layout names '" + c.name +
                              "', which is no initializer of the model");
      }
      named[c.name] = &c;
    }
    for (const auto& t : graph.initializer()) {
      if (readers.find(t.name()) == nullptr) {
        continue;
      }
      const auto it = named.find(t.name());
      if (it == named.end()) {
        choices.push_back({t.name(), K::replicated, {}, "", "not named in the layout file"});
        continue;
      }
      choices.push_back(*it->second);
      if (choices.back().reason.empty()) { // the why a printout and --layout-out give
        choices.back().reason = "as the layout file says (" + choices.back().where + ")";
      }
    }
  } else {
    choices = derive_on(v, graph, nodes);
  }
  std::set<std::string_view> seen;
  for (const auto& c : choices) {
    if (!seen.insert(c.name).second) {
      throw bad_input_error("the model holds two weights named " + io::quote(c.name) +
                            "; ONNX names each once, and so must a strategy");
    }
  }
  return choices;
}

// The shard tuple of a weight of `shape` laid out as `c`, T ways;
// `transposed`: stored as Gemm's transB reads it. layout_error for a shape
// the layout cannot cut.
std::vector<std::int64_t> shard_of(const io::layout_choice& c,
                                   const std::vector<std::int64_t>& shape, bool transposed,
                                   std::int64_t T) {
  const std::size_t rank = shape.size();
  const auto need = [&](bool ok, const char* what) {
    if (!ok) {
      throw layout_error("For " + c.name + ", a " + io::to_string(c.how) + " layout needs " + what +
                         ", but its shape is " + tuple_text(shape));
    }
  };
  switch (c.how) {
  case K::column:
    need(rank == 1 || rank == 2, "a 2-D weight or a 1-D bias");
    return rank == 1    ? std::vector<std::int64_t>{T}
           : transposed ? std::vector<std::int64_t>{T, 1}
                        : std::vector<std::int64_t>{1, T};
  case K::row:
    need(rank == 1 || rank == 2, "a 2-D weight or a 1-D bias");
    return rank == 1    ? std::vector<std::int64_t>{1}
           : transposed ? std::vector<std::int64_t>{1, T}
                        : std::vector<std::int64_t>{T, 1};
  case K::vocab:
    need(rank == 2, "a 2-D table");
    return {T, 1};
  case K::replicated:
    return std::vector<std::int64_t>(rank, 1);
  case K::tuple:
    return c.shard;
  }
  return c.shard;
}

} // namespace

namespace {

// decide() on the graph as `v` sees it.
std::vector<weight_decision> decide_on(const graph_view& v, const node_graph& nodes,
                                       const sharding_result& stages, const weight_options& options,
                                       const std::vector<io::layout_choice>* file) {
  const ::onnx::GraphProto& graph = v.g;
  const int T = options.tensor_parallel;
  if (T < 1) {
    throw bad_parameter_error("the tensor-parallel degree must be at least 1, not " +
                              std::to_string(T));
  }
  const int D = options.devices_per_stage.value_or(T);
  if (D < 1 || D % T != 0) {
    throw bad_parameter_error("devices per stage (" + std::to_string(D) +
                              ") must be a positive multiple of the tensor-parallel degree (" +
                              std::to_string(T) + ")");
  }
  const auto readers = readers_of(v, nodes, stages);
  const auto choices = layouts_of(graph, v, nodes, readers, file);
  // Which layers are stored transposed (Gemm transB).
  std::set<std::string, std::less<>> transposed;
  for (int n = 0; n < v.size(); ++n) {
    if (const auto w = v.weight_of(n); w && v.transposed(n)) {
      transposed.emplace(*w);
    }
  }
  std::vector<weight_decision> out;
  for (const auto& c : choices) {
    const auto& t = *v.initializer(c.name);
    (void)element_count(t); // dims of more than 2^62 elements are bad input, named
    weight_decision d{c.name, dims_of(t), t.data_type(), {}, c, {}};
    const auto* read_by = readers.find(c.name);
    if (read_by == nullptr) { // (a layout names only weights some node reads)
      throw internal_error("shardpoint: a layout chose weight " + io::quote(c.name) +
                           ", which no node reads");
    }
    const auto& r = *read_by;
    for (const auto& [s, node] : r) {
      d.stages.push_back(s);
    }
    if (d.stages.size() > 1 && !options.replicate_shared) {
      const auto first = r.begin();
      const auto second = std::next(first);
      throw bad_input_error(
          "initializer " + io::quote(c.name) + " is read by stage " + std::to_string(first->first) +
          " (node " + io::quote(v.display_name(first->second)) + ") and stage " +
          std::to_string(second->first) + " (node " + io::quote(v.display_name(second->second)) +
          "); give --replicate-shared to write it to both");
    }
    d.shard = shard_of(c, d.shape, transposed.count(c.name) > 0, T);
    // Held to what a strategy file can say, also where none is written
    // (the memory planner): a trial's [3, 1] on 2 devices was planned.
    if (options.divisible) {
      check_shard(d.name, d.shape, d.shard, D);
    }
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace

std::vector<weight_decision> decide(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                    const sharding_result& stages, const weight_options& options,
                                    const std::vector<io::layout_choice>* file) {
  return decide_on(graph_view(graph), nodes, stages, options, file);
}

std::vector<weight_decision> decide(const loaded_model& model, const node_graph& nodes,
                                    const sharding_result& stages, const weight_options& options,
                                    const std::vector<io::layout_choice>* file) {
  // On the views where the model's nodes are views and its skeleton holds
  // the initializers (node_reading::views_with_initializers): nothing
  // parsed.
  const wire::node_views* views = model.node_views();
  if (views != nullptr && !views->initializers_as_views) {
    return decide_on(graph_view(model.proto_without_nodes().graph(), views), nodes, stages, options,
                     file);
  }
  return decide(model.proto().graph(), nodes, stages, options, file);
}

std::vector<split_extent> tensor_parallel_extents(const std::vector<weight_decision>& decisions) {
  std::vector<split_extent> out;
  for (const auto& d : decisions) {
    for (std::size_t i = 0; i < d.shard.size() && i < d.shape.size(); ++i) {
      const std::int64_t length = d.shape[i];
      if (d.shard[i] > 1 && std::none_of(out.begin(), out.end(), [&](const split_extent& e) {
            return e.length == length;
          })) {
        out.push_back({d.name, i, length});
      }
    }
  }
  return out;
}

std::vector<weights::stage_strategy> strategies(const std::vector<weight_decision>& decisions,
                                                const weight_options& options, int stages) {
  const int D = options.devices_per_stage.value_or(options.tensor_parallel);
  std::vector<weights::stage_strategy> out(static_cast<std::size_t>(std::max(stages, 1)));
  for (std::size_t s = 0; s < out.size(); ++s) {
    out[s].stage = static_cast<int>(s);
  }
  for (const auto& d : decisions) {
    for (int s : d.stages) {
      out[static_cast<std::size_t>(s)].parameters.push_back(
          {make_layout(d.name, d.shape, d.shard, D), s});
    }
  }
  return out;
}

} // namespace shardpoint::onnx
