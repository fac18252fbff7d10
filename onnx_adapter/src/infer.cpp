// ONNX shape inference node by node: see infer.hpp.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/arena.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "arena.hpp"
#include "chunks.hpp"
#include "graph_nodes.hpp"
#include "infer.hpp"
#include "name_ids.hpp"

namespace shardpoint::onnx::shapes {

namespace si = ::onnx::shape_inference;
using ::onnx::TypeProto;

namespace {

// What InferShapes keeps of a name, in its several tables.
struct tensor {
  TypeProto* type = nullptr;      // registered: what inference reads
  TypeProto* undefined = nullptr; // a declared value without a type
  const ::onnx::TensorProto* data = nullptr;
  const ::onnx::SparseTensorProto* sparse = nullptr;
  const TypeProto* result = nullptr;
  // The initializer whose own type `type` is, untouched by inference (the
  // result can then be that same object, not a copy).
  const ::onnx::TensorProto* typed_by = nullptr;
  // `type`'s id in the memo's table of types (0: not looked up since
  // `type` last changed; a type's id is found when a node reads it).
  std::uint32_t type_id = 0;
  bool shared = false; // `type` is the memo's, shared with other names
};

bool handled(const ::onnx::ModelProto& model) {
  if (model.functions_size() > 0 || model.graph().sparse_initializer_size() > 0) {
    return false;
  }
  for (const auto& n : model.graph().node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

struct node_inference::state {
  state(const ::onnx::GraphProto& g, std::size_t nodes) : state(expected_names(g, nodes)) {}
  // About 128 bytes of types a name.
  explicit state(std::size_t expected)
      : arena(large_arena_options(128 * expected)), names(expected) {
    tensors.reserve(expected);
  }

  static std::size_t expected_names(const ::onnx::GraphProto& g, std::size_t nodes) {
    return static_cast<std::size_t>(g.input_size()) + static_cast<std::size_t>(g.output_size()) +
           static_cast<std::size_t>(g.value_info_size()) +
           static_cast<std::size_t>(g.initializer_size()) + 2 * nodes;
  }

  std::uint32_t id(std::string_view name) { return id(name, name_ids::hash_only(name)); }
  /// The same with `hash`, name_ids::hash_only(name).
  std::uint32_t id(std::string_view name, std::size_t hash) {
    const auto [id, fresh] = names.add(name, static_cast<std::uint32_t>(names.size()), hash);
    if (fresh) {
      tensors.emplace_back();
    }
    return id;
  }
  const tensor* find(std::string_view name) const {
    const auto id = names.find(name);
    return id ? &tensors[*id] : nullptr;
  }
  TypeProto* new_type() { return google::protobuf::Arena::CreateMessage<TypeProto>(&arena); }

  google::protobuf::Arena arena;
  name_ids names; // views into the model
  std::vector<tensor> tensors;
  std::vector<std::uint32_t> initializers; // the graph's initializers' ids, in order
  std::vector<std::size_t> constants;      // the Constant nodes, in order
  // Node v's input and then output names' ids:
  // node_names[node_offsets[v] .. node_offsets[v + 1]) (intern_node_names).
  std::vector<std::uint32_t> node_names;
  std::vector<std::size_t> node_offsets;
  std::vector<std::uint32_t> input_counts;   // node v's inputs
  const ::onnx::GraphProto* graph = nullptr; // (without its nodes, for views)
  // Types declared by the graph (copies: the model is not touched), in its
  // order.
  std::vector<std::pair<std::uint32_t, TypeProto*>> inputs, value_info, outputs;
  // The names it does not declare that inference typed, in their order.
  std::vector<std::uint32_t> added;
};

namespace {

// Every node's input and output names interned before inference, in node
// order (state::node_names). The names are hashed first in chunks side by
// side, then added in order (hashed_name, name_ids.hpp); looking each up as
// inference went, a hash and a string compare on a name scattered over the
// model's arena, was its largest item at 10^6 nodes. A name interned early
// is one inference finds with nothing known of it, as it would not find
// it. The initializers' names are interned after them, once for both
// passes over them (state::initializers). The same pass finds the Constant
// nodes, whose values step 3 reads (state::constants).
template <class Nodes>
void intern_node_names(const Nodes& nodes, const ::onnx::GraphProto& g, node_inference::state& s) {
  const auto n = nodes.size();
  std::vector<std::vector<hashed_name>> names(chunk_count(n));
  std::vector<std::vector<std::size_t>> constants(names.size()); // (step 3's, found here)
  in_chunks(n, [&](std::size_t chunk, std::size_t from, std::size_t to) {
    names[chunk].reserve(3 * (to - from));
    for (std::size_t v = from; v < to; ++v) {
      for (const std::string_view name : nodes.inputs(v)) {
        names[chunk].emplace_back(name, v);
      }
      for (const std::string_view name : nodes.outputs(v)) {
        names[chunk].emplace_back(name, v);
      }
      if (nodes.op_type(v) == "Constant") {
        constants[chunk].push_back(v);
      }
    }
  });
  for (const auto& chunk : constants) {
    s.constants.insert(s.constants.end(), chunk.begin(), chunk.end());
  }
  auto& ids = s.node_names;
  auto& offsets = s.node_offsets;
  offsets.reserve(n + 1);
  s.input_counts.resize(n);
  for (std::size_t v = 0; v < n; ++v) {
    s.input_counts[v] =
        static_cast<std::uint32_t>(static_cast<std::size_t>(nodes.inputs(v).size()));
  }
  std::size_t next = 0; // the node whose offset is due
  for (const auto& chunk : names) {
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      if (i + prefetch_ahead < chunk.size()) {
        s.names.prefetch(chunk[i + prefetch_ahead].hash);
      }
      for (; next <= chunk[i].node; ++next) {
        offsets.push_back(ids.size());
      }
      ids.push_back(s.id(chunk[i].name(), chunk[i].hash));
    }
  }
  for (; next <= n; ++next) {
    offsets.push_back(ids.size());
  }
  s.initializers.reserve(static_cast<std::size_t>(g.initializer_size()));
  for (const auto& t : g.initializer()) {
    s.initializers.push_back(s.id(t.name()));
  }
}

// InferenceContextImpl's answers, from the table, for one node at a time.
class context final : public ::onnx::InferenceContext {
public:
  // Node `n`, whose inputs' ids are `ids` (intern_node_names).
  void reset(const ::onnx::NodeProto& n, const std::uint32_t* ids, node_inference::state& s) {
    node_ = &n;
    inputs_.clear();
    for (int i = 0; i < n.input_size(); ++i) {
      inputs_.push_back(&s.tensors[ids[i]]);
    }
    const auto outputs = static_cast<std::size_t>(n.output_size());
    while (outputs_.size() < outputs) {
      outputs_.push_back(s.new_type());
    }
    for (std::size_t i = 0; i < outputs; ++i) {
      outputs_[i]->Clear();
    }
    output_count_ = outputs;
    data_read_ = 0;
    data_read_past_ = false;
  }
  /// Output i's type, kept by the caller: its slot gets a fresh one.
  TypeProto* take_output(std::size_t i, node_inference::state& s) {
    return std::exchange(outputs_[i], s.new_type());
  }

  const ::onnx::AttributeProto* getAttribute(const std::string& name) const override {
    const auto& attributes = node_->attribute();
    for (int i = attributes.size() - 1; i >= 0; --i) { // the last of a name, as a map keeps it
      if (attributes.Get(i).name() == name) {
        return &attributes.Get(i);
      }
    }
    return nullptr;
  }
  std::size_t getNumInputs() const override { return inputs_.size(); }
  const TypeProto* getInputType(std::size_t i) const override {
    return input(i) != nullptr ? input(i)->type : nullptr;
  }
  const ::onnx::TensorProto* getInputData(std::size_t i) const override {
    read_data(i);
    return input(i) != nullptr ? input(i)->data : nullptr;
  }
  const ::onnx::SparseTensorProto* getInputSparseData(std::size_t i) const override {
    read_data(i);
    const tensor* t = input(i);
    return t != nullptr && t->data == nullptr ? t->sparse : nullptr;
  }
  const ::onnx::TensorShapeProto* getSymbolicInput(std::size_t i) const override {
    input(i);
    return nullptr; // no data propagation
  }
  std::size_t getNumOutputs() const override { return output_count_; }
  TypeProto* getOutputType(std::size_t i) override {
    if (i >= output_count_) {
      throw std::runtime_error("Output " + std::to_string(i) + " is out of bounds.");
    }
    return outputs_[i];
  }
  ::onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override {
    // libonnx's fail_type_inference (its macro names onnx:: from here).
    throw ::onnx::InferenceError("[TypeInferenceError] Attribute " + name +
                                 " does not contain a graph."); // none here
  }

  /// The inputs whose data the inference function asked for since reset()
  /// (bit i: input i), and whether it asked for one past the 64th.
  [[nodiscard]] std::uint64_t data_read() const { return data_read_; }
  [[nodiscard]] bool data_read_past_mask() const { return data_read_past_; }

private:
  const tensor* input(std::size_t i) const {
    if (i >= inputs_.size()) {
      throw std::runtime_error("Input " + std::to_string(i) + " is out of bounds.");
    }
    return inputs_[i];
  }
  void read_data(std::size_t i) const {
    if (i < 64) {
      data_read_ |= std::uint64_t{1} << i;
    } else {
      data_read_past_ = true;
    }
  }

  mutable std::uint64_t data_read_ = 0;
  mutable bool data_read_past_ = false;
  const ::onnx::NodeProto* node_ = nullptr;
  std::vector<const tensor*> inputs_;
  std::vector<TypeProto*> outputs_; // in the arena; reused: cleared for each node
  std::size_t output_count_ = 0;
};

// Step 4's results by what an inference function can see of a node (see
// infer.hpp, "MEMO"): its schema, its attributes, how many inputs and
// outputs it has, its inputs' types and which of them hold data, and the
// data of those it asked for. A model whose layers repeat asks the same
// question once a layer.
class memo {
public:
  // What one inference gave: the outputs' types (nullptr: not set), or an
  // inference error; `reusable` unless an output has a dimension
  // MaterializeSymbolicShape would name (a fresh symbol each time).
  struct outcome {
    bool reusable = true;
    bool failed = false;
    std::vector<TypeProto*> types; // the memo's own (shared by the names it answered)
    std::vector<std::uint32_t> type_ids;
  };

  // What a node is asked by: `signature` of it, then `answers` by the data
  // of `data_inputs` (those the function asked for: bit i, input i).
  struct question {
    bool never = false; // a function that asked for the 65th input's data
    std::uint64_t data_inputs = 0;
    std::unordered_map<std::string, outcome> answers;
  };

  // The largest attribute list, or input data, a key holds.
  static constexpr std::size_t largest_data = 4096;

  /// The node's signature in `key`; false when it has what the memo does
  /// not key (a tensor, graph or type attribute, a sparse input).
  template <class Nodes>
  bool signature(const Nodes& nodes, std::size_t v, const ::onnx::OpSchema& schema,
                 const std::uint32_t* ids, node_inference::state& s, std::string& key) {
    key.clear();
    append(key, reinterpret_cast<std::uintptr_t>(&schema));
    const auto inputs = static_cast<std::uint32_t>(s.input_counts[v]);
    append(key, inputs);
    append(key, static_cast<std::uint32_t>(nodes.outputs(v).size()));
    if constexpr (std::is_same_v<Nodes, view_nodes>) {
      // A view's attributes by their bytes: equal bytes, equal attributes.
      // One holding a tensor, a graph or a type is not keyed, as below.
      const std::string_view bytes = nodes.attribute_bytes(v);
      if (bytes.size() > largest_data || nodes.parsed(v)) {
        return false;
      }
      append(key, static_cast<std::uint64_t>(bytes.size()));
      key += bytes;
    } else {
      const ::onnx::NodeProto& n = nodes.node(v);
      append(key, static_cast<std::uint32_t>(n.attribute_size()));
      for (const auto& a : n.attribute()) {
        if (!attribute(a, key)) {
          return false;
        }
      }
    }
    for (std::uint32_t i = 0; i < inputs; ++i) {
      tensor& t = s.tensors[ids[i]];
      if (t.sparse != nullptr && t.data == nullptr) {
        return false;
      }
      append(key, type_id(t));
      key.push_back(t.data != nullptr ? '\1' : '\0');
    }
    return true;
  }

  /// The data of `q.data_inputs` in `key`; false when one is larger than
  /// the memo keeps.
  static bool data_key(std::uint64_t inputs, std::size_t input_count, const std::uint32_t* ids,
                       const node_inference::state& s, std::string& key) {
    key.clear();
    append(key, inputs);
    for (std::size_t i = 0; i < input_count && i < 64; ++i) {
      if ((inputs >> i & 1U) == 0) {
        continue;
      }
      const ::onnx::TensorProto* data = s.tensors[ids[i]].data;
      if (data == nullptr) {
        key.push_back('\0');
        continue;
      }
      const std::size_t size = data->ByteSizeLong();
      if (size > largest_data) {
        return false;
      }
      key.push_back('\1');
      append(key, static_cast<std::uint64_t>(size));
      data->AppendToString(&key);
    }
    return true;
  }

  /// The question `key` asks, or nullptr when it is new and the memo is
  /// full (then the node is inferred, as without a memo).
  question* ask(const std::string& key) {
    if (const auto at = questions_.find(key); at != questions_.end()) {
      return &at->second;
    }
    return keep(key.size() + sizeof(question)) ? &questions_[key] : nullptr;
  }
  /// Whether `bytes` more may be kept: the memo holds at most most_kept
  /// bytes of keys and answers (a model whose every node asks a new
  /// question, each with kilobytes of data, would otherwise keep them all).
  bool keep(std::size_t bytes) {
    if (kept_ + bytes > most_kept) {
      return false;
    }
    kept_ += bytes;
    return true;
  }
  static constexpr std::size_t most_kept = std::size_t{64} << 20;

  /// `type`'s id: equal types, equal ids (by their bytes).
  std::uint32_t type_id(tensor& t) {
    if (t.type == nullptr) {
      return 0;
    }
    if (t.type_id == 0) {
      t.type_id = id_of(t.type->SerializeAsString());
    }
    return t.type_id;
  }
  std::uint32_t id_of(std::string bytes) {
    const auto [at, fresh] =
        type_ids_.try_emplace(std::move(bytes), static_cast<std::uint32_t>(type_ids_.size() + 1));
    return at->second;
  }

private:
  template <class T>
  static void append(std::string& key, T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    key.append(bytes, sizeof(T));
  }
  static void append_text(std::string& key, const std::string& text) {
    append(key, static_cast<std::uint64_t>(text.size()));
    key += text;
  }
  // What an inference function reads of an attribute: its name, type and
  // scalar or list values (floats by their bits). Tensors, graphs and types
  // are not keyed.
  static bool attribute(const ::onnx::AttributeProto& a, std::string& key) {
    if (a.has_t() || a.has_g() || a.has_sparse_tensor() || a.has_tp() || a.tensors_size() > 0 ||
        a.graphs_size() > 0 || a.sparse_tensors_size() > 0 || a.type_protos_size() > 0 ||
        !a.ref_attr_name().empty()) {
      return false;
    }
    append_text(key, a.name());
    append(key, static_cast<std::int32_t>(a.type()));
    append(key, static_cast<std::uint8_t>((a.has_f() ? 1U : 0U) | (a.has_i() ? 2U : 0U) |
                                          (a.has_s() ? 4U : 0U)));
    append(key, a.f());
    append(key, a.i());
    append_text(key, a.s());
    append(key, static_cast<std::uint64_t>(a.floats_size()));
    for (const float f : a.floats()) {
      append(key, f);
    }
    append(key, static_cast<std::uint64_t>(a.ints_size()));
    for (const auto i : a.ints()) {
      append(key, i);
    }
    append(key, static_cast<std::uint64_t>(a.strings_size()));
    for (const auto& text : a.strings()) {
      append_text(key, text);
    }
    return key.size() <= largest_data;
  }

  std::unordered_map<std::string, question> questions_;
  std::unordered_map<std::string, std::uint32_t> type_ids_;
  std::size_t kept_ = 0; // bytes of keys and answers, roughly
};

// Steps 1 to 4 on `Nodes` (graph_nodes.hpp): the model's own nodes, or
// views; `model` holds everything else (for views, the skeleton, with the
// initializers parsed).
template <class Nodes>
class inference {
public:
  inference(const ::onnx::ModelProto& model, const Nodes& nodes, node_inference::state& s)
      : model_(model), nodes_(nodes), s_(s) {
    for (const auto& o : model.opset_import()) {
      opsets_[o.domain()] = static_cast<int>(o.version());
    }
    auto domain = opsets_.find("");
    if (domain == opsets_.end()) {
      domain = opsets_.find("ai.onnx");
    }
    if (domain != opsets_.end()) {
      default_version_ = domain->second;
    }
  }

  // Steps 1 to 4 (infer.hpp); true when inference ran to the end.
  bool run() {
    const auto& g = model_.graph();
    intern_node_names(nodes_, g, s_);
    si::TraverseGraphsToAddExistingSymbols(g, symbols_);
    declare(g.value_info(), s_.value_info);
    declare(g.input(), s_.inputs);
    declare(g.output(), s_.outputs);
    try {
      for (int k = 0; k < g.initializer_size(); ++k) {
        const auto& t = g.initializer(k);
        tensor& at = s_.tensors[s_.initializers[static_cast<std::size_t>(k)]];
        at.data = &t;
        if (at.type != nullptr) {
          TypeProto type;
          initializer_type(t, type);
          si::checkShapesAndTypes(type, *at.type);
        } else if (model_.ir_version() >= 4) {
          initializer_typed(t, at);
        }
      }
      for (const auto v : s_.constants) {
        if constexpr (std::is_same_v<Nodes, view_nodes>) {
          if (!nodes_.parsed(v)) {
            continue; // (it holds no tensor)
          }
        }
        constants(nodes_.node(v, scratch_)); // (a parsed view: it outlives the pass)
      }
      for (std::size_t v = 0; v < nodes_.size(); ++v) {
        node(v, s_.node_names.data() + s_.node_offsets[v]);
      }
    } catch (const std::bad_alloc&) {
      throw; // out of memory is not a model's fault (a trial's split blamed one)
    } catch (const std::exception&) {
      return false; // as InferShapes' caller catches it: what was inferred stays
    }
    return true;
  }

private:
  void declare(const google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto>& values,
               std::vector<std::pair<std::uint32_t, TypeProto*>>& into) {
    for (const auto& v : values) {
      const auto id = s_.id(v.name());
      TypeProto* type = s_.new_type();
      if (v.has_type()) {
        *type = v.type();
        s_.tensors[id].type = type;
      } else {
        s_.tensors[id].undefined = type;
      }
      into.emplace_back(id, type);
    }
  }

  // Initializer `t`'s own type as `at`'s: one type for every initializer
  // of its element type and dimensions (shared: update() copies it before
  // merging anything into it), with its id in the memo's table.
  void initializer_typed(const ::onnx::TensorProto& t, tensor& at) {
    std::vector<std::int64_t>& shape = shape_;
    shape.assign(1, t.data_type());
    shape.insert(shape.end(), t.dims().begin(), t.dims().end());
    key_.assign(reinterpret_cast<const char*>(shape.data()), // NOLINT: its bytes
                shape.size() * sizeof(std::int64_t));
    auto [at_shape, fresh] = initializer_types_.try_emplace(key_);
    if (fresh) {
      TypeProto* type = s_.new_type();
      initializer_type(t, *type);
      at_shape->second = {type, memo_.id_of(type->SerializeAsString())};
    }
    at.type = at_shape->second.first;
    at.type_id = at_shape->second.second;
    at.shared = true;
    at.typed_by = &t;
  }

  // A Constant's value is data inference may read (whatever its domain).
  void constants(const ::onnx::NodeProto& n) {
    if (n.op_type() != "Constant" || n.output_size() != 1) {
      return;
    }
    for (const auto& a : n.attribute()) {
      if (a.name() != "value") {
        continue;
      }
      if (a.type() == ::onnx::AttributeProto::TENSOR && a.has_t()) {
        s_.tensors[s_.id(n.output(0))].data = &a.t();
      } else if (a.type() == ::onnx::AttributeProto::SPARSE_TENSOR && a.has_sparse_tensor()) {
        s_.tensors[s_.id(n.output(0))].sparse = &a.sparse_tensor();
      }
    }
  }

  // Node v, whose inputs' and then outputs' ids are `ids`: inferred, or
  // answered by the memo when a node it saw asked the same. Its NodeProto
  // (a view's parsed into scratch_) only where a function runs.
  void node(std::size_t v, const std::uint32_t* ids) {
    const auto* schema = schema_of(v);
    if (schema == nullptr) {
      return; // an operator libonnx does not know (no model-local functions here)
    }
    const auto input_count = s_.input_counts[v];
    if (!schema->has_type_and_shape_inference_function()) {
      if (schema->HasFunction()) { // its body's inference names symbols: never memoised
        ctx_.reset(nodes_.node(v, scratch_), ids, s_);
        try {
          si::InferShapeForFunctionNode(*schema->GetFunction(),
                                        ::onnx::OpSchemaRegistry::Instance(), ctx_, options_, {},
                                        &symbols_, &no_data_);
        } catch (const ::onnx::InferenceError&) {
          return; // this node's outputs stay unknown
        }
        update_outputs(v, ids);
      }
      return;
    }
    memo::question* q = nullptr;
    if (memo_.signature(nodes_, v, *schema, ids, s_, key_)) {
      q = memo_.ask(key_);
      if (q == nullptr || q->never ||
          !memo::data_key(q->data_inputs, input_count, ids, s_, data_key_)) {
        q = nullptr;
      } else if (const auto at = q->answers.find(data_key_); at != q->answers.end()) {
        if (at->second.reusable) {
          answer(v, ids, at->second);
          return;
        }
        q = nullptr; // inferred each time
      }
    }
    ctx_.reset(nodes_.node(v, scratch_), ids, s_);
    bool failed = false;
    try {
      schema->GetTypeAndShapeInferenceFunction()(ctx_);
    } catch (const ::onnx::InferenceError&) {
      failed = true; // this node's outputs stay unknown
    }
    if (q != nullptr) {
      remember(v, ids, *q, failed);
    }
    if (!failed) {
      update_outputs(v, ids);
    }
  }

  void update_outputs(std::size_t v, const std::uint32_t* ids) {
    const auto outputs = nodes_.outputs(v);
    for (std::size_t i = 0; i < static_cast<std::size_t>(outputs.size()); ++i) {
      if (!std::string_view(outputs[static_cast<int>(i)]).empty()) {
        update(ids[s_.input_counts[v] + i], i);
      }
    }
  }

  // The memo's answer for the node just inferred, before update() takes its
  // outputs: under the data of every input the function has asked for at
  // this question.
  void remember(std::size_t v, const std::uint32_t* ids, memo::question& q, bool failed) {
    if (ctx_.data_read_past_mask()) {
      q.never = true;
      return;
    }
    if ((q.data_inputs | ctx_.data_read()) != q.data_inputs) {
      q.data_inputs |= ctx_.data_read();
      if (!memo::data_key(q.data_inputs, s_.input_counts[v], ids, s_, data_key_)) {
        return;
      }
    }
    memo::outcome o;
    o.failed = failed;
    for (std::size_t i = 0; !failed && i < static_cast<std::size_t>(nodes_.outputs(v).size());
         ++i) {
      const TypeProto& inferred = *ctx_.getOutputType(i);
      if (inferred.value_case() == TypeProto::VALUE_NOT_SET) {
        o.types.push_back(nullptr);
        o.type_ids.push_back(0);
        continue;
      }
      if (!inferred.has_tensor_type() || names_symbols(inferred.tensor_type())) {
        o.reusable = false;
        break;
      }
      TypeProto* kept = s_.new_type();
      *kept = inferred;
      o.types.push_back(kept);
      o.type_ids.push_back(memo_.id_of(kept->SerializeAsString()));
    }
    if (memo_.keep(data_key_.size() + sizeof(o) + 128 * o.types.size())) {
      q.answers.insert_or_assign(data_key_, std::move(o));
    }
  }

  // Whether MaterializeSymbolicShape would name a dimension of `t`.
  static bool names_symbols(const ::onnx::TypeProto_Tensor& t) {
    if (!t.has_shape()) {
      return false;
    }
    for (const auto& d : t.shape().dim()) {
      if (!d.has_dim_value() && !d.has_dim_param()) {
        return true;
      }
    }
    return false;
  }

  // The memo's outcome `o` as the node's: a type no name has yet is taken
  // as the memo keeps it (shared by every node it answered; update()
  // copies it before merging anything into it), others merged as inferred.
  void answer(std::size_t v, const std::uint32_t* ids, const memo::outcome& o) {
    if (o.failed) {
      return;
    }
    bool reset = false;
    const auto outputs = nodes_.outputs(v);
    for (std::size_t i = 0; i < o.types.size(); ++i) {
      TypeProto* type = o.types[i];
      if (type == nullptr || std::string_view(outputs[static_cast<int>(i)]).empty()) {
        continue;
      }
      const auto id = ids[s_.input_counts[v] + i];
      tensor& t = s_.tensors[id];
      if (t.type == nullptr && t.undefined == nullptr && type->denotation().empty()) {
        t.type = type; // copied before any change (update)
        t.shared = true;
        t.type_id = o.type_ids[i];
        t.typed_by = nullptr;
        s_.added.push_back(id);
        continue;
      }
      if (!reset) {
        ctx_.reset(nodes_.node(v, scratch_), ids, s_);
        reset = true;
      }
      *ctx_.getOutputType(i) = *type;
      update(id, i);
    }
  }

  // The schema of node v by its domain and opset: found once per op type
  // in the default domain (most nodes), else each time.
  const ::onnx::OpSchema* schema_of(std::size_t v) {
    const auto* registry = ::onnx::OpSchemaRegistry::Instance();
    const std::string_view op_type = nodes_.op_type(v);
    const std::string domain(nodes_.domain(v));
    if (domain.empty() && default_version_) {
      const auto [at, fresh] = default_schemas_.try_emplace(op_type, nullptr);
      if (fresh) {
        at->second = registry->GetSchema(std::string(op_type), *default_version_, domain);
      }
      return at->second;
    }
    const auto version = opsets_.find(domain);
    if (version == opsets_.end()) {
      throw ::onnx::InferenceError("[TypeInferenceError] no opset import for domain " +
                                   domain); // which ends inference
    }
    return registry->GetSchema(std::string(op_type), version->second, domain);
  }

  // ShapeInferenceImplBase::updateType, of output i of the node inferred.
  void update(std::uint32_t id, std::size_t i) {
    TypeProto& inferred = *ctx_.getOutputType(i);
    if (inferred.value_case() == TypeProto::VALUE_NOT_SET) {
      return;
    }
    si::MaterializeSymbolicShape(&inferred, symbols_);
    tensor& t = s_.tensors[id];
    t.type_id = 0;
    if (t.shared) { // the memo's: this name's own copy from now on
      TypeProto* own = s_.new_type();
      *own = *t.type;
      t.type = own;
      t.shared = false;
    }
    TypeProto* existing = t.type;
    if (existing == nullptr && inferred.has_tensor_type() && inferred.denotation().empty()) {
      // Merged into a fresh type, a tensor type is copied whole: it is
      // taken instead (the copy was a tenth of inference at 10^6 nodes).
      existing = ctx_.take_output(i, s_);
      s_.added.push_back(id);
      if (TypeProto* undefined = s_.tensors[id].undefined) {
        *undefined = *existing;
      }
      s_.tensors[id].typed_by = nullptr;
      s_.tensors[id].type = existing;
      return;
    }
    if (existing == nullptr) {
      existing = s_.new_type();
      s_.added.push_back(id);
      if (TypeProto* undefined = s_.tensors[id].undefined) {
        *undefined = inferred;
      }
    }
    s_.tensors[id].typed_by = nullptr; // no longer (only) the initializer's
    si::mergeShapesAndTypes(inferred, existing);
    s_.tensors[id].type = existing;
  }

  const ::onnx::ModelProto& model_;
  const Nodes& nodes_;
  node_inference::state& s_;
  ::onnx::NodeProto scratch_; // a view's node, parsed where a function runs
  std::unordered_map<std::string, int> opsets_;
  std::optional<int> default_version_; // of the domain "" (or "ai.onnx")
  std::unordered_map<std::string_view, const ::onnx::OpSchema*> default_schemas_;
  si::SymbolTableImpl symbols_;
  const ::onnx::ShapeInferenceOptions options_{false, 0, false};
  std::unordered_map<std::string, ::onnx::TensorShapeProto> no_data_;
  context ctx_;
  memo memo_;
  std::string key_, data_key_; // reused for every node
  // Initializers' types by element type and dimensions, and their ids.
  std::unordered_map<std::string, std::pair<TypeProto*, std::uint32_t>> initializer_types_;
  std::vector<std::int64_t> shape_; // reused for every initializer
};

} // namespace

void initializer_type(const ::onnx::TensorProto& t, TypeProto& type) {
  auto& tensor_type = *type.mutable_tensor_type();
  tensor_type.set_elem_type(t.data_type());
  auto& shape = *tensor_type.mutable_shape();
  for (const auto d : t.dims()) {
    shape.add_dim()->set_dim_value(d);
  }
}

node_inference::node_inference(std::unique_ptr<state> s) : state_(std::move(s)) {}
node_inference::~node_inference() = default;

bool node_inference::handles(const ::onnx::ModelProto& model) {
  return handled(model);
}

std::unique_ptr<node_inference> node_inference::make(const ::onnx::ModelProto& model) {
  return handled(model) ? make_handled(model) : nullptr;
}

namespace {

template <class Nodes>
std::unique_ptr<node_inference::state> infer_nodes(const ::onnx::ModelProto& model,
                                                   const Nodes& nodes) {
  auto s = std::make_unique<node_inference::state>(model.graph(), nodes.size());
  s->graph = &model.graph();
  inference<Nodes>(model, nodes, *s).run();
  return s;
}

} // namespace

std::unique_ptr<node_inference> node_inference::make_handled(const ::onnx::ModelProto& model) {
  return finish(model, infer_nodes(model, proto_nodes{model.graph()}));
}

std::unique_ptr<node_inference> node_inference::make_handled(const ::onnx::ModelProto& skeleton,
                                                             const wire::node_views& nodes) {
  return finish(skeleton, infer_nodes(skeleton, view_nodes{nodes}));
}

std::unique_ptr<node_inference> node_inference::finish(const ::onnx::ModelProto& model,
                                                       std::unique_ptr<state> s) {
  // Step 5: what inferred_shapes reads, in its order.
  const auto read = [&](const std::vector<std::pair<std::uint32_t, TypeProto*>>& values) {
    for (const auto& [id, type] : values) {
      s->tensors[id].result = type;
    }
  };
  read(s->inputs);
  read(s->value_info);
  for (const auto id : s->added) { // (the memo's type may have been copied since)
    s->tensors[id].result = s->tensors[id].type;
  }
  read(s->outputs);
  for (int k = 0; k < model.graph().initializer_size(); ++k) {
    const auto& t = model.graph().initializer(k);
    tensor& at = s->tensors[s->initializers[static_cast<std::size_t>(k)]];
    if (at.typed_by == &t) {
      at.result = at.type; // its own type, as inference left it
      continue;
    }
    TypeProto* type = s->new_type();
    initializer_type(t, *type);
    at.result = type;
  }
  return std::unique_ptr<node_inference>(new node_inference(std::move(s)));
}

const TypeProto* node_inference::input_type(std::size_t v, std::size_t i) const {
  return state_->tensors[state_->node_names[state_->node_offsets[v] + i]].result;
}

const TypeProto* node_inference::output_type(std::size_t v, std::size_t j) const {
  return input_type(v, state_->input_counts[v] + j);
}

const TypeProto* node_inference::find(std::string_view name) const {
  const tensor* t = state_->find(name);
  return t != nullptr ? t->result : nullptr;
}

} // namespace shardpoint::onnx::shapes
