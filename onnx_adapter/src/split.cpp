// One runnable ONNX model per stage.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/onnx/split.hpp>
#include <shardpoint/onnx/tensor_data.hpp>

#include "graph_nodes.hpp"
#include "node_view.hpp"
#include "shapes.hpp"

namespace shardpoint::onnx {
namespace fs = std::filesystem;

namespace {

// "node 3 'name'": node v by its display name (node_name()), said only
// in an error.
using name_of_node = std::function<std::string(std::size_t)>;

std::string node_text(const name_of_node& name, std::size_t v) {
  return "node " + std::to_string(v) + " '" + name(v) + "'";
}

} // namespace

namespace {

// Step 1: every node's group (stage, or device with --by device) and the
// stage parts, refusing what a chain of stage models cannot be: a node
// without a group, a stage on two devices, an empty group, data flowing to
// an earlier group.
std::vector<int> group_nodes(std::size_t n, const name_of_node& names, const node_graph& nodes,
                             const sharding_result& result, const split_options& options,
                             io::split_plan& plan) {
  const char* what = options.by_device ? "device" : "stage";
  const char* attribute = options.by_device ? ipu_attribute : stage_attribute;
  std::vector<int> group(n);
  int groups = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const auto x = options.by_device ? result.device(v) : result.stage(v);
    if (!x) {
      throw invalid_sharding_error(
          node_text(names, v) + " has no " + attribute + "; every node needs one to be split by " +
          what +
          (options.by_device ? std::string()
                             : std::string(" (give the points stages, NODE=DEVICE:STAGE, or split "
                                           "--by device)")));
    }
    group[v] = *x;
    groups = std::max(groups, *x + 1);
  }
  plan.stages.resize(static_cast<std::size_t>(groups));
  std::vector<bool> device_known(plan.stages.size(), false);
  for (std::size_t v = 0; v < n; ++v) {
    auto& part = plan.stages[static_cast<std::size_t>(group[v])];
    const int device = options.by_device ? group[v] : result.device(v).value_or(group[v]);
    if (device_known[static_cast<std::size_t>(group[v])] && part.device != device) {
      throw invalid_sharding_error("stage " + std::to_string(group[v]) + " is split over devices " +
                                   std::to_string(part.device) + " and " + std::to_string(device) +
                                   " (" + node_text(names, v) +
                                   "); a stage model runs on one device");
    }
    device_known[static_cast<std::size_t>(group[v])] = true;
    part.device = device;
    part.nodes.push_back(v);
  }
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    auto& part = plan.stages[s];
    part.stage = static_cast<int>(s);
    part.file = (options.by_device ? "device_" : "stage_") + std::to_string(s) + ".onnx";
    if (part.nodes.empty()) {
      throw invalid_sharding_error(std::string(what) + " " + std::to_string(s) + " has no node; " +
                                   what + "s must be numbered 0.." + std::to_string(groups - 1) +
                                   " without gaps");
    }
  }
  for (std::size_t v = 0; v < n; ++v) { // data flows forwards only
    for (auto t : nodes.reads(v)) {
      const auto p = nodes.producer[t];
      if (p != node_graph::no_producer && group[p] > group[v]) {
        throw invalid_sharding_error("tensor " + io::quote(nodes.tensors[t]) + " flows from " +
                                     what + " " + std::to_string(group[p]) + " (" +
                                     node_text(names, p) + ") back to " + what + " " +
                                     std::to_string(group[v]) + " (" + node_text(names, v) +
                                     "); stage models run in " + what + " order");
      }
    }
  }
  return group;
}

// What each tensor is in the model: an initializer (with its bytes), a graph
// output, and its place (the node and output slot that make it), which
// orders the stages' inputs and outputs.
struct tensor_places {
  std::unordered_map<std::string_view, std::int64_t> initializer_bytes;
  std::unordered_set<std::string_view> graph_outputs;
  std::unordered_map<std::string_view, std::uint32_t> id;
  std::vector<std::pair<std::size_t, int>> rank;

  // (`g` the graph, or a skeleton's: its initializers and outputs; its
  // nodes `graph_nodes`.)
  template <class Nodes>
  tensor_places(const Nodes& graph_nodes, const ::onnx::GraphProto& g, const node_graph& nodes) {
    const auto n = graph_nodes.size();
    for (const auto& t : g.initializer()) {
      initializer_bytes.emplace(t.name(), shapes::tensor_bytes(t));
    }
    for (const auto& t : g.sparse_initializer()) {
      initializer_bytes.emplace(t.values().name(), shapes::tensor_bytes(t.values()));
    }
    for (const auto& o : g.output()) {
      graph_outputs.insert(o.name());
    }
    rank.assign(nodes.tensors.size(), {n, 0});
    for (std::uint32_t t = 0; t < nodes.tensors.size(); ++t) {
      id.emplace(nodes.tensors[t], t);
    }
    for (std::size_t v = 0; v < n; ++v) {
      const auto& outs = graph_nodes.outputs(v);
      for (int k = 0; k < static_cast<int>(outs.size()); ++k) {
        if (const auto it = id.find(std::string_view(outs[k])); it != id.end()) {
          rank[it->second] = {v, k};
        }
      }
    }
  }
  [[nodiscard]] bool earlier(std::uint32_t a, std::uint32_t b) const { return rank[a] < rank[b]; }
};

// Step 2: what each stage reads: its own initializers (into the part), the
// graph inputs it reads (returned per stage), and the tensors other stages
// make (`readers`: tensor -> the stages that read it).
std::vector<std::set<std::uint32_t>> stage_reads(const node_graph& nodes,
                                                 const std::vector<int>& group,
                                                 const tensor_places& places, io::split_plan& plan,
                                                 std::map<std::uint32_t, std::set<int>>& readers) {
  std::vector<std::set<std::uint32_t>> graph_inputs_read(plan.stages.size());
  for (auto& part : plan.stages) {
    std::set<std::uint32_t> own;
    for (auto v : part.nodes) {
      for (auto t : nodes.reads(v)) {
        const auto p = nodes.producer[t];
        if (p != node_graph::no_producer) {
          if (group[p] != part.stage) {
            readers[t].insert(part.stage);
          }
        } else if (places.initializer_bytes.count(nodes.tensors[t])) {
          own.insert(t);
        } else {
          graph_inputs_read[static_cast<std::size_t>(part.stage)].insert(t);
        }
      }
    }
    part.tensors.assign(own.begin(), own.end());
    for (auto t : own) {
      part.initializer_bytes += static_cast<std::size_t>(
          std::max<std::int64_t>(0, places.initializer_bytes.at(nodes.tensors[t])));
    }
  }
  return graph_inputs_read;
}

// Every weight each stage holds, as every other figure counts them
// (shapes::model_weights): the initializers and Constant values its nodes
// read, once each, and what its nodes hold themselves.
void stage_weights(const shapes::model_weights& weights, const node_graph& nodes,
                   io::split_plan& plan) {
  for (auto& part : plan.stages) {
    std::set<std::uint32_t> read;
    std::int64_t bytes = 0;
    for (auto v : part.nodes) {
      bytes = detail::checked_add(bytes, weights.held_bytes(v)).value_or(INT64_MAX);
      for (auto t : nodes.reads(v)) {
        if (weights.tensors[t].bytes >= 0 && read.insert(t).second) {
          bytes = detail::checked_add(bytes, weights.tensors[t].bytes).value_or(INT64_MAX);
        }
      }
    }
    part.weight_bytes = bytes;
  }
}

// Step 3: what passes between stages. Per stage, the tensors it receives
// (with the stage that sends each) and sends (with the stages that receive
// each): straight from producer to reader, or with --relay through every
// stage between.
struct passing {
  std::vector<std::vector<std::pair<std::uint32_t, int>>> in;
  std::vector<std::map<std::uint32_t, std::set<int>>> out;
};

passing route(const node_graph& nodes, const std::vector<int>& group,
              const std::map<std::uint32_t, std::set<int>>& readers, std::size_t stages,
              bool relay) {
  passing p{std::vector<std::vector<std::pair<std::uint32_t, int>>>(stages),
            std::vector<std::map<std::uint32_t, std::set<int>>>(stages)};
  for (const auto& [t, to] : readers) {
    const int from = group[nodes.producer[t]];
    if (relay) {
      const int last = *to.rbegin();
      for (int k = from; k < last; ++k) {
        p.out[static_cast<std::size_t>(k)][t].insert(k + 1);
        p.in[static_cast<std::size_t>(k + 1)].emplace_back(t, k);
      }
    } else {
      for (int c : to) {
        p.out[static_cast<std::size_t>(from)][t].insert(c);
        p.in[static_cast<std::size_t>(c)].emplace_back(t, from);
      }
    }
  }
  return p;
}

// Step 4: one stage's inputs -- the graph inputs it reads in the model's
// order, then what earlier stages pass it in the order the model makes
// them -- and outputs: what later stages or the model need, in production
// order. Records which stages read each graph input.
template <class Nodes>
void stage_interface(const Nodes& graph_nodes, const ::onnx::GraphProto& g, const node_graph& nodes,
                     const tensor_places& places, const std::set<std::uint32_t>& inputs_read,
                     passing& passed, io::stage_part& part,
                     std::map<std::string, std::vector<int>>& graph_input_readers) {
  const auto s = static_cast<std::size_t>(part.stage);
  for (const auto& i : g.input()) {
    const auto it = places.id.find(i.name());
    if (it != places.id.end() && inputs_read.count(it->second)) {
      part.inputs.push_back({i.name(), std::nullopt});
      graph_input_readers[i.name()].push_back(part.stage);
    }
  }
  for (auto t : inputs_read) { // read but defined nowhere: still an input
    if (std::none_of(g.input().begin(), g.input().end(),
                     [&](const auto& i) { return i.name() == nodes.tensors[t]; })) {
      part.inputs.push_back({nodes.tensors[t], std::nullopt});
      graph_input_readers[nodes.tensors[t]].push_back(part.stage);
    }
  }
  auto& in = passed.in[s];
  std::sort(in.begin(), in.end(),
            [&](const auto& a, const auto& b) { return places.earlier(a.first, b.first); });
  for (const auto& [t, from] : in) {
    part.inputs.push_back({nodes.tensors[t], from});
  }
  const auto& sent = passed.out[s];
  std::vector<std::uint32_t> out;
  for (const auto& [t, to] : sent) {
    out.push_back(t);
  }
  for (auto v : part.nodes) {
    for (const std::string_view o : graph_nodes.outputs(v)) {
      if (places.graph_outputs.count(o) && !sent.count(places.id.at(o))) {
        out.push_back(places.id.at(o));
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [&](std::uint32_t a, std::uint32_t b) { return places.earlier(a, b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  for (auto t : out) {
    io::stage_output o{nodes.tensors[t], {}, places.graph_outputs.count(nodes.tensors[t]) > 0};
    if (const auto it = sent.find(t); it != sent.end()) {
      o.to_stages.assign(it->second.begin(), it->second.end());
    }
    part.outputs.push_back(std::move(o));
  }
}

} // namespace

namespace {

// plan_split on `graph_nodes`, the nodes of `g` (graph_nodes.hpp: `g` the
// graph, or the skeleton's holding its initializers and outputs), their
// weights `weights_of()` and display names `names`.
template <class Nodes, class Weights>
io::split_plan plan_on(const Nodes& graph_nodes, const ::onnx::GraphProto& g,
                       const node_graph& nodes, const sharding_result& result,
                       const split_options& options, const name_of_node& names,
                       Weights weights_of) {
  io::split_plan plan;
  const std::vector<int> group =
      group_nodes(graph_nodes.size(), names, nodes, result, options, plan);
  const tensor_places places(graph_nodes, g, nodes);
  std::map<std::uint32_t, std::set<int>> readers;
  const auto graph_inputs_read = stage_reads(nodes, group, places, plan, readers);
  stage_weights(weights_of(), nodes, plan);
  passing passed = route(nodes, group, readers, plan.stages.size(), options.relay);
  std::map<std::string, std::vector<int>> graph_input_readers;
  for (auto& part : plan.stages) {
    stage_interface(graph_nodes, g, nodes, places,
                    graph_inputs_read[static_cast<std::size_t>(part.stage)], passed, part,
                    graph_input_readers);
  }
  // The chain's own inputs and outputs, in the model's order.
  for (const auto& i : g.input()) {
    if (!places.initializer_bytes.count(i.name())) {
      const auto it = graph_input_readers.find(i.name());
      plan.inputs.push_back(
          {i.name(), it == graph_input_readers.end() ? std::vector<int>{} : it->second});
    }
  }
  for (const auto& o : g.output()) {
    const auto it = places.id.find(o.name());
    std::optional<int> from;
    if (it != places.id.end() && nodes.producer[it->second] != node_graph::no_producer) {
      from = group[nodes.producer[it->second]];
    }
    plan.outputs.push_back({o.name(), from});
  }
  return plan;
}

} // namespace

io::split_plan plan_split(const ::onnx::GraphProto& g, const node_graph& nodes,
                          const sharding_result& result, const split_options& options) {
  return plan_on(
      proto_nodes{g}, g, nodes, result, options, [&](std::size_t v) { return node_name(g, v); },
      [&] { return shapes::weights_of(g, nodes); });
}

io::split_plan plan_split(const loaded_model& model, const node_graph& nodes,
                          const sharding_result& result, const split_options& options) {
  const name_of_node names = [&](std::size_t v) { return node_name(model, v); };
  if (const auto* views = model.node_views(); views != nullptr && !views->initializers_as_views) {
    const auto& g = model.proto_without_nodes().graph(); // (holds the initializers)
    return plan_on(view_nodes{*views}, g, nodes, result, options, names,
                   [&] { return shapes::weights_of(*views, g, nodes); });
  }
  return plan_split(model.proto().graph(), nodes, result, options);
}

namespace {

// The types of the tensors that cross between stages, by name.
using crossing_type_map = std::unordered_map<std::string, ::onnx::TypeProto>;

// The type crossing_types() found for `name`; a name it has none for is read
// (or given as a graph output) without any node, graph input or initializer
// making it, which the ONNX checker refuses.
const ::onnx::TypeProto& type_of(const crossing_type_map& types, const std::string& name,
                                 std::int64_t stage) {
  const auto it = types.find(name);
  if (it == types.end()) {
    throw input_error("tensor " + io::quote(name) + " of stage " + std::to_string(stage) +
                      " is made by no node and is no graph input or initializer (the ONNX "
                      "checker refuses such a model)");
  }
  return it->second;
}

// The types of the tensors crossing stages, from ONNX shape inference
// (`types`), which is done (and the model restored) before any node is
// copied into a stage.
std::unordered_map<std::string, ::onnx::TypeProto>
crossing_types(const shapes::inferred_shapes& types, const io::split_plan& plan) {
  std::unordered_map<std::string, ::onnx::TypeProto> out;
  const auto note = [&](const std::string& name) {
    const auto* type = types.find(name);
    if (type == nullptr || !type->has_tensor_type() || type->tensor_type().elem_type() == 0) {
      throw input_error("tensor '" + name +
                        "' passes between stages but ONNX shape inference finds no type for it; "
                        "give it a value_info entry in the model");
    }
    out.emplace(name, *type);
  };
  for (const auto& part : plan.stages) {
    for (const auto& i : part.inputs) {
      if (i.from_stage) {
        note(i.name);
      }
    }
    for (const auto& o : part.outputs) {
      if (!o.graph_output) {
        note(o.name);
      }
    }
  }
  return out;
}

// Makes the external data file `location` of tensor `tensor` (inside the
// model's folder: io::external_data_file) reachable from the stage files
// without opening it: a hard link in the output folder, as ONNX Runtime
// refuses data paths that leave a model's folder; where no hard link can be
// made (another file system), a copy. It keeps its relative name unless a
// file of the split itself has that name (`taken`), then goes under
// external_data/. Returns the location to write.
std::string relocated(const std::string& location, const std::string& tensor,
                      const fs::path& model_path, const fs::path& model_dir, io::staged_folder& out,
                      std::unordered_map<std::string, std::string>& done,
                      std::set<std::string>& taken) {
  if (const auto it = done.find(location); it != done.end()) {
    return it->second;
  }
  const fs::path file = io::external_data_file(model_dir, location, tensor);
  if (std::error_code ec; fs::equivalent(file, model_path, ec)) {
    throw input_error("initializer " + io::quote(tensor) + ": its external data location " +
                      io::quote(location) + " is the model file itself");
  }
  std::string name = fs::path(location).lexically_normal().generic_string();
  for (int k = 1; taken.count(name) > 0; ++k) {
    name = "external_data/" + (k > 1 ? std::to_string(k) + "/" : std::string()) +
           fs::path(location).lexically_normal().generic_string();
  }
  taken.insert(name);
  const fs::path link = out.file(name);
  std::error_code ec;
  fs::create_hard_link(file, link, ec);
  if (ec) {
    fs::copy_file(file, link, ec);
    if (!ec) {
      // Synced before the folder is committed, as every file written.
      const int fd = ::open(link.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::fsync(fd) != 0) {
        ec.assign(errno, std::generic_category());
      }
      if (fd >= 0) {
        ::close(fd);
      }
    }
    if (ec) {
      throw input_error(io::quote(link.string()) + ": cannot link or copy the external data file " +
                        io::quote(file.string()) + ": " + ec.message());
    }
  }
  done.emplace(location, name);
  return name;
}

// Below this many bytes a tensor stays in the stage's file, as onnx's own
// convert_model_to_external_data keeps it (its size_threshold, 1024): the
// shape and axes constants, which onnx's shape inference reads and cannot
// read from external data (a trial's stages of light_resnet50, whose
// ConstantOfShape nodes read 8-32-byte shapes, failed infer_shapes_path).
constexpr std::int64_t inline_below = 1024;

// Whether the stage's copy of `t` goes to its data file.
bool moved_out(const ::onnx::TensorProto& t) {
  return element_bytes(t.data_type()).has_value() && shapes::tensor_bytes(t) >= inline_below;
}

// `t` with its data in the message: a copy, or, when held as external data,
// its bytes read into raw_data.
void copy_inline(const ::onnx::TensorProto& source, const fs::path& model_dir,
                 ::onnx::TensorProto& t) {
  if (!is_external(source)) {
    t.CopyFrom(source);
    return;
  }
  t.Clear();
  t.set_name(source.name());
  t.set_data_type(source.data_type());
  t.mutable_dims()->CopyFrom(source.dims());
  t.set_doc_string(source.doc_string());
  std::string& raw = *t.mutable_raw_data();
  for_each_chunk(source, model_dir, [&](const char* p, std::size_t n) { raw.append(p, n); });
}

// Writes the tensors of `part` of inline_below bytes or more into `data` (a
// new file) and rewrites the stage's initializers to point at it, 64-byte
// aligned; smaller ones and those without a fixed element size (strings)
// stay inline. No file when `data` is empty (no tensor is moved out).
// `sources[k]` is the model's initializer for the stage's k-th, with its data
// (`data_of(i)` when the model read is a skeleton that left it out).
void externalise(::onnx::GraphProto& stage, const std::vector<const ::onnx::TensorProto*>& sources,
                 const std::vector<int>& indices, const loaded_model* whole, const fs::path& data,
                 const std::string& location, const fs::path& model_dir) {
  // Initializer k's source with its data (read again from a skeleton's input).
  const auto with_data = [&](int k) {
    return whole != nullptr ? initializer_with_data(*whole, indices[static_cast<std::size_t>(k)])
                            : std::nullopt;
  };
  if (data.empty()) {
    for (int k = 0; k < stage.initializer_size(); ++k) {
      const auto reread = with_data(k);
      copy_inline(reread ? *reread : *sources[static_cast<std::size_t>(k)], model_dir,
                  *stage.mutable_initializer(k));
    }
    return;
  }
  // Through write_atomically, as every output: synced before the folder is
  // committed, and a failed write said as one.
  io::write_atomically(data, [&](int fd) {
    io::file_writer out(fd);
    int err = 0;
    const auto put = [&](std::string_view bytes) { err = err != 0 ? err : out.write(bytes); };
    static constexpr char zeros[64] = {};
    std::uint64_t at = 0;
    for (int k = 0; k < stage.initializer_size(); ++k) {
      auto& t = *stage.mutable_initializer(k);
      const auto reread = with_data(k);
      const auto& source = reread ? *reread : *sources[static_cast<std::size_t>(k)];
      if (!moved_out(source)) {
        copy_inline(source, model_dir, t);
        continue;
      }
      const std::uint64_t pad = (64 - at % 64) % 64;
      put({zeros, static_cast<std::size_t>(pad)});
      at += pad;
      const std::uint64_t begin = at;
      for_each_chunk(source, model_dir, [&](const char* p, std::size_t n) {
        put({p, n});
        at += n;
      });
      t.set_name(source.name());
      t.set_data_type(source.data_type());
      t.mutable_dims()->CopyFrom(source.dims());
      t.set_doc_string(source.doc_string());
      t.set_data_location(::onnx::TensorProto::EXTERNAL);
      const auto add = [&](const char* key, const std::string& value) {
        auto* e = t.add_external_data();
        e->set_key(key);
        e->set_value(value);
      };
      add("location", location);
      add("offset", std::to_string(begin));
      add("length", std::to_string(at - begin));
    }
    return err;
  });
}

// write_split() on the whole model, or on a skeleton (`whole`, of which
// `model` is the proto()).
// The model's tensors by name, for building the stages: initializers (by
// position), sparse initializers, and every declared value (inputs,
// outputs, value_info).
struct model_index {
  std::unordered_map<std::string_view, int> initializer_at;
  std::unordered_map<std::string_view, const ::onnx::SparseTensorProto*> sparse_of;
  std::unordered_map<std::string_view, const ::onnx::ValueInfoProto*> described;

  explicit model_index(const ::onnx::GraphProto& g) {
    for (int k = 0; k < g.initializer_size(); ++k) {
      initializer_at.emplace(g.initializer(k).name(), k);
    }
    for (const auto& t : g.sparse_initializer()) {
      sparse_of.emplace(t.values().name(), &t);
    }
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
      for (const auto& v : *list) {
        described.emplace(v.name(), &v);
      }
    }
  }
};

// pipeline.json names the tensors passed on; JSON holds only UTF-8, and an
// escaped name would name no tensor of the stage models.
void check_crossing_names(const io::split_plan& plan) {
  const auto utf8 = [](const std::string& name) {
    if (!io::is_utf8(name)) {
      throw input_error("tensor " + io::quote(name) +
                        " passes between stages, and its name is not UTF-8 text, which "
                        "pipeline.json cannot hold");
    }
  };
  for (const auto& part : plan.stages) {
    std::for_each(part.inputs.begin(), part.inputs.end(), [&](const auto& i) { utf8(i.name); });
    std::for_each(part.outputs.begin(), part.outputs.end(), [&](const auto& o) { utf8(o.name); });
  }
}

// A stage model with the model's header (IR version, opsets, producer,
// metadata, functions) and the stage's nodes, sharding attributes removed
// unless kept -- none where the nodes are `views`, which the writer copies
// (save_part). Returns the names its nodes produce.
std::unordered_set<std::string_view>
start_stage(const ::onnx::ModelProto& model, const wire::node_views* views,
            const io::stage_part& part, const split_options& options, ::onnx::ModelProto& stage) {
  const auto& g = model.graph();
  stage.set_ir_version(model.ir_version());
  *stage.mutable_opset_import() = model.opset_import();
  stage.set_producer_name(model.producer_name());
  stage.set_producer_version(model.producer_version());
  stage.set_domain(model.domain());
  stage.set_model_version(model.model_version());
  stage.set_doc_string(model.doc_string());
  *stage.mutable_metadata_props() = model.metadata_props();
  *stage.mutable_functions() = model.functions();
  auto& sg = *stage.mutable_graph();
  sg.set_name(g.name() + "_" + part.file.substr(0, part.file.size() - 5));
  sg.set_doc_string(g.doc_string());
  std::unordered_set<std::string_view> produced;
  if (views != nullptr) {
    for (auto v : part.nodes) {
      for (const std::string_view o : views->outputs(v)) {
        produced.insert(o);
      }
    }
    return produced;
  }
  for (auto v : part.nodes) {
    auto& node = *sg.add_node();
    node = g.node(static_cast<int>(v));
    if (!options.keep_sharding_attributes) {
      auto* attrs = node.mutable_attribute();
      attrs->erase(std::remove_if(attrs->begin(), attrs->end(), is_sharding_attribute),
                   attrs->end());
    }
    for (const auto& o : g.node(static_cast<int>(v)).output()) {
      produced.insert(o);
    }
  }
  return produced;
}

// The stage's graph inputs: graph inputs as the model declares them,
// crossings typed.
void declare_inputs(const model_index& index, const crossing_type_map& types,
                    const io::stage_part& part, ::onnx::GraphProto& sg) {
  for (const auto& i : part.inputs) {
    auto& vi = *sg.add_input();
    if (!i.from_stage && index.described.count(i.name)) {
      vi = *index.described.at(i.name);
    } else {
      vi.set_name(i.name);
      *vi.mutable_type() = type_of(types, i.name, part.stage);
    }
  }
}

// The stage's graph outputs (the model's outputs as it declares them,
// crossings typed), and the model's value_info for what the stage makes and
// keeps inside.
void declare_outputs(const ::onnx::GraphProto& g, const model_index& index,
                     const crossing_type_map& types, const io::stage_part& part,
                     const std::unordered_set<std::string_view>& produced, ::onnx::GraphProto& sg) {
  std::unordered_set<std::string_view> outputs;
  for (const auto& o : part.outputs) {
    auto& vi = *sg.add_output();
    if (index.described.count(o.name) && o.graph_output) {
      vi = *index.described.at(o.name);
    } else {
      vi.set_name(o.name);
      *vi.mutable_type() = type_of(types, o.name, part.stage);
    }
    outputs.insert(o.name);
  }
  for (const auto& v : g.value_info()) {
    if (produced.count(v.name()) && !outputs.count(v.name())) {
      *sg.add_value_info() = v;
    }
  }
}

// Where a stage's external data goes: the model's file and folder, the
// output folder, the locations already linked or copied there, and the
// names the split's own files take.
struct data_places {
  const fs::path& model_path;
  const fs::path& model_dir;
  io::staged_folder& out;
  std::unordered_map<std::string, std::string>& linked;
  std::set<std::string>& taken;
};

// The stage's initializers whose data stays in external files: each
// location made to point into the output folder (relocated); such an
// initializer is written as the stage has it, never copied verbatim (with
// any inline data too, odd as that is), so `from` forgets it.
void relocate_external(::onnx::GraphProto& sg, std::vector<int>& from, const loaded_model* whole,
                       const data_places& at) {
  for (int k = 0; k < sg.initializer_size(); ++k) {
    auto& t = *sg.mutable_initializer(k);
    if (!is_external(t)) {
      continue;
    }
    auto& source = from[static_cast<std::size_t>(k)];
    if (auto full = whole != nullptr ? initializer_with_data(*whole, source) : std::nullopt) {
      t = std::move(*full);
    }
    source = -1;
    for (auto& kv : *t.mutable_external_data()) {
      if (kv.key() == "location") {
        kv.set_value(relocated(kv.value(), t.name(), at.model_path, at.model_dir, at.out, at.linked,
                               at.taken));
      }
    }
  }
}

// write_split() on `model`: the whole model, or a skeleton's proto()
// (`whole`), or, where `views` are given, the skeleton's graph without its
// nodes (proto_without_nodes(), holding the initializers), whose nodes are
// those views.
std::size_t write_stages(::onnx::ModelProto& model, const loaded_model* whole,
                         const wire::node_views* views, const node_graph& nodes,
                         const io::split_plan& plan, io::staged_folder& out,
                         const fs::path& model_path, const split_options& options) {
  auto& g = *model.mutable_graph();
  std::size_t data_files = 0;
  const fs::path model_dir = model_path.has_parent_path() ? model_path.parent_path() : ".";
  const model_index index(g);
  check_crossing_names(plan);
  const auto types = [&] {
    if (views != nullptr) {
      return crossing_types(shapes::inferred_shapes(model, *views, {}), plan);
    }
    return crossing_types(shapes::inferred_shapes(model), plan);
  }();
  std::unordered_map<std::string, std::string> linked; // external data locations
  std::set<std::string> taken{"pipeline.json"};        // the split's own files
  for (const auto& part : plan.stages) {
    taken.insert(part.file);
    taken.insert(part.file + ".data");
  }
  google::protobuf::Arena* arena = model.GetArena();

  for (const auto& part : plan.stages) {
    // On the model's arena, so that Swap moves initializers without copying.
    std::unique_ptr<::onnx::ModelProto> owned;
    auto* stage = arena != nullptr
                      ? google::protobuf::Arena::CreateMessage<::onnx::ModelProto>(arena)
                      : (owned = std::make_unique<::onnx::ModelProto>()).get();
    const auto produced = start_stage(model, views, part, options, *stage);
    auto& sg = *stage->mutable_graph();
    declare_inputs(index, types, part, sg);
    // Initializers, moved in from the model (Swap on one arena copies no
    // data) and moved back once the stage is written; IR < 4 models list
    // them among the inputs too.
    std::vector<std::pair<::onnx::TensorProto*, ::onnx::TensorProto*>> borrowed;
    std::vector<const ::onnx::TensorProto*> sources;
    std::vector<int> from; // the model's initializer for each of the stage's
    for (auto t : part.tensors) {
      const auto& name = nodes.tensors[t];
      if (const auto it = index.initializer_at.find(name); it != index.initializer_at.end()) {
        auto* source = g.mutable_initializer(it->second);
        auto* moved = sg.add_initializer();
        from.push_back(it->second);
        if (options.external_data) {
          sources.push_back(source);
        } else {
          moved->Swap(source);
          borrowed.emplace_back(moved, source);
        }
      } else if (const auto sp = index.sparse_of.find(name); sp != index.sparse_of.end()) {
        *sg.add_sparse_initializer() = *sp->second;
      }
      if (model.ir_version() < 4) {
        for (const auto& i : g.input()) {
          if (i.name() == name) {
            *sg.add_input() = i;
          }
        }
      }
    }
    struct give_back {
      decltype(borrowed)& pairs;
      ~give_back() {
        for (auto& [moved, source] : pairs) {
          moved->Swap(source);
        }
      }
    } const restore{borrowed};
    // A stage without a tensor to move out (a model holding its weights in
    // Constant nodes) gets no data file: a trial found empty ones.
    const bool any_data =
        std::any_of(sources.begin(), sources.end(),
                    [](const ::onnx::TensorProto* t) { return t != nullptr && moved_out(*t); });
    data_files += options.external_data && any_data ? 1 : 0;
    if (options.external_data) {
      const std::string data = part.file + ".data";
      externalise(sg, sources, from, whole, any_data ? out.file(data) : fs::path(), data,
                  model_dir);
      from.assign(from.size(), -1); // the stage has them, data outside
    } else {
      relocate_external(sg, from, whole, {model_path, model_dir, out, linked, taken});
    }
    declare_outputs(g, index, types, part, produced, sg);
    if (views != nullptr) {
      save_part(*stage, *whole, from, part.nodes, options.keep_sharding_attributes,
                out.file(part.file));
    } else if (whole != nullptr) {
      save_part(*stage, *whole, from, out.file(part.file));
    } else {
      save_model(*stage, out.file(part.file));
    }
  }
  io::write_file_atomically(out.file("pipeline.json"), io::to_json(plan));
  return data_files;
}

} // namespace

std::size_t write_split(::onnx::ModelProto& model, const node_graph& nodes,
                        const io::split_plan& plan, io::staged_folder& folder,
                        const fs::path& model_path, const split_options& options) {
  return write_stages(model, nullptr, nullptr, nodes, plan, folder, model_path, options);
}

std::size_t write_split(loaded_model& model, const node_graph& nodes, const io::split_plan& plan,
                        io::staged_folder& folder, const fs::path& model_path,
                        const split_options& options) {
  // On the views where their shapes can be found on them (no subgraph):
  // each stage's nodes copied from the input, none parsed.
  if (const auto* views = shapes::inferable_views(model, nullptr)) {
    return write_stages(model.mutable_proto_without_nodes(), &model, views, nodes, plan, folder,
                        model_path, options);
  }
  return write_stages(model.proto(), &model, nullptr, nodes, plan, folder, model_path, options);
}

namespace {

// Both in one call: the model's inputs declared (`declare`), the folder
// written by `write` and committed.
template <class Declare, class Write>
void write_split_to(const fs::path& folder, bool replace, Declare declare, Write write) {
  io::output_set outputs;
  declare(outputs);
  auto& out = outputs.folder(folder, "the output folder", replace);
  write(out);
  outputs.commit();
}

} // namespace

void write_split(::onnx::ModelProto& model, const node_graph& nodes, const io::split_plan& plan,
                 const fs::path& folder, const fs::path& model_path, const split_options& options,
                 bool replace) {
  write_split_to(
      folder, replace,
      [&](io::output_set& outputs) { declare_model_inputs(outputs, model_path, model.graph()); },
      [&](io::staged_folder& out) { write_split(model, nodes, plan, out, model_path, options); });
}

void write_split(loaded_model& model, const node_graph& nodes, const io::split_plan& plan,
                 const fs::path& folder, const fs::path& model_path, const split_options& options,
                 bool replace) {
  write_split_to(
      folder, replace,
      [&](io::output_set& outputs) { declare_model_inputs(outputs, model_path, model); },
      [&](io::staged_folder& out) { write_split(model, nodes, plan, out, model_path, options); });
}

} // namespace shardpoint::onnx
