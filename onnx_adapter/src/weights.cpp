// Tensor parallelism inside each pipeline stage: layouts, strategies,
// per-rank weights, and back.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <shardpoint/io/files.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/tensor_data.hpp>
#include <shardpoint/onnx/weights.hpp>
#include <shardpoint/tensor_layout.hpp>

namespace shardpoint::onnx {
namespace fs = std::filesystem;
using K = io::layout_choice::kind;

namespace {

// ---- the graph as the derivation sees it -------------------------------------

struct graph_view {
  const ::onnx::GraphProto& g;
  std::unordered_map<std::string_view, const ::onnx::TensorProto*> initializer;
  std::unordered_map<std::string_view, int> producer;
  std::unordered_map<std::string_view, std::vector<int>> consumers;

  explicit graph_view(const ::onnx::GraphProto& graph) : g(graph) {
    for (const auto& t : g.initializer()) {
      initializer.emplace(t.name(), &t);
    }
    for (int v = 0; v < g.node_size(); ++v) {
      for (const auto& o : g.node(v).output()) {
        producer.emplace(o, v);
      }
      for (const auto& i : g.node(v).input()) {
        if (!i.empty()) {
          consumers[i].push_back(v);
        }
      }
    }
  }
  [[nodiscard]] bool is_weight(const std::string& t) const { return initializer.count(t) > 0; }
  [[nodiscard]] const ::onnx::NodeProto& node(int v) const { return g.node(v); }
  [[nodiscard]] std::string label(int v) const {
    const auto& n = g.node(v);
    return n.op_type() + " " + (n.name().empty() ? "#" + std::to_string(v) : "'" + n.name() + "'");
  }
  /// A MatMul or Gemm's weight: input 1 when it is an initializer.
  [[nodiscard]] const std::string* weight_of(int v) const {
    const auto& n = g.node(v);
    if ((n.op_type() == "MatMul" || n.op_type() == "Gemm") && n.input_size() >= 2 &&
        is_weight(n.input(1)) && !is_weight(n.input(0))) {
      return &n.input(1);
    }
    return nullptr;
  }
  [[nodiscard]] bool transposed(int v) const {
    const auto& n = g.node(v);
    if (n.op_type() != "Gemm") {
      return false;
    }
    for (const auto& a : n.attribute()) {
      if (a.name() == "transB") {
        return a.i() != 0;
      }
    }
    return false;
  }
  [[nodiscard]] int single_consumer(const std::string& t) const {
    const auto it = consumers.find(t);
    return it != consumers.end() && it->second.size() == 1 ? it->second.front() : -1;
  }
};

// A node's first output; none for a node without outputs (a model may hold
// one: it is walked past, never indexed).
const std::string* first_output(const ::onnx::NodeProto& n) {
  return n.output_size() > 0 ? &n.output(0) : nullptr;
}

bool passes_through(const std::string& op) {
  return op == "Cast" || op == "Identity" || op == "Dropout";
}

// Ops of a block between its column and row layers (attention and MLP).
bool block_op(const std::string& op) {
  static const std::unordered_set<std::string> ops{
      "Add",      "Sub",     "Mul",     "Div",       "Softmax", "MatMul",      "Transpose",
      "Reshape",  "Relu",    "Gelu",    "Erf",       "Tanh",    "Sigmoid",     "Cast",
      "Identity", "Dropout", "Squeeze", "Unsqueeze", "Split",   "Concat",      "Slice",
      "Where",    "Pow",     "Sqrt",    "FastGelu",  "Silu",    "HardSigmoid", "LeakyRelu",
      "Neg",      "Exp",     "Softplus"};
  return ops.count(op) > 0;
}

// The bias a layer's output gets: the first Add with an initializer after it
// (through casts), or Gemm's C.
const std::string* bias_of(const graph_view& v, int layer) {
  const auto& n = v.node(layer);
  if (n.op_type() == "Gemm" && n.input_size() >= 3 && v.is_weight(n.input(2))) {
    return &n.input(2);
  }
  const std::string* out = first_output(n);
  if (out == nullptr) {
    return nullptr;
  }
  std::string t = *out;
  for (int hops = 0; hops < 4; ++hops) {
    const int c = v.single_consumer(t);
    if (c < 0) {
      return nullptr;
    }
    const auto& cn = v.node(c);
    if (passes_through(cn.op_type())) {
      if (first_output(cn) == nullptr) {
        return nullptr;
      }
      t = *first_output(cn);
      continue;
    }
    if (cn.op_type() == "Add" && cn.input_size() == 2) {
      const std::string& other = cn.input(0) == t ? cn.input(1) : cn.input(0);
      return v.is_weight(other) ? &other : nullptr;
    }
    return nullptr;
  }
  return nullptr;
}

// Whether `layer`'s output rejoins the residual stream: through bias Adds
// and casts into an Add of two activations. Returns that Add, or -1.
int residual_join(const graph_view& v, int layer) {
  const std::string* out = first_output(v.node(layer));
  if (out == nullptr) {
    return -1;
  }
  std::string t = *out;
  for (int hops = 0; hops < 8; ++hops) {
    const int c = v.single_consumer(t);
    if (c < 0) {
      return -1;
    }
    const auto& cn = v.node(c);
    if (passes_through(cn.op_type())) {
      if (first_output(cn) == nullptr) {
        return -1;
      }
      t = *first_output(cn);
      continue;
    }
    if (cn.op_type() != "Add" || cn.input_size() != 2) {
      return -1;
    }
    const std::string& other = cn.input(0) == t ? cn.input(1) : cn.input(0);
    if (!v.is_weight(other)) {
      return c;
    }
    if (first_output(cn) == nullptr) {
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
  std::vector<std::string> todo{v.node(row).input(0)};
  while (!todo.empty() && seen.size() < 512) {
    const std::string t = todo.back();
    todo.pop_back();
    const auto it = v.producer.find(t);
    if (it == v.producer.end() || !seen.insert(it->second).second) {
      continue;
    }
    const int p = it->second;
    const auto& pn = v.node(p);
    if (v.weight_of(p) != nullptr) {
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
    for (const auto& i : pn.input()) {
      if (!i.empty() && !v.is_weight(i)) {
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

std::vector<io::layout_choice> derive_layout(const ::onnx::GraphProto& graph,
                                             const node_graph& nodes) {
  const graph_view v(graph);
  std::map<std::string, io::layout_choice> chosen;
  const auto choose = [&](const std::string& name, K how, std::string reason) {
    auto [it, fresh] = chosen.try_emplace(name);
    if (fresh || it->second.how == K::replicated) {
      it->second = {name, how, {}, "", std::move(reason)};
    }
  };
  for (int r = 0; r < graph.node_size(); ++r) {
    const std::string* w = v.weight_of(r);
    if (w == nullptr) {
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
    if (const auto* b = bias_of(v, r)) {
      choose(*b, K::row, "bias of row-parallel " + v.label(r) + ": kept whole");
    }
    for (int c : partners) {
      choose(*v.weight_of(c), K::column,
             "column-parallel: " + v.label(c) + " opens the block of " + v.label(r));
      if (const auto* b = bias_of(v, c)) {
        choose(*b, K::column, "bias of column-parallel " + v.label(c));
      }
    }
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const auto& node = graph.node(n);
    if (node.op_type() == "Gather" && node.input_size() >= 1 && v.is_weight(node.input(0)) &&
        v.initializer.at(node.input(0))->dims_size() == 2) {
      choose(node.input(0), K::vocab, "vocab-parallel: " + v.label(n) + " looks rows up in it");
    }
  }
  // Every initializer a node reads, in the model's order.
  std::set<std::string> read;
  for (std::size_t n = 0; n + 1 < nodes.read_offsets.size(); ++n) {
    for (auto t : nodes.reads(n)) {
      if (v.is_weight(nodes.tensors[t])) {
        read.insert(nodes.tensors[t]);
      }
    }
  }
  std::vector<io::layout_choice> out;
  for (const auto& t : graph.initializer()) {
    if (!read.count(t.name())) {
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

std::vector<weight_decision> decide(const ::onnx::GraphProto& graph, const node_graph& nodes,
                                    const sharding_result& stages, const weight_options& options,
                                    const std::vector<io::layout_choice>* file) {
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
  const graph_view v(graph);
  const auto names = node_names(graph);
  // The stages reading each initializer, with a node of each for messages.
  std::map<std::string, std::map<int, std::size_t>> readers;
  for (std::size_t n = 0; n + 1 < nodes.read_offsets.size(); ++n) {
    const int s = stages.stage(n).value_or(0);
    for (auto t : nodes.reads(n)) {
      if (v.is_weight(nodes.tensors[t])) {
        readers[nodes.tensors[t]].try_emplace(s, n);
      }
    }
  }
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
      if (!readers.count(t.name())) {
        continue;
      }
      const auto it = named.find(t.name());
      choices.push_back(
          it != named.end()
              ? *it->second
              : io::layout_choice{t.name(), K::replicated, {}, "", "not named in the layout file"});
    }
  } else {
    choices = derive_layout(graph, nodes);
  }
  // Which layers are stored transposed (Gemm transB).
  std::set<std::string> transposed;
  for (int n = 0; n < graph.node_size(); ++n) {
    if (const auto* w = v.weight_of(n); w != nullptr && v.transposed(n)) {
      transposed.insert(*w);
    }
  }
  std::vector<weight_decision> out;
  for (const auto& c : choices) {
    const auto& t = *v.initializer.at(c.name);
    weight_decision d{c.name, dims_of(t), t.data_type(), {}, c, {}};
    const auto& r = readers.at(c.name);
    for (const auto& [s, node] : r) {
      d.stages.push_back(s);
    }
    if (d.stages.size() > 1 && !options.replicate_shared) {
      const auto first = r.begin();
      const auto second = std::next(first);
      throw bad_input_error(
          "initializer " + io::quote(c.name) + " is read by stage " + std::to_string(first->first) +
          " (node " + io::quote(names[first->second]) + ") and stage " +
          std::to_string(second->first) + " (node " + io::quote(names[second->second]) +
          "); give --replicate-shared to write it to both");
    }
    const std::size_t rank = d.shape.size();
    const bool t_ = transposed.count(c.name) > 0;
    const auto need = [&](bool ok, const char* what) {
      if (!ok) {
        throw layout_error("For " + c.name + ", a " + io::to_string(c.how) + " layout needs " +
                           what + ", but its shape is " + tuple_text(d.shape));
      }
    };
    switch (c.how) {
    case K::column:
      need(rank == 1 || rank == 2, "a 2-D weight or a 1-D bias");
      d.shard = rank == 1 ? std::vector<std::int64_t>{T}
                : t_      ? std::vector<std::int64_t>{T, 1}
                          : std::vector<std::int64_t>{1, T};
      break;
    case K::row:
      need(rank == 1 || rank == 2, "a 2-D weight or a 1-D bias");
      d.shard = rank == 1 ? std::vector<std::int64_t>{1}
                : t_      ? std::vector<std::int64_t>{1, T}
                          : std::vector<std::int64_t>{T, 1};
      break;
    case K::vocab:
      need(rank == 2, "a 2-D table");
      d.shard = {T, 1};
      break;
    case K::replicated:
      d.shard.assign(rank, 1);
      break;
    case K::tuple:
      d.shard = c.shard;
      break;
    }
    out.push_back(std::move(d));
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

std::vector<weights::stage_strategy> read_strategies(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw bad_input_error(io::quote(folder.string()) + ": no such strategy folder");
  }
  std::map<int, weights::stage_strategy> by_stage;
  std::map<int, std::string> file_of;
  std::vector<fs::path> files; // in name order: the same folder, the same message
  for (const auto& e : fs::directory_iterator(folder)) {
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    const auto ext = path.extension();
    if (name.rfind("stage", 0) != 0 || (ext != ".ckpt" && ext != ".json")) {
      continue;
    }
    auto s = weights::read_strategy(path);
    if (by_stage.count(s.stage)) {
      throw bad_input_error(io::quote(folder.string()) + ": two strategy files for stage " +
                            std::to_string(s.stage) + ", " + io::quote(file_of[s.stage]) + " and " +
                            io::quote(name) +
                            (s.parameters.empty() ? " (which lists no parameter)" : ""));
    }
    file_of[s.stage] = name;
    by_stage.emplace(s.stage, std::move(s));
  }
  if (by_stage.empty()) {
    throw bad_input_error("'" + folder.string() +
                          "': no strategy files (stage<s>.ckpt or stage<s>.json) in it");
  }
  std::vector<weights::stage_strategy> out;
  for (auto& [s, strategy] : by_stage) {
    out.push_back(std::move(strategy));
  }
  return out;
}

namespace {

// The devices of a stage, the same for every parameter of every stage.
std::int64_t devices_of(const std::vector<weights::stage_strategy>& strategies) {
  std::int64_t devices = 0;
  for (const auto& s : strategies) {
    for (const auto& p : s.parameters) {
      if (devices != 0 && p.layout.devices != devices) {
        throw bad_input_error("the strategies give stages " + std::to_string(devices) + " and " +
                              std::to_string(p.layout.devices) + " devices; they must agree");
      }
      devices = p.layout.devices;
    }
  }
  if (devices == 0) {
    throw bad_input_error("the strategies list no parameter: the model has no initializers "
                          "to split");
  }
  return devices;
}

std::string rank_file(std::int64_t rank, bool safetensors) {
  return "rank_" + std::to_string(rank) + "/" +
         (safetensors ? "model.safetensors" : "checkpoint_" + std::to_string(rank) + ".ckpt");
}

// Passes on, of a stream of the tensor's bytes, those inside `runs`.
class run_filter {
public:
  run_filter(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs,
             const std::function<void(const char*, std::size_t)>& sink)
      : runs_(runs), sink_(sink) {}
  void operator()(const char* data, std::size_t size) {
    const std::uint64_t chunk_end = at_ + size;
    while (next_ < runs_.size() && runs_[next_].first < chunk_end) {
      const auto [offset, length] = runs_[next_];
      const std::uint64_t from = std::max(offset, at_);
      const std::uint64_t to = std::min(offset + length, chunk_end);
      if (from < to) {
        sink_(data + (from - at_), static_cast<std::size_t>(to - from));
      }
      if (offset + length <= chunk_end) {
        ++next_;
      } else {
        break;
      }
    }
    at_ = chunk_end;
  }

private:
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs_;
  const std::function<void(const char*, std::size_t)>& sink_;
  std::size_t next_ = 0;
  std::uint64_t at_ = 0;
};

// Refuses a strategy folder that leaves weights out: stages numbered with a
// gap, or a weight some node reads that no stage's strategy names. Either
// means a missing or emptied strategy file, and the ranks written would hold
// a model with weights missing, silently.
void check_covers(const ::onnx::ModelProto& model,
                  const std::vector<weights::stage_strategy>& strategies) {
  std::string stages;
  for (std::size_t k = 0; k < strategies.size(); ++k) {
    stages += (k == 0 ? "" : ", ") + std::to_string(strategies[k].stage);
  }
  for (std::size_t k = 0; k < strategies.size(); ++k) {
    if (strategies[k].stage != static_cast<int>(k)) {
      throw bad_input_error("the strategy folder has files for stages " + stages + ": stage " +
                            std::to_string(k) + " has none");
    }
  }
  std::unordered_set<std::string_view> listed;
  for (const auto& s : strategies) {
    for (const auto& p : s.parameters) {
      listed.insert(p.layout.name);
    }
  }
  std::unordered_set<std::string_view> initializers;
  for (const auto& t : model.graph().initializer()) {
    initializers.insert(t.name());
  }
  const auto nodes = build_graph(model.graph());
  for (std::size_t v = 0; v < nodes.read_offsets.size() - 1; ++v) {
    for (const auto t : nodes.reads(v)) {
      const auto& name = nodes.tensors[t];
      if (initializers.count(name) > 0 && listed.count(name) == 0) {
        throw bad_input_error("initializer " + io::quote(name) + ", read by node " +
                              io::quote(model.graph().node(static_cast<int>(v)).name()) +
                              ", is in no strategy file (the folder has stages " + stages +
                              "; is a strategy file missing or empty?)");
      }
    }
  }
}

} // namespace

void write_rank_weights(const ::onnx::ModelProto& model, const fs::path& model_path,
                        const std::vector<weights::stage_strategy>& strategies,
                        io::staged_folder& out, bool safetensors) {
  check_covers(model, strategies);
  const std::int64_t D = devices_of(strategies);
  const fs::path base = model_path.has_parent_path() ? model_path.parent_path() : ".";
  std::unordered_map<std::string_view, const ::onnx::TensorProto*> initializer;
  for (const auto& t : model.graph().initializer()) {
    initializer.emplace(t.name(), &t);
  }
  for (const auto& s : strategies) {
    for (const auto& p : s.parameters) {
      const auto it = initializer.find(p.layout.name);
      if (it == initializer.end()) {
        throw bad_input_error("the strategy of stage " + std::to_string(s.stage) + " names '" +
                              p.layout.name + "', which is no initializer of the model");
      }
      const auto& t = *it->second;
      if (std::vector<std::int64_t>(t.dims().begin(), t.dims().end()) != p.layout.shape) {
        throw bad_input_error("initializer '" + p.layout.name +
                              "' does not have the shape the strategy gives it " +
                              tuple_text(p.layout.shape));
      }
    }
    for (std::int64_t r = 0; r < D; ++r) {
      const std::int64_t rank = s.stage * D + r;
      std::vector<weights::tensor_source> tensors;
      for (const auto& p : s.parameters) {
        const auto& t = *initializer.at(p.layout.name);
        const auto size = element_bytes(t.data_type());
        if (!size) {
          throw unsupported_error("initializer " + io::quote(t.name()) +
                                  " has no fixed element size");
        }
        const tensor_slice slice = slice_of(p.layout, r);
        auto runs = std::make_shared<std::vector<std::pair<std::uint64_t, std::uint64_t>>>(
            byte_runs(p.layout.shape, slice, *size));
        std::vector<std::int64_t> shape;
        for (std::size_t i = 0; i < slice.begin.size(); ++i) {
          shape.push_back(slice.end[i] - slice.begin[i]);
        }
        const auto bytes = static_cast<std::uint64_t>(slice.elements()) * *size;
        tensors.push_back(
            {t.name(), shape, t.data_type(), bytes, [&t, &base, runs](const auto& sink) {
               run_filter filter(*runs, sink);
               for_each_chunk(t, base, [&](const char* d, std::size_t n) { filter(d, n); });
             }});
      }
      const fs::path file = out.file(rank_file(rank, safetensors));
      if (safetensors) {
        weights::write_safetensors(file, tensors);
      } else {
        weights::write_checkpoint(file, tensors);
      }
    }
  }
}

namespace {

// A whole tensor being merged from its ranks' slices.
struct merged_tensor {
  std::vector<std::int64_t> shape;
  int onnx_type = -1;
  std::string data;
  std::map<std::vector<std::int64_t>, std::int64_t> filled; ///< slices placed: begin -> rank
};

// What split wrote, by fingerprint: a file whose bytes are another rank's
// file was moved or copied (two rank files swapped merge into a model with
// wrong weights); one edited in place (trained further) matches none.
class rank_file_identity {
public:
  explicit rank_file_identity(const fs::path& ranks_dir)
      : recorded_(io::recorded_fingerprints(ranks_dir)) {
    for (const auto& [name, print] : recorded_) {
      written_as_.emplace(print, name);
    }
  }

  /// Throws bad_input_error when `file` (`relative` to the ranks folder)
  /// holds what split wrote under another name.
  void check(const fs::path& file, const std::string& relative) const {
    const auto it = recorded_.find(relative);
    if (it == recorded_.end()) {
      return;
    }
    const auto print = io::fingerprint(file);
    if (print == it->second) {
      return;
    }
    const auto [from, to] = written_as_.equal_range(print);
    if (from != to) {
      throw bad_input_error(io::quote(file.string()) + ": holds what shardpoint wrote as " +
                            io::quote(from->second) +
                            " (rank files swapped or copied?); a rank file changed in place, "
                            "e.g. trained further, is taken as it is");
    }
  }

private:
  std::map<std::string, std::string> recorded_; ///< file -> fingerprint, as split wrote them
  std::multimap<std::string, std::string> written_as_;
};

// The rank's file in the ranks folder: its checkpoint or its safetensors.
fs::path rank_file_in(const fs::path& ranks_dir, std::int64_t rank) {
  std::error_code ec;
  for (const bool safetensors : {false, true}) {
    fs::path file = ranks_dir / rank_file(rank, safetensors);
    if (fs::exists(file, ec)) {
      return file;
    }
  }
  throw bad_input_error("'" + (ranks_dir / ("rank_" + std::to_string(rank))).string() +
                        "': no checkpoint_" + std::to_string(rank) +
                        ".ckpt or model.safetensors for rank " + std::to_string(rank));
}

// Places rank `rank`'s `piece` of tensor `name` (read from `file`) into `f`
// as `slice`; a replica of a slice already placed must hold the same bytes.
void place_slice(merged_tensor& f, const weights::stored_tensor& piece, const tensor_slice& slice,
                 const std::string& name, const fs::path& file, std::int64_t rank) {
  const auto size = element_bytes(piece.onnx_type).value_or(0);
  if (const auto placed = f.filled.find(slice.begin); placed != f.filled.end()) {
    std::uint64_t at = 0;
    bool same = piece.onnx_type == f.onnx_type;
    for (const auto& [offset, length] : byte_runs(f.shape, slice, size)) {
      same = same && at + length <= piece.data.size() &&
             std::equal(piece.data.data() + at, piece.data.data() + at + length,
                        f.data.data() + offset);
      at += length;
    }
    if (!same || at != piece.data.size()) {
      throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(name) + " of rank " +
                            std::to_string(rank) + " differs from its replica in rank " +
                            std::to_string(placed->second) +
                            "; replicas of one slice must hold the same values");
    }
    return;
  }
  if (f.onnx_type < 0) {
    f.onnx_type = piece.onnx_type;
    std::uint64_t count = 1;
    for (auto d : f.shape) {
      count *= static_cast<std::uint64_t>(d);
    }
    f.data.assign(count * size, '\0');
  } else if (f.onnx_type != piece.onnx_type) {
    throw bad_input_error(io::quote(file.string()) + ": tensor '" + name +
                          "' has another type than in the other ranks");
  }
  const auto runs = byte_runs(f.shape, slice, size);
  std::uint64_t total = 0;
  for (const auto& [offset, length] : runs) {
    total += length;
  }
  if (piece.data.size() != total) {
    throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(name) + " holds " +
                          std::to_string(piece.data.size()) + " bytes; its slice needs " +
                          std::to_string(total));
  }
  std::uint64_t at = 0;
  for (const auto& [offset, length] : runs) {
    std::copy_n(piece.data.data() + at, length, f.data.data() + offset);
    at += length;
  }
  f.filled.emplace(slice.begin, rank);
}

} // namespace

void merge_rank_weights(const std::vector<weights::stage_strategy>& strategies,
                        const fs::path& ranks_dir, const fs::path& output) {
  const std::int64_t D = devices_of(strategies);
  std::map<std::string, merged_tensor> tensors;
  std::vector<std::string> order;
  const rank_file_identity identity(ranks_dir);
  for (const auto& s : strategies) {
    for (std::int64_t r = 0; r < D; ++r) {
      const std::int64_t rank = s.stage * D + r;
      const fs::path file = rank_file_in(ranks_dir, rank);
      identity.check(file, fs::relative(file, ranks_dir).generic_string());
      auto stored = weights::read_weights(file);
      for (const auto& p : s.parameters) {
        auto [it, fresh] = tensors.try_emplace(p.layout.name);
        if (fresh) {
          order.push_back(p.layout.name);
          it->second.shape = p.layout.shape;
        }
        const tensor_slice slice = slice_of(p.layout, r);
        const auto found = stored.find(p.layout.name);
        if (found == stored.end()) {
          throw bad_input_error(io::quote(file.string()) + ": no tensor " +
                                io::quote(p.layout.name));
        }
        std::vector<std::int64_t> slice_shape;
        for (std::size_t i = 0; i < slice.begin.size(); ++i) {
          slice_shape.push_back(slice.end[i] - slice.begin[i]);
        }
        if (found->second.shape != slice_shape) {
          throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(p.layout.name) +
                                " has shape " + tuple_text(found->second.shape) + "; rank " +
                                std::to_string(rank) + "'s slice of it is " +
                                tuple_text(slice_shape));
        }
        place_slice(it->second, found->second, slice, p.layout.name, file, rank);
      }
    }
  }
  std::vector<weights::tensor_source> sources;
  for (const auto& name : order) {
    const merged_tensor& f = tensors.at(name);
    sources.push_back({name, f.shape, f.onnx_type, f.data.size(),
                       [&f](const auto& sink) { sink(f.data.data(), f.data.size()); }});
  }
  weights::write_safetensors(output, sources);
}

} // namespace shardpoint::onnx
