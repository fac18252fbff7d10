// What each pipeline stage of an ONNX model holds, for the memory planner.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/detail/checked.hpp>
#include <shardpoint/onnx/memory.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <boost/property_map/property_map.hpp>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/text.hpp>

#include <shardpoint/onnx/tensor_data.hpp>

#include "graph_nodes.hpp"
#include "infer.hpp"
#include "shapes.hpp"

namespace shardpoint::onnx {

namespace {

// Whether a symbolic dimension's name says it is the batch: it holds
// "batch" (batch, batch_size, Batch, ...) or is N, B, bs or bsz, any case.
bool batch_like(std::string_view name) {
  std::string lower;
  for (const char c : name) {
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower.find("batch") != std::string::npos || lower == "n" || lower == "b" ||
         lower == "bs" || lower == "bsz";
}

// A place of the batch among the graph inputs: input index and axis.
struct batch_place {
  int input = 0;
  int axis = 0;
  std::string symbol; ///< as declared; empty for a fixed dimension
  bool sized = false; ///< of an input without a declared shape, sized by --input-shape
};

// Where the batch is (see the top of the header), found on the inputs as
// the model declares them; `guessed` when no name says so.
struct batch_choice {
  std::vector<batch_place> at;
  bool guessed = false;
};

using input_list = std::vector<const ::onnx::ValueInfoProto*>;

// The symbolic dimensions of `inputs` (null entries skipped), quoted, for a
// message; "none" without any.
std::string symbols_of(const input_list& inputs) {
  std::set<std::string> names;
  for (const auto* v : inputs) {
    if (v == nullptr) {
      continue;
    }
    for (const auto& d : v->type().tensor_type().shape().dim()) {
      if (!d.dim_param().empty()) {
        names.insert(io::quote(d.dim_param()));
      }
    }
  }
  std::string out;
  for (const auto& n : names) {
    out += (out.empty() ? "" : ", ") + n;
  }
  return out.empty() ? "none" : out;
}

// The graph's inputs by index: those that are not initializers (the data
// the model is fed); null for the weights.
input_list data_inputs(const ::onnx::GraphProto& g) {
  std::unordered_set<std::string_view> initializers;
  for (const auto& t : g.initializer()) {
    initializers.insert(t.name());
  }
  input_list inputs(static_cast<std::size_t>(g.input_size()));
  for (int i = 0; i < g.input_size(); ++i) {
    if (!initializers.count(g.input(i).name())) {
      inputs[static_cast<std::size_t>(i)] = &g.input(i);
    }
  }
  return inputs;
}

// data_inputs' names, quoted, for messages: "'x', 'mask'", or "none".
std::string data_names(const ::onnx::GraphProto& g) {
  std::string out;
  for (const auto* v : data_inputs(g)) {
    if (v != nullptr) {
      out += (out.empty() ? "" : ", ") + io::quote(v->name());
    }
  }
  return out.empty() ? "none" : out;
}

// data_inputs that declare a shape; null for the others.
input_list shaped_inputs(const ::onnx::GraphProto& g) {
  input_list inputs = data_inputs(g);
  for (auto& v : inputs) {
    if (v != nullptr && !(v->type().has_tensor_type() && v->type().tensor_type().has_shape())) {
      v = nullptr;
    }
  }
  return inputs;
}

// Each symbolic dimension of `inputs` whose name is_batch takes, in order.
template <class IsBatch>
void add_named(const input_list& inputs, const IsBatch& is_batch, batch_choice& out) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) {
      continue;
    }
    const auto& dims = inputs[i]->type().tensor_type().shape().dim();
    for (int a = 0; a < dims.size(); ++a) {
      if (!dims[a].has_dim_value() && is_batch(dims[a].dim_param())) {
        out.at.push_back({static_cast<int>(i), a, dims[a].dim_param()});
      }
    }
  }
}

// The shape --input-shape gives input `name` (an empty name: the model's
// only input), or null.
const std::vector<std::int64_t>* sized_shape(const ::onnx::GraphProto& g, const std::string& name,
                                             const input_sizes* sizes) {
  if (sizes == nullptr) {
    return nullptr;
  }
  const input_list data = data_inputs(g);
  const auto inputs =
      std::count_if(data.begin(), data.end(), [](const auto* v) { return v != nullptr; });
  for (const auto& [input, dims] : sizes->shapes) {
    if (input == name || (input.empty() && inputs == 1)) {
      return &dims;
    }
  }
  return nullptr;
}

// --batch-dim given: INPUT:AXIS names a place (a fixed dimension too); else
// a symbol, every dimension of that name. bad_parameter_error when it names
// nothing the model has.
batch_choice chosen_batch(const ::onnx::GraphProto& g, const input_list& inputs,
                          const std::string& batch_dim, const input_sizes* sizes) {
  batch_choice out;
  const auto colon = batch_dim.rfind(':');
  for (std::size_t i = 0; colon != std::string::npos && i < inputs.size(); ++i) {
    if (inputs[i] == nullptr || inputs[i]->name() != batch_dim.substr(0, colon)) {
      continue;
    }
    const auto& dims = inputs[i]->type().tensor_type().shape().dim();
    const std::string axis = batch_dim.substr(colon + 1);
    if (axis.empty() || axis.size() > 9 ||
        axis.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(axis) >= dims.size()) {
      // (The axis's range, both ends: a trial's 'x:7' was told "a number
      // from 0" alone.)
      throw bad_parameter_error(
          "--batch-dim " + io::quote(batch_dim) + ": input " + io::quote(inputs[i]->name()) +
          (dims.empty()
               ? std::string(" has no dimension (a scalar holds no batch)")
               : " has " + shardpoint::detail::counted(dims.size(), "dimension") +
                     "; give one as a number from 0 to " + std::to_string(dims.size() - 1)));
    }
    const int a = std::stoi(axis);
    out.at.push_back({static_cast<int>(i), a, dims[a].dim_param()});
    return out;
  }
  if (colon != std::string::npos && colon + 1 < batch_dim.size() &&
      batch_dim.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    const std::string name = batch_dim.substr(0, colon);
    const bool declared = std::any_of(g.input().begin(), g.input().end(),
                                      [&](const auto& v) { return v.name() == name; });
    // An input without a declared shape that --input-shape sizes: its axes
    // are the size's, and the batch there is a number, held and scaled (a
    // trial's unshaped input could be sized but its batch not named).
    if (const auto* given = declared ? sized_shape(g, name, sizes) : nullptr) {
      const std::string axis = batch_dim.substr(colon + 1);
      if (axis.size() > 9 || std::stoul(axis) >= given->size()) {
        throw bad_parameter_error("--batch-dim " + io::quote(batch_dim) + ": input " +
                                  io::quote(name) + ", sized by --input-shape, has " +
                                  shardpoint::detail::counted(given->size(), "dimension") +
                                  "; give one as a number from 0 to " +
                                  std::to_string(given->size() - 1));
      }
      for (int i = 0; i < g.input_size(); ++i) {
        if (g.input(i).name() == name) {
          out.at.push_back({i, static_cast<int>(std::stoul(axis)), std::string(), true});
          return out;
        }
      }
    }
    throw bad_parameter_error("--batch-dim " + io::quote(batch_dim) +
                              (declared ? ": input " + io::quote(name) +
                                              " declares no shape (or is a weight): it has no "
                                              "axis to name"
                                        : ": the model has no input " + io::quote(name) +
                                              " (its inputs: " + data_names(g) + ")"));
  }
  add_named(
      inputs, [&](const std::string& p) { return p == batch_dim; }, out);
  if (out.at.empty()) {
    throw bad_parameter_error("--batch-dim " + io::quote(batch_dim) +
                              ": no input of the model has a dimension named so (their "
                              "symbolic dimensions: " +
                              symbols_of(inputs) + "; or give INPUT:AXIS)");
  }
  return out;
}

batch_choice find_batch(const ::onnx::GraphProto& g, const std::string& batch_dim,
                        const input_sizes* sizes) {
  const input_list inputs = shaped_inputs(g);
  if (!batch_dim.empty()) {
    return chosen_batch(g, inputs, batch_dim, sizes);
  }
  batch_choice out;
  add_named(
      inputs, [](const std::string& p) { return batch_like(p); }, out);
  if (out.at.empty()) { // the first dimension of floating-point inputs, never of integer ones
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] != nullptr && inputs[i]->type().tensor_type().shape().dim_size() >= 2 &&
          shapes::is_floating(inputs[i]->type().tensor_type().elem_type())) {
        out.at.push_back(
            {static_cast<int>(i), 0, inputs[i]->type().tensor_type().shape().dim(0).dim_param()});
      }
    }
    out.guessed = !out.at.empty();
  }
  return out;
}

// Sets the batch's symbolic dimensions of the graph inputs to B for as long
// as it lives, and puts the inputs back as they were.
class batch_override {
public:
  batch_override(::onnx::GraphProto& g, const batch_choice& batch, std::int64_t size) : graph_(g) {
    for (const auto& [i, a, symbol, sized] : batch.at) {
      auto& dim =
          *g.mutable_input(i)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(
              a);
      if (dim.has_dim_value() && dim.dim_value() > 0) { // fixed, or sized by the user
        fixed_.push_back({g.input(i).name(), a, dim.dim_value(), symbol, sized});
        continue;
      }
      saved_.push_back({i, a, dim});
      dim.Clear();
      dim.set_dim_value(size);
    }
  }
  batch_override(const batch_override&) = delete;
  batch_override& operator=(const batch_override&) = delete;
  ~batch_override() {
    for (auto& s : saved_) {
      graph_.mutable_input(s.input)
          ->mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(s.axis)
          ->Swap(&s.dim);
    }
  }

  struct fixed_place {
    std::string input;
    int axis = 0;
    std::int64_t size = 0;
    std::string symbol; ///< declared symbolic and sized by the user; empty: fixed
    bool sized = false; ///< declared without a shape and sized by the user
  };
  struct saved_place {
    int input = 0;
    int axis = 0;
    ::onnx::TensorShapeProto_Dimension dim;
  };
  [[nodiscard]] const std::vector<saved_place>& set() const { return saved_; }
  /// The batch's places that hold a number: (input, axis, size).
  [[nodiscard]] const std::vector<fixed_place>& fixed() const { return fixed_; }

private:
  ::onnx::GraphProto& graph_;
  std::vector<saved_place> saved_;
  std::vector<fixed_place> fixed_;
};

// "input 'x' has a fixed batch of 4 (dimension 0)", "input 'x' has its
// batch sized to 4 (dimension 'N')": a batch held at a number.
std::string held_text(const batch_override::fixed_place& f) {
  return detail::cat(
      "input ", io::quote(f.input),
      f.symbol.empty() && !f.sized ? " has a fixed batch of " : " has its batch sized to ", f.size,
      f.symbol.empty() ? " (dimension " + std::to_string(f.axis) + ")"
                       : " (dimension " + io::quote(f.symbol) + ")");
}

// "dimension 'N' of input 'data'", "dimension 0 of input 'x' ('p2o.D.0')".
std::string place_text(const ::onnx::GraphProto& g, int input, int axis,
                       const std::string& symbol) {
  return (symbol.empty() ? "dimension " + std::to_string(axis) : "dimension " + io::quote(symbol)) +
         " of input " + io::quote(g.input(input).name());
}

// The scale of activations measured with the batch as `batch` set it:
// micro_batch_size / the fixed batch they are measured at, or 1 -- said in
// `notes`, and in `guessed` where the batch was guessed.
std::pair<std::int64_t, std::int64_t>
batch_scale(const ::onnx::GraphProto& g, const batch_choice& choice, const batch_override& batch,
            std::int64_t micro_batch_size, std::vector<std::string>& notes, guesses* guessed) {
  std::int64_t scale_num = 1;
  std::int64_t scale_den = 1;
  std::string where; // the places the batch was set or scaled at, in words
  for (const auto& s : batch.set()) {
    where += (where.empty() ? "" : ", ") + place_text(g, s.input, s.axis, s.dim.dim_param());
    if (guessed != nullptr && !s.dim.dim_param().empty()) {
      guessed->batch_symbols.insert(s.dim.dim_param());
    }
  }
  if (batch.set().empty() && !batch.fixed().empty()) {
    const auto& f = batch.fixed().front();
    where = "dimension " + std::to_string(f.axis) + " of input " + io::quote(f.input);
    if (f.size != micro_batch_size) {
      scale_num = micro_batch_size;
      scale_den = f.size;
      notes.push_back(detail::cat(held_text(f), ": activations measured at ", f.size,
                                  " and scaled by ", micro_batch_size, "/", f.size));
    } else if (micro_batch_size > 1) { // said as any batch above 1 is (a trial's was not)
      notes.push_back(detail::cat(held_text(f), ": activations measured there, at the micro-batch "
                                                "size"));
    }
  } else if (!batch.set().empty() && micro_batch_size != 1) {
    notes.push_back(
        detail::cat("the batch, ", where, ", set to the micro-batch size ", micro_batch_size));
  }
  if (guessed != nullptr && choice.guessed && (scale_num != scale_den || !batch.set().empty())) {
    guessed->batch = "no input dimension is named like a batch: " + where +
                     " is taken for it; --batch-dim names it (a symbol, or INPUT:AXIS)";
  } else if (guessed != nullptr && choice.at.empty() && micro_batch_size != 1) {
    guessed->batch = detail::cat(
        "no input dimension is a batch (none is named like one, and no floating-point input "
        "has a first dimension to take): the activations are as the model declares them, "
        "not for --micro-batch-size ",
        micro_batch_size, "; --batch-dim names the batch (a symbol, or INPUT:AXIS)");
  }
  return {scale_num, scale_den};
}

} // namespace

std::vector<std::string> named_batch_symbols(const ::onnx::GraphProto& graph,
                                             const std::string& batch_dim,
                                             const input_sizes* sizes) {
  const batch_choice choice = find_batch(graph, batch_dim, sizes);
  std::vector<std::string> out;
  for (const auto& place : choice.at) {
    if (!choice.guessed && !place.symbol.empty() &&
        std::find(out.begin(), out.end(), place.symbol) == out.end()) {
      out.push_back(place.symbol);
    }
  }
  return out;
}

std::optional<held_batch> measured_batch(::onnx::ModelProto& model, const input_sizes* sizes) {
  // As activation_bytes finds it: a symbolic batch (counted as 1) is set,
  // a batch of a number is held there.
  const batch_choice choice =
      find_batch(model.graph(), sizes != nullptr ? sizes->batch_dim : std::string(), sizes);
  const shapes::sized_inputs sized(model, sizes);
  const batch_override batch(*model.mutable_graph(), choice, 1);
  if (!batch.set().empty() || batch.fixed().empty() || batch.fixed().front().size == 1) {
    return std::nullopt;
  }
  return held_batch{batch.fixed().front().size, held_text(batch.fixed().front())};
}

namespace {

// activation_bytes on `graph_nodes` (graph_nodes.hpp): `model`'s nodes, or
// views (`model` then its skeleton, which `infer(propagate_data)` infers
// with them).
template <class Nodes, class Infer>
std::vector<std::int64_t>
activations_on(const Nodes& graph_nodes, ::onnx::ModelProto& model, Infer infer,
               const node_graph& nodes, std::int64_t micro_batch_size,
               std::vector<std::string>& notes, const input_sizes* sizes, guesses* guessed) {
  if (micro_batch_size < 1) {
    throw bad_parameter_error(detail::cat(
        "shardpoint: the micro-batch size must be a positive integer, not ", micro_batch_size));
  }
  const auto n = graph_nodes.size();
  std::vector<std::int64_t> out(n, 0);
  // Where the batch is, on the inputs as declared; then the user's sizes (a
  // batch dimension they set is measured there and scaled, as a fixed one).
  const batch_choice choice =
      find_batch(model.graph(), sizes != nullptr ? sizes->batch_dim : std::string(), sizes);
  const shapes::sized_inputs sized(model, sizes);
  const batch_override batch(*model.mutable_graph(), choice, micro_batch_size);
  const auto [scale_num, scale_den] =
      batch_scale(model.graph(), choice, batch, micro_batch_size, notes, guessed);
  std::size_t unknown = 0;
  std::set<std::size_t> guessed_nodes;
  {
    const auto made = infer(sized.active()); // (a pointer: inferred_shapes does not move)
    const shapes::inferred_shapes& types = *made;
    for (std::size_t t = 0; t < nodes.tensors.size(); ++t) {
      const auto p = nodes.producer[t];
      if (p == node_graph::no_producer) {
        continue;
      }
      // A Constant's value is a weight, held once, not per micro-batch.
      if (graph_nodes.op_type(p) == "Constant" && graph_nodes.domain(p).empty()) {
        continue;
      }
      const auto* type = types.produced_type(nodes, t);
      const auto b = type ? shapes::value_bytes(*type, nodes.tensors[t]) : std::nullopt;
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
  if (guessed != nullptr) { // a guess, the caller's to say
    guessed->bytes_nodes = guessed_nodes.size();
    guessed->unsized_outputs = unknown;
    guessed->body_nodes = 0;
    for (std::size_t v = 0; v < n; ++v) {
      guessed->body_nodes += graph_nodes.subgraphs(v) ? 1 : 0;
    }
  } else if (unknown > 0) {
    notes.push_back(detail::cat(unknown, " node output", unknown == 1 ? " has" : "s have",
                                " no shape ONNX shape inference can find; counted as 0 bytes"));
  }
  return out;
}

} // namespace

std::vector<std::int64_t> activation_bytes(::onnx::ModelProto& model, const node_graph& nodes,
                                           std::int64_t micro_batch_size,
                                           std::vector<std::string>& notes,
                                           const input_sizes* sizes, guesses* guessed) {
  return activations_on(
      proto_nodes{model.graph()}, model,
      [&](bool propagate) { return std::make_unique<shapes::inferred_shapes>(model, propagate); },
      nodes, micro_batch_size, notes, sizes, guessed);
}

std::vector<std::int64_t> activation_bytes(loaded_model& model, const node_graph& nodes,
                                           std::int64_t micro_batch_size,
                                           std::vector<std::string>& notes,
                                           const input_sizes* sizes, guesses* guessed) {
  const wire::node_views* views = shapes::inferable_views(model, sizes);
  if (views == nullptr) {
    return activation_bytes(model.proto(), nodes, micro_batch_size, notes, sizes, guessed);
  }
  // As measure_nodes(loaded_model&): the views inferred, nothing parsed; the
  // skeleton's inputs take the micro-batch for the while.
  auto& skeleton = model.mutable_proto_without_nodes();
  return activations_on(
      view_nodes{*views}, skeleton,
      [&](bool) {
        return std::make_unique<shapes::inferred_shapes>(skeleton, *views, std::function<void()>());
      },
      nodes, micro_batch_size, notes, sizes, guessed);
}

namespace {

// parameter_uses_of with the weights `weights_of` gives (of `graph`'s
// nodes, or of views).
template <class Weights>
parameter_uses uses_of(const ::onnx::GraphProto& graph, const node_graph& nodes,
                       const std::vector<weight_decision>& decisions, Weights weights_of) {
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
    uses.tensors.back().row_parallel = d.choice.how == io::layout_choice::kind::row && parts > 1;
  }
  // A sparse initializer no decision covers: held whole, its values the
  // parameters.
  for (const auto& t : graph.sparse_initializer()) {
    if (!index.contains(t.values().name())) {
      const auto elements =
          static_cast<std::int64_t>(std::min<std::uint64_t>(element_count(t.values()), INT64_MAX));
      index.emplace(t.values().name(), add(elements, 1, t.values().data_type()));
    }
  }
  const shapes::model_weights weights = weights_of();
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

} // namespace

parameter_uses parameter_uses_of(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                 const std::vector<weight_decision>& decisions) {
  return uses_of(graph, nodes, decisions, [&] { return shapes::weights_of(graph, nodes); });
}

parameter_uses parameter_uses_of(const loaded_model& model, const node_graph& nodes,
                                 const std::vector<weight_decision>& decisions) {
  const wire::node_views* views = model.node_views();
  if (views != nullptr && !views->initializers_as_views) { // (nothing parsed)
    const auto& g = model.proto_without_nodes().graph();
    return uses_of(g, nodes, decisions, [&] { return shapes::weights_of(*views, g, nodes); });
  }
  return parameter_uses_of(model.proto().graph(), nodes, decisions);
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

namespace {

// tensors_made_from_shapes on `nodes`, the nodes of `graph` (graph_nodes.hpp),
// whose initializers `graph` holds.
template <class Nodes>
shape_made_tensors made_from_shapes(const Nodes& nodes, const ::onnx::GraphProto& graph) {
  shape_made_tensors out;
  ::onnx::NodeProto scratch; // (a view's node, parsed)
  // The initializers by name, found at the first ConstantOfShape (most
  // models have none: the table was most of this pass at 10^6 nodes).
  std::unordered_map<std::string_view, const ::onnx::TensorProto*> initializers;
  bool found = false;
  for (std::size_t v = 0; v < nodes.size(); ++v) {
    if (nodes.op_type(v) != "ConstantOfShape" || !nodes.domain(v).empty() ||
        nodes.inputs(v).size() != 1) {
      continue;
    }
    const ::onnx::NodeProto& n = nodes.node(v, scratch);
    if (!std::exchange(found, true)) {
      for (const auto& t : graph.initializer()) {
        initializers.emplace(t.name(), &t);
      }
    }
    const auto at = initializers.find(n.input(0));
    if (at == initializers.end()) {
      continue; // a shape computed at run time: an activation indeed
    }
    ++out.nodes;
    const ::onnx::TensorProto& shape = *at->second;
    int type = ::onnx::TensorProto::FLOAT; // the operator's default value
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        type = a.t().data_type();
      }
    }
    const auto size = element_bytes(type);
    std::optional<std::int64_t> bytes;
    // Its values, when the model holds them here (a skeleton keeps small
    // data, and a shape is small).
    const bool held = shape.dims_size() == 1 && shape.dims(0) >= 0 &&
                      (shape.int64_data_size() == shape.dims(0) ||
                       shape.raw_data().size() == 8 * static_cast<std::uint64_t>(shape.dims(0)));
    if (size && shape.data_type() == ::onnx::TensorProto::INT64 && !is_external(shape) && held) {
      const std::string raw = raw_bytes(shape, {});
      bytes = static_cast<std::int64_t>(*size);
      for (std::size_t i = 0; bytes && i + 8 <= raw.size(); i += 8) {
        std::int64_t d = 0;
        for (std::size_t k = 8; k-- > 0;) { // little-endian
          d = static_cast<std::int64_t>(static_cast<std::uint64_t>(d) << 8 |
                                        static_cast<unsigned char>(raw[i + k]));
        }
        bytes = d < 0 ? std::nullopt : detail::checked_mul(*bytes, d);
      }
    }
    const auto sum = bytes ? detail::checked_add(out.bytes, *bytes) : std::nullopt;
    if (sum) {
      out.bytes = *sum;
    } else {
      ++out.unsized;
    }
  }
  return out;
}

} // namespace

shape_made_tensors tensors_made_from_shapes(const ::onnx::GraphProto& graph) {
  return made_from_shapes(proto_nodes{graph}, graph);
}

shape_made_tensors tensors_made_from_shapes(const wire::node_views& views,
                                            const ::onnx::GraphProto& graph) {
  return made_from_shapes(view_nodes{views}, graph);
}

} // namespace shardpoint::onnx
