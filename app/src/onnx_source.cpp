// An ONNX model as a model_source: the adapter's reading, measuring,
// sharding and writing behind the application's interface.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <set>

#include <shardpoint/app/onnx_source.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>
#include <shardpoint/onnx/memory.hpp>
#include <shardpoint/onnx/weights.hpp>

namespace shardpoint::app {

namespace {

onnx::cost_model onnx_cost(cost_model how) {
  switch (how) {
  case cost_model::unit:
    return onnx::cost_model::unit;
  case cost_model::params:
    return onnx::cost_model::params;
  case cost_model::flops:
    break;
  }
  return onnx::cost_model::flops;
}

// The graph inputs' symbolic dimensions the user has not sized.
std::set<std::string> free_input_symbols(const ::onnx::GraphProto& g,
                                         const onnx::input_sizes& sizes) {
  std::set<std::string> sized_inputs;
  std::set<std::string> sized_symbols;
  for (const auto& [name, dims] : sizes.shapes) {
    sized_inputs.insert(name.empty() && g.input_size() > 0 ? g.input(0).name() : name);
  }
  for (const auto& [symbol, size] : sizes.dims) {
    sized_symbols.insert(symbol);
  }
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) {
    initializers.insert(t.name());
  }
  std::set<std::string> out;
  for (const auto& input : g.input()) {
    if (initializers.contains(input.name()) || sized_inputs.contains(input.name())) {
      continue;
    }
    for (const auto& d : input.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && !d.dim_param().empty() && !sized_symbols.contains(d.dim_param())) {
        out.insert(d.dim_param());
      }
    }
  }
  return out;
}

// " rest on ... shapes (what is free); how to size it": the end of a
// sentence on figures that met `symbols`. The inputs' free dimensions are
// named (all of them: sizing one at a time leaves the rest), the ones
// inference made up are counted, and the flags are named only while an
// input dimension is left to size.
std::string shapes_sentence(const ::onnx::GraphProto& g, const std::set<std::string>& symbols,
                            const onnx::input_sizes& sizes) {
  const std::set<std::string> inputs = free_input_symbols(g, sizes);
  std::string named;
  std::size_t shown = 0;
  for (const auto& symbol : inputs) {
    if (shown++ < 6) {
      named += (named.empty() ? "" : ", ") + io::quote(symbol);
    }
  }
  if (inputs.size() > 6) {
    named += " and " + std::to_string(inputs.size() - 6) + " more";
  }
  std::size_t made_up = 0;
  for (const auto& symbol : symbols) {
    made_up += inputs.contains(symbol) ? 0 : 1;
  }
  std::string what = named.empty() ? "" : "the inputs' free dimensions " + named;
  if (made_up > 0) {
    what += (what.empty() ? "" : "; ") + std::to_string(made_up) +
            " dimension(s) shape inference could not size";
  }
  return " rest on unknown or symbolic shapes" +
         (what.empty() ? std::string() : " (" + what + ", each counted as 1)") +
         (inputs.empty() ? "; shape inference cannot size them from the inputs"
                         : "; give their sizes with --input-shape or --dim");
}

// onnx::unsized_weights in words.
std::string unsized_sentence(std::size_t tensors) {
  return std::to_string(tensors) +
         " weight tensor(s) hold strings or an element type without a fixed size (undefined or "
         "unknown): counted as 0 bytes";
}

// What of a model's measures is a guess, in words (node_measures::estimates).
std::vector<std::string> estimates_of(const ::onnx::GraphProto& g, const onnx::guesses& guessed,
                                      std::size_t nodes, const onnx::input_sizes& sizes) {
  std::vector<std::string> out;
  if (guessed.cost_nodes > 0) {
    out.push_back("the FLOPs of " + std::to_string(guessed.cost_nodes) + " of " +
                  std::to_string(nodes) + " nodes" + shapes_sentence(g, guessed.symbols, sizes));
  }
  if (guessed.bytes_nodes > 0) {
    out.push_back("the output bytes of " + std::to_string(guessed.bytes_nodes) + " of " +
                  std::to_string(nodes) + " nodes" +
                  (guessed.cost_nodes > 0 ? " rest on those shapes too"
                                          : shapes_sentence(g, guessed.symbols, sizes)));
  }
  if (guessed.body_nodes > 0) {
    out.push_back("the FLOPs of " + std::to_string(guessed.body_nodes) +
                  " If/Loop/Scan node(s) leave out their bodies (priced by their outputs)");
  }
  return out;
}

} // namespace

onnx_source::onnx_source(std::string path, std::string_view data, onnx::input_sizes sizes)
    : path_(std::move(path)), data_(data), sizes_(std::move(sizes)) {}

const std::string& onnx_source::file_path() const {
  static const std::string none;
  return data_.data() != nullptr ? none : path_;
}

void onnx_source::declare_inputs(io::output_set& outputs) const {
  protect_inputs(outputs, file_path(), nullptr);
}

void onnx_source::load(io::output_set& outputs) {
  model_.emplace(load_model(path_, data_, reading::graph_views_measured));
  nodes_.reset();
  weight_guesses_.reset();
  protect_inputs(outputs, file_path(), &*model_);
}

::onnx::ModelProto& onnx_source::proto() {
  if (!model_) {
    throw internal_error("shardpoint: onnx_source used before load()");
  }
  return model_->proto();
}

const ::onnx::GraphProto& onnx_source::tensors() {
  if (!model_) {
    throw internal_error("shardpoint: onnx_source used before load()");
  }
  // (Read with the initializers parsed: the skeleton holds them, and the
  // inputs, while the nodes are views.)
  return onnx::graph_with_initializers(*model_);
}

::onnx::ModelProto& onnx_source::skeleton() {
  (void)tensors(); // (loaded)
  return model_->node_views() != nullptr ? model_->mutable_proto_without_nodes() : model_->proto();
}

const onnx::node_graph& onnx_source::nodes() {
  if (!nodes_) {
    nodes_.emplace(onnx::build_graph(*model_));
  }
  return *nodes_;
}

void onnx_source::name_nodes(bool strict) {
  onnx::assign_names(*model_, strict ? onnx::naming::strict : onnx::naming::rename_empty);
}

const model_source::graph_type& onnx_source::graph() {
  return nodes().graph;
}

void onnx_source::check_acyclic() {
  const onnx::node_graph& built = nodes();
  onnx::check_acyclic(*model_, built);
}

std::vector<std::string> onnx_source::names() {
  return onnx::node_names(*model_);
}

std::vector<std::string> onnx_source::op_types() {
  const auto& g = proto().graph();
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(g.node_size()));
  for (const auto& n : g.node()) {
    out.push_back(n.op_type());
  }
  return out;
}

node_measures onnx_source::measure(cost_model how) {
  // The node graph, when not built yet, is built beside shape inference.
  onnx::node_weights w = onnx::measure_nodes(
      *model_, [this]() -> const onnx::node_graph& { return nodes(); }, onnx_cost(how), &sizes_);
  weight_guesses_.emplace(w.unsized_weights, w.made_from_shapes);
  node_measures out;
  out.parameters = onnx::parameter_items(nodes(), w);
  out.cost = std::move(w.cost);
  out.parameter_bytes = std::move(w.parameter_bytes);
  out.output_bytes = std::move(w.output_bytes);
  out.estimates = estimates_of(tensors(), w.guessed, out.cost.size(), sizes_);
  return out;
}

std::vector<std::int64_t> onnx_source::costs(cost_model how, std::vector<std::string>& estimates) {
  onnx::guesses guessed;
  auto costs = onnx::estimate_costs(*model_, onnx_cost(how), &guessed, &sizes_);
  estimates = estimates_of(tensors(), guessed, costs.size(), sizes_);
  return costs;
}

std::optional<sharding_result> onnx_source::annotated() {
  if (!onnx::has_annotations(*model_)) {
    return std::nullopt;
  }
  nodes(); // a graph that cannot be built is reported first, as for points
  return onnx::read_annotations(*model_);
}

sharding_result onnx_source::shard(const std::vector<config::entry>& entries) {
  const auto& n = nodes();
  const auto points = onnx::resolve(*model_, entries);
  return onnx::shard(*model_, n, points);
}

std::vector<diagnostic> onnx_source::validate(const sharding_result& r,
                                              const pipeline_options& options) {
  return onnx::validate(*model_, nodes(), r, options);
}

void onnx_source::write_sharded(const sharding_result& r, const std::filesystem::path& path) {
  onnx::annotate(*model_, r);
  onnx::save_model(*model_, path);
}

parameter_uses onnx_source::parameters(const sharding_result& stages, std::int64_t tensor_parallel,
                                       const std::vector<io::layout_choice>* layout) {
  // Shard tuples as `weights strategy` decides them; a weight read by two
  // stages is held by both.
  const onnx::weight_options wo{static_cast<int>(tensor_parallel), std::nullopt, true};
  return onnx::parameter_uses_of(*model_, nodes(),
                                 onnx::decide(*model_, nodes(), stages, wo, layout));
}

tensor_parallel_probe onnx_source::probe_tensor_parallel() {
  const auto& offsets = nodes().read_offsets; // (a node's reads each: one more than the nodes)
  const std::size_t n = offsets.empty() ? 0 : offsets.size() - 1;
  const sharding_result one(n, std::vector<int>(n, 0), std::vector<int>(n, 0));
  onnx::weight_options wo{2, std::nullopt, true};
  wo.divisible = false; // which dimensions split, whatever their lengths
  const auto decisions = onnx::decide(*model_, nodes(), one, wo, nullptr);
  tensor_parallel_probe out{onnx::parameter_uses_of(*model_, nodes(), decisions), {}};
  for (const auto& e : onnx::tensor_parallel_extents(decisions)) {
    out.divides.emplace_back("along dimension " + std::to_string(e.dimension) + " of weight " +
                                 io::quote(e.weight),
                             e.length);
  }
  return out;
}

std::vector<std::string> onnx_source::weight_estimates() {
  std::vector<std::string> out;
  if (!weight_guesses_) { // not measured: found here
    weight_guesses_.emplace(onnx::unsized_weights(proto().graph(), nodes()),
                            onnx::tensors_made_from_shapes(proto().graph()));
  }
  if (const auto unsized = weight_guesses_->first; unsized > 0) {
    out.push_back(unsized_sentence(unsized));
  }
  const auto& made = weight_guesses_->second;
  if (made.nodes == 0) {
    return out;
  }
  std::string sized = io::human_bytes(static_cast<double>(made.bytes));
  if (made.unsized > 0) {
    sized += ", " + std::to_string(made.unsized) + " of them of a size not read here";
  }
  out.push_back(std::to_string(made.nodes) + " ConstantOfShape node(s) make tensors from " +
                "constant shapes alone (" + sized + "), as a model whose weights were replaced " +
                "by their shapes does: counted as activations, not as weights -- no gradients " +
                "or optimizer states for them");
  return out;
}

void onnx_source::count_one_sample() {
  for (auto& symbol : onnx::named_batch_symbols(tensors(), sizes_.batch_dim, &sizes_)) {
    const bool sized = std::any_of(sizes_.dims.begin(), sizes_.dims.end(),
                                   [&](const auto& d) { return d.first == symbol; });
    if (!sized) {
      sizes_.dims.emplace_back(std::move(symbol), 1);
    }
  }
}

std::optional<held_batch> onnx_source::measured_batch() {
  auto held = onnx::measured_batch(skeleton(), &sizes_);
  return held ? std::optional<held_batch>(held_batch{held->size, std::move(held->where)})
              : std::nullopt;
}

std::vector<std::int64_t> onnx_source::activations(std::int64_t micro_batch_size,
                                                   std::vector<std::string>& notes,
                                                   std::vector<std::string>& estimates) {
  onnx::guesses guessed;
  auto out = onnx::activation_bytes(*model_, nodes(), micro_batch_size, notes, &sizes_, &guessed);
  if (!guessed.batch.empty()) {
    estimates.push_back(guessed.batch);
  }
  if (guessed.bytes_nodes > 0) {
    onnx::input_sizes sized = sizes_; // the batch is sized too: not named as free
    for (const auto& symbol : guessed.batch_symbols) {
      sized.dims.emplace_back(symbol, micro_batch_size);
    }
    estimates.push_back("the activations of " + std::to_string(guessed.bytes_nodes) + " of " +
                        std::to_string(out.size()) + " nodes" +
                        shapes_sentence(tensors(), guessed.symbols, sized));
  }
  if (guessed.unsized_outputs > 0) {
    estimates.push_back(std::to_string(guessed.unsized_outputs) +
                        " node output(s) have no shape "
                        "ONNX shape inference can find: counted as 0 bytes of activations");
  }
  // What runs inside an If, Loop or Scan is no top-level output: their
  // bodies' tensors (a Loop's per iteration, kept for a backward) are not
  // counted, only the node's outputs.
  if (guessed.body_nodes > 0) {
    estimates.push_back("the activations inside the bodies of " +
                        std::to_string(guessed.body_nodes) +
                        " If/Loop/Scan node(s) are not counted (only their outputs)");
  }
  return out;
}

std::vector<std::string> onnx_source::write_tensor_parallel(const sharding_result& r,
                                                            int tensor_parallel,
                                                            io::staged_folder& folder,
                                                            const std::string& prefix) {
  const onnx::weight_options options{tensor_parallel, std::nullopt,
                                     true}; // a tied weight: both stages
  const auto decisions = onnx::decide(*model_, nodes(), r, options, nullptr);
  return write_strategy_files(onnx::strategies(decisions, options, r.num_stages()), folder, prefix,
                              false, weights::layout_form::mindspore);
}

} // namespace shardpoint::app
