// The node graph of an ONNX model, names, points, attributes and validation.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <boost/property_map/property_map.hpp>
#include <boost/range/iterator_range.hpp>

#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/graph.hpp>

#include "chunks.hpp"
#include "graph_nodes.hpp"
#include "name_ids.hpp"
#include "node_view.hpp"

namespace shardpoint::onnx {

namespace {

using name_set = std::unordered_set<std::string>;

void outer_reads(const ::onnx::GraphProto& g, const name_set& enclosing_locals, name_set& out);

// The tensors a node reads from the scope it sits in: its inputs, and what
// its subgraphs read from outside themselves. `locals` are the names defined
// in the scope between the node and the top level (empty at top level).
void node_reads(const ::onnx::NodeProto& node, const name_set& locals, name_set& out) {
  for (const auto& i : node.input()) {
    if (!i.empty() && !locals.count(i)) {
      out.insert(i);
    }
  }
  for (const auto& a : node.attribute()) {
    if (a.has_g()) {
      outer_reads(a.g(), locals, out);
    }
    for (const auto& sub : a.graphs()) {
      outer_reads(sub, locals, out);
    }
  }
}

// Names a subgraph reads that it does not define itself nor are defined in
// `enclosing_locals` (the scopes between it and the top level). Recursion
// depth is the nesting depth of subgraphs, which protobuf's parser bounds.
void outer_reads(const ::onnx::GraphProto& g, const name_set& enclosing_locals, name_set& out) {
  name_set locals = enclosing_locals;
  for (const auto& i : g.input()) {
    locals.insert(i.name());
  }
  for (const auto& t : g.initializer()) {
    locals.insert(t.name());
  }
  for (const auto& t : g.sparse_initializer()) {
    locals.insert(t.values().name());
  }
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      locals.insert(o);
    }
  }
  for (const auto& n : g.node()) {
    node_reads(n, locals, out);
  }
}

std::string list(const std::vector<std::string>& items, std::size_t most = 5) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) {
    out += (i ? ", " : "") + items[i];
  }
  if (items.size() > most) {
    out += ", ... (" + std::to_string(items.size()) + " in all)";
  }
  return out;
}

} // namespace

namespace {

template <class Nodes>
std::string name_of(const Nodes& nodes, std::size_t i) {
  const std::string_view name = nodes.name(i);
  return name.empty() ? "<unnamed " + std::string(nodes.op_type(i)) + ">" : std::string(name);
}

// Node v's display name (node_names' spelling), made only when a message
// needs it: node_names copies every name, 3% of `shard --report none` on a
// 10^6-node model, twice, for messages that name a node or two.
template <class Nodes>
struct display_names {
  const Nodes* nodes;
};

template <class Nodes>
std::string get(const display_names<Nodes>& names, std::size_t v) {
  return name_of(*names.nodes, v);
}

// f(nodes, graph) on a loaded model's nodes: its views when they were read
// so and are not parsed (the graph then without nodes: its inputs and
// initializers), else protobuf's.
template <class F>
auto on_nodes(const loaded_model& model, F f) {
  if (const auto* views = model.node_views()) {
    return f(view_nodes{*views}, model.proto_without_nodes().graph());
  }
  const auto& g = model.proto().graph();
  return f(proto_nodes{g}, g);
}

} // namespace

std::string node_label(const ::onnx::GraphProto& g, std::size_t i) {
  return label_of(proto_nodes{g}, i);
}

std::string node_name(const ::onnx::GraphProto& g, std::size_t i) {
  return name_of(proto_nodes{g}, i);
}

std::string node_name(const loaded_model& model, std::size_t i) {
  return on_nodes(model, [&](const auto& nodes, const auto&) { return name_of(nodes, i); });
}

namespace {

template <class Nodes>
std::vector<std::string> names_of(const Nodes& nodes) {
  // A string made for every node: in chunks side by side (a tenth of a
  // second at 10^6 nodes on one core).
  std::vector<std::string> names(nodes.size());
  in_chunks(names.size(), [&](std::size_t, std::size_t from, std::size_t to) {
    for (std::size_t v = from; v < to; ++v) {
      names[v] = name_of(nodes, v);
    }
  });
  return names;
}

} // namespace

std::vector<std::string> node_names(const ::onnx::GraphProto& g) {
  return names_of(proto_nodes{g});
}

std::vector<std::string> node_names(const loaded_model& model) {
  return on_nodes(model, [&](const auto& nodes, const auto&) { return names_of(nodes); });
}

std::vector<std::string_view> initializer_names(const loaded_model& model) {
  return on_nodes(model, [&](const auto& nodes, const ::onnx::GraphProto& g) {
    std::vector<std::string_view> out;
    out.reserve(nodes.initializer_count(g));
    nodes.initializer_names(g, [&](std::string_view name) { out.push_back(name); });
    return out;
  });
}

namespace {

// build_graph's last pass: each node's reads (node v's are read_ids from
// read_offsets[v] to read_offsets[v + 1]) each once, in increasing order --
// compacted in place and moved into out.read_ids / out.read_offsets, not
// copied -- and out.graph: an edge u -> v for each node u whose output v
// reads, once. Takes out.producer as set.
void link(node_graph& out, std::vector<std::uint32_t>& read_ids,
          std::vector<std::size_t>& read_offsets, std::size_t n) {
  // Vertices as 32 bits in the edge list, the largest array built here: a
  // model under protobuf's 2 GiB has fewer nodes than that.
  if (n > UINT32_MAX) {
    throw input_error("the model has more than 2^32 - 1 nodes");
  }
  {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    edges.reserve(2 * n);
    std::vector<std::uint32_t> sources;
    std::size_t begin = 0; // where node v's reads start, before compaction
    for (std::size_t v = 0; v < n; ++v) {
      const std::size_t end = read_offsets[v + 1];
      const auto first = read_ids.begin() + static_cast<std::ptrdiff_t>(begin);
      auto last = read_ids.begin() + static_cast<std::ptrdiff_t>(end);
      std::sort(first, last);
      last = std::unique(first, last);
      sources.clear();
      for (auto t = first; t != last; ++t) {
        if (out.producer[*t] != node_graph::no_producer) {
          sources.push_back(static_cast<std::uint32_t>(out.producer[*t]));
        }
      }
      std::sort(sources.begin(), sources.end());
      sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
      for (const std::uint32_t u : sources) {
        edges.emplace_back(u, static_cast<std::uint32_t>(v));
      }
      // Node v's reads, moved down to where the compacted ones end (never
      // past where they are: moving forward is safe).
      const auto to = read_ids.begin() + static_cast<std::ptrdiff_t>(read_offsets[v]);
      std::move(first, last, to);
      read_offsets[v + 1] = read_offsets[v] + static_cast<std::size_t>(last - first);
      begin = end;
    }
    out.graph = csr_graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);
  }
  read_ids.resize(read_offsets[n]);
  read_ids.shrink_to_fit(); // (the edges are gone: room for the copy)
  out.read_ids = std::move(read_ids);
  out.read_offsets = std::move(read_offsets);
}

} // namespace

namespace {

// build_graph's first pass, side by side over chunks of nodes (the names
// are the model's, scattered over its arena: first touching them, to
// hash, was most of interning them): per chunk, its nodes' outputs and
// the inputs of those without subgraphs, in node order, each hashed.
struct hashed_names {
  std::vector<std::vector<hashed_name>> outputs, inputs; // by chunk
  std::vector<char> subgraphs;                           // by node: has_subgraphs()

  template <class Nodes>
  explicit hashed_names(const Nodes& nodes) : subgraphs(nodes.size()) {
    const auto n = subgraphs.size();
    outputs.resize(chunk_count(n));
    inputs.resize(outputs.size());
    in_chunks(n, [&](std::size_t chunk, std::size_t from, std::size_t to) {
      auto& outs = outputs[chunk];
      auto& ins = inputs[chunk];
      outs.reserve(to - from);
      ins.reserve(2 * (to - from));
      for (std::size_t v = from; v < to; ++v) {
        for (const std::string_view o : nodes.outputs(v)) {
          if (!o.empty()) { // else an omitted optional output
            outs.emplace_back(o, v);
          }
        }
        subgraphs[v] = nodes.subgraphs(v) ? 1 : 0;
        if (subgraphs[v] == 0) {
          for (const std::string_view t : nodes.inputs(v)) {
            if (!t.empty()) {
              ins.emplace_back(t, v);
            }
          }
        }
      }
    });
  }
};

// build_graph's interning: every tensor name an id, in the order first
// seen, and out.producer as long as the ids. Keys view strings that
// outlive it: the model's own, and copies (in read_by_subgraphs_) of names
// a subgraph reads from outside itself; the graph's own copies are made by
// copy_names, side by side.
template <class Nodes>
class tensor_interner {
public:
  // (`g`: the graph's inputs and initializers, for the table's size.)
  tensor_interner(const Nodes& nodes, const ::onnx::GraphProto& g, node_graph& out)
      : nodes_(nodes), out_(out), ids_(expected(nodes, g)) {
    out_.producer.reserve(expected(nodes, g));
  }

  /// Each node's outputs, node by node: its producer set; two producers of
  /// one tensor are an input_error naming both.
  void outputs(const std::vector<std::vector<hashed_name>>& chunks) {
    for (const auto& chunk : chunks) {
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        if (i + ahead < chunk.size()) {
          ids_.prefetch(chunk[i + ahead].hash);
        }
        const std::string_view o = chunk[i].name();
        const std::size_t v = chunk[i].node;
        auto& p = out_.producer[intern(o, chunk[i].hash)];
        if (p != node_graph::no_producer) {
          throw input_error("tensor " + io::quote(o) + " is written by both " +
                            label_of(nodes_, p) + " and " + label_of(nodes_, v));
        }
        p = v;
      }
    }
  }

  /// Per node the ids it reads (read_ids from read_offsets[v] to
  /// read_offsets[v + 1]): its named inputs, or what its subgraphs read from
  /// outside them.
  void reads(const hashed_names& names, std::vector<std::uint32_t>& read_ids,
             std::vector<std::size_t>& read_offsets) {
    const auto n = names.subgraphs.size();
    read_offsets.assign(1, 0);
    read_offsets.reserve(n + 1);
    read_ids.reserve(2 * n);
    std::size_t chunk = 0;
    std::size_t i = 0; // the next of names.inputs[chunk]
    for (std::size_t v = 0; v < n; ++v) {
      while (chunk < names.inputs.size() && i == names.inputs[chunk].size()) {
        ++chunk;
        i = 0;
      }
      const auto* in = chunk < names.inputs.size() ? &names.inputs[chunk] : nullptr;
      if (in != nullptr && (*in)[i].node == v) {
        for (; i < in->size() && (*in)[i].node == v; ++i) {
          if (i + ahead < in->size()) {
            ids_.prefetch((*in)[i + ahead].hash);
          }
          read_ids.push_back(intern((*in)[i].name(), (*in)[i].hash));
        }
      } else if (names.subgraphs[v] != 0) {
        subgraph_reads(v, read_ids);
      }
      read_offsets.push_back(read_ids.size());
    }
  }

  /// Frees the table of names to ids, keeping the names: nothing is
  /// interned after the reads.
  void release_table() { ids_.release_slots(); }

  /// out.tensors: a copy of every name, by id; the interner's views of them
  /// freed.
  void copy_names() {
    const auto names = ids_.names();
    out_.tensors.resize(names.size());
    in_chunks(names.size(), [&](std::size_t, std::size_t from, std::size_t to) {
      for (std::size_t t = from; t < to; ++t) {
        out_.tensors[t] = names[t];
      }
    });
    ids_.release();
    read_by_subgraphs_ = {};
  }

private:
  static constexpr std::size_t ahead = prefetch_ahead; // slots prefetched this far ahead

  // About how many tensors there are: the nodes' outputs, the graph's
  // inputs and initializers.
  static std::size_t expected(const Nodes& nodes, const ::onnx::GraphProto& g) {
    return nodes.size() + static_cast<std::size_t>(g.input_size()) + nodes.initializer_count(g);
  }

  std::uint32_t intern(std::string_view name, std::size_t hash) {
    if (ids_.size() == UINT32_MAX) { // the next id would be UINT32_MAX
      throw input_error("the model has more than 2^32 - 1 tensors");
    }
    const auto [id, fresh] = ids_.add(name, static_cast<std::uint32_t>(ids_.size()), hash);
    if (fresh) {
      out_.producer.push_back(node_graph::no_producer);
    }
    return id;
  }

  void subgraph_reads(std::size_t v, std::vector<std::uint32_t>& read_ids) {
    name_set reads;            // copies, gone with the set
    ::onnx::NodeProto scratch; // (a view with subgraphs is parsed: never used)
    node_reads(nodes_.node(v, scratch), top_locals_, reads);
    for (const auto& t : reads) {
      if (const auto known = ids_.find(t)) {
        read_ids.push_back(*known);
        continue;
      }
      const std::string_view copy = read_by_subgraphs_.emplace_back(t);
      read_ids.push_back(intern(copy, name_ids::hash_only(copy)));
    }
  }

  const Nodes& nodes_;
  node_graph& out_;
  name_ids ids_;                              // and the names, by id
  std::deque<std::string> read_by_subgraphs_; // stays put as it grows
  const name_set top_locals_;
};

template <class Nodes>
node_graph build_graph_of(const Nodes& nodes, const ::onnx::GraphProto& g) {
  node_graph out;
  tensor_interner interner(nodes, g, out);
  std::vector<std::uint32_t> read_ids;
  std::vector<std::size_t> read_offsets;
  {
    hashed_names names(nodes);
    interner.outputs(names.outputs);
    names.outputs = {}; // done with: the memory for the reads
    interner.reads(names, read_ids, read_offsets);
  } // the hashed names, and then the table, freed before the edges are made
  interner.release_table();
  link(out, read_ids, read_offsets, nodes.size());
  interner.copy_names();
  return out;
}

} // namespace

node_graph build_graph(const ::onnx::GraphProto& g) {
  return build_graph_of(proto_nodes{g}, g);
}

node_graph build_graph(const loaded_model& model) {
  return on_nodes(model, [](const auto& nodes, const auto& g) { return build_graph_of(nodes, g); });
}

std::vector<std::string> node_graph::read_names(std::size_t v) const {
  std::vector<std::string> names;
  for (auto t : reads(v)) {
    names.push_back(tensors[t]);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool has_subgraphs(const ::onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(),
                     [](const auto& a) { return a.has_g() || a.graphs_size() > 0; });
}

namespace {

constexpr std::size_t shared = static_cast<std::size_t>(-1);

// The nodes' names: each name's node (by the name's id), or `shared` when
// several nodes have it, and the unnamed nodes.
struct node_name_ids {
  name_ids ids;
  std::vector<std::size_t> node_of;
  std::vector<std::size_t> unnamed;
  bool any_shared = false;
};

// The ids view the nodes' strings, hashed first side by side (as
// build_graph's are), then added in node order.
template <class Nodes>
node_name_ids name_nodes(const Nodes& nodes) {
  const auto n = nodes.size();
  const auto names =
      gather_in_chunks<hashed_name>(n, 1, [&](std::size_t v, std::vector<hashed_name>& out) {
        out.emplace_back(nodes.name(v), v);
      });
  node_name_ids out{name_ids(n), {}, {}, false};
  auto& [ids, node_of, unnamed, any_shared] = out;
  for (const auto& chunk : names) {
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      if (i + prefetch_ahead < chunk.size()) {
        ids.prefetch(chunk[i + prefetch_ahead].hash);
      }
      if (chunk[i].size == 0) {
        unnamed.push_back(chunk[i].node);
        continue;
      }
      const auto [id, fresh] =
          ids.add(chunk[i].name(), static_cast<std::uint32_t>(node_of.size()), chunk[i].hash);
      if (fresh) {
        node_of.push_back(chunk[i].node);
      } else {
        node_of[id] = shared;
        any_shared = true;
      }
    }
  }
  return out;
}

} // namespace

std::vector<std::size_t> assign_names(::onnx::GraphProto& g, naming mode) {
  auto [ids, node_of, unnamed, any_shared] = name_nodes(proto_nodes{g});
  if (any_shared) {
    std::map<std::string, std::string> where; // sorted, for the message
    for (int v = 0; v < g.node_size(); ++v) {
      const auto& name = g.node(v).name();
      if (!name.empty() && node_of[*ids.find(name)] == shared) {
        auto& list = where[name];
        list += (list.empty() ? "" : ", ") + std::to_string(v);
      }
    }
    std::vector<std::string> duplicates;
    for (const auto& [name, nodes] : where) {
      duplicates.push_back("'" + name + "' (nodes " + nodes + ")");
    }
    throw input_error("node names must be unique, but " + std::to_string(duplicates.size()) +
                      " are not: " + list(duplicates));
  }
  if (mode == naming::strict && !unnamed.empty()) {
    std::vector<std::string> labels;
    for (std::size_t v : unnamed) {
      labels.push_back(std::to_string(v) + " (" + g.node(static_cast<int>(v)).op_type() + ")");
    }
    throw input_error("--only_manual_sharding needs every node named, but " +
                      std::to_string(unnamed.size()) + " are not: nodes " + list(labels));
  }
  std::unordered_set<std::string> given;
  for (std::size_t v : unnamed) {
    auto& node = *g.mutable_node(static_cast<int>(v));
    const std::string base =
        (node.op_type().empty() ? std::string("node") : node.op_type()) + "_" + std::to_string(v);
    std::string name = base;
    for (int k = 1; ids.find(name) || given.count(name); ++k) {
      name = base + "_" + std::to_string(k);
    }
    given.insert(name);
    node.set_name(name);
  }
  return unnamed;
}

std::vector<std::size_t> assign_names(loaded_model& model, naming mode) {
  if (const auto* views = model.node_views()) {
    const auto names = name_nodes(view_nodes{*views});
    if (!names.any_shared && names.unnamed.empty()) {
      return {}; // nothing to name, nothing to refuse: the views stay
    }
  }
  return assign_names(*model.proto().mutable_graph(), mode);
}

std::vector<config_entry> read_config(const std::filesystem::path& path) {
  return config::read_file(path);
}

config_entry parse_shard_flag(const std::string& text) {
  return config::parse_shard_flag(text);
}

namespace {

template <class Nodes>
std::vector<sharding_point<std::size_t>> resolve_on(const Nodes& nodes,
                                                    const std::vector<config_entry>& entries) {
  return config::resolve(entries, nodes.size(),
                         [&](std::size_t v) -> std::string_view { return nodes.name(v); });
}

// f(), with a cycle among the nodes said as the model's.
template <class Nodes, class F>
auto refusing_cycles(const Nodes& nodes, F&& f) {
  try {
    return f();
  } catch (const cycle_error& e) {
    throw input_error("the model's nodes form a cycle through " +
                          label_of(nodes, e.vertex().value_or(0)),
                      e.vertex());
  }
}

template <class Nodes>
sharding_result shard_on(const Nodes& nodes, const node_graph& graph,
                         const std::vector<sharding_point<std::size_t>>& points) {
  const auto index = get(boost::vertex_index, graph.graph);
  return refusing_cycles(nodes, [&] {
    return manual_shard(indexed(graph.graph, index, display_names<Nodes>{&nodes}), points);
  });
}

} // namespace

void check_acyclic(const loaded_model& model, const node_graph& graph) {
  on_nodes(model, [&](const auto& nodes, const auto&) {
    using Nodes = std::decay_t<decltype(nodes)>;
    const auto index = get(boost::vertex_index, graph.graph);
    const auto g = indexed(graph.graph, index, display_names<Nodes>{&nodes});
    if (!is_topologically_labelled(g)) {
      refusing_cycles(nodes, [&] { return topological_order(g); });
    }
    return 0;
  });
}

std::vector<sharding_point<std::size_t>> resolve(const ::onnx::GraphProto& g,
                                                 const std::vector<config_entry>& entries) {
  return resolve_on(proto_nodes{g}, entries);
}

std::vector<sharding_point<std::size_t>> resolve(const loaded_model& model,
                                                 const std::vector<config_entry>& entries) {
  return on_nodes(model,
                  [&](const auto& nodes, const auto&) { return resolve_on(nodes, entries); });
}

sharding_result shard(const ::onnx::GraphProto& g, const node_graph& nodes,
                      const std::vector<sharding_point<std::size_t>>& points) {
  return shard_on(proto_nodes{g}, nodes, points);
}

sharding_result shard(const loaded_model& model, const node_graph& nodes,
                      const std::vector<sharding_point<std::size_t>>& points) {
  return on_nodes(model,
                  [&](const auto& names, const auto&) { return shard_on(names, nodes, points); });
}

void annotate(::onnx::NodeProto& node, std::optional<int> device, std::optional<int> stage) {
  auto* attrs = node.mutable_attribute();
  attrs->erase(std::remove_if(attrs->begin(), attrs->end(), is_sharding_attribute), attrs->end());
  const auto add = [&](const char* name, std::optional<int> value) {
    if (value) {
      auto* a = node.add_attribute();
      a->set_name(name);
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(*value);
    }
  };
  add(ipu_attribute, device);
  add(stage_attribute, stage);
}

void annotate(::onnx::GraphProto& g, const sharding_result& r) {
  for (int v = 0; v < g.node_size(); ++v) {
    const auto i = static_cast<std::size_t>(v);
    annotate(*g.mutable_node(v), r.device(i), r.stage(i));
  }
}

std::size_t strip_annotations(::onnx::GraphProto& g) {
  std::size_t removed = 0;
  for (auto& node : *g.mutable_node()) {
    auto* attrs = node.mutable_attribute();
    const auto keep = std::remove_if(attrs->begin(), attrs->end(), is_sharding_attribute);
    removed += static_cast<std::size_t>(attrs->end() - keep);
    attrs->erase(keep, attrs->end());
    for (auto& a : *attrs) {
      if (a.has_g()) {
        removed += strip_annotations(*a.mutable_g());
      }
      for (auto& sub : *a.mutable_graphs()) {
        removed += strip_annotations(sub);
      }
    }
  }
  return removed;
}

bool has_annotations(const ::onnx::GraphProto& g) {
  for (const auto& node : g.node()) {
    for (const auto& a : node.attribute()) {
      if (is_sharding_attribute(a)) {
        return true;
      }
    }
  }
  return false;
}

bool has_annotations(const loaded_model& model) {
  if (const auto* views = model.node_views()) {
    return !views->sharding.empty();
  }
  return has_annotations(model.proto().graph());
}

void for_each_node(const loaded_model& model,
                   const std::function<void(std::size_t, const node_fields&)>& f) {
  on_nodes(model, [&](const auto& nodes, const ::onnx::GraphProto&) {
    node_fields fields;
    for (std::size_t v = 0; v < nodes.size(); ++v) {
      fields.name = nodes.name(v);
      fields.op_type = nodes.op_type(v);
      fields.inputs.assign(nodes.inputs(v).begin(), nodes.inputs(v).end());
      fields.outputs.assign(nodes.outputs(v).begin(), nodes.outputs(v).end());
      f(v, fields);
    }
  });
}

namespace {

// The sharding read from every node's attributes (unset where a node has
// none); a kind no node has is left out, as manual_shard leaves it.
sharding_result annotations_read(std::vector<int> devices, std::vector<int> stages) {
  const std::size_t n = devices.size();
  const auto none = [](const std::vector<int>& v) {
    return std::all_of(v.begin(), v.end(), [](int x) { return x == sharding_result::unset; });
  };
  if (none(devices)) {
    devices.clear();
  }
  if (none(stages)) {
    stages.clear();
  }
  return sharding_result(n, std::move(devices), std::move(stages));
}

} // namespace

sharding_result read_annotations(const loaded_model& model) {
  const auto* views = model.node_views();
  if (views == nullptr) {
    return read_annotations(model.proto().graph());
  }
  std::vector<int> devices(views->size(), sharding_result::unset);
  std::vector<int> stages(views->size(), sharding_result::unset);
  for (std::size_t v = 0; v < views->sharding.size(); ++v) { // (empty: none)
    const wire::node_sharding& s = views->sharding[v];
    devices[v] = s.device >= 0 ? s.device : sharding_result::unset;
    stages[v] = s.stage >= 0 ? s.stage : sharding_result::unset;
  }
  return annotations_read(std::move(devices), std::move(stages));
}

sharding_result read_annotations(const ::onnx::GraphProto& g) {
  const auto n = static_cast<std::size_t>(g.node_size());
  std::vector<int> devices(n, sharding_result::unset);
  std::vector<int> stages(n, sharding_result::unset);
  for (std::size_t v = 0; v < n; ++v) {
    for (const auto& a : g.node(static_cast<int>(v)).attribute()) {
      const bool is_ipu = a.name() == ipu_attribute;
      if (!is_ipu && a.name() != stage_attribute) {
        continue;
      }
      // Up to max_group_id + 1: the default group manual_shard gives.
      if (a.type() != ::onnx::AttributeProto::INT || a.i() < 0 || a.i() > max_group_id + 1) {
        // Saying what it is: a type (by its name, as onnx.proto spells it) or the value.
        const std::string found =
            a.type() != ::onnx::AttributeProto::INT
                ? "of type " + ::onnx::AttributeProto_AttributeType_Name(a.type())
                : std::to_string(a.i());
        throw input_error(node_label(g, v) + ": attribute " + a.name() + " is " + found +
                          ", not an INT in 0.." + std::to_string(max_group_id + 1));
      }
      auto& slot = (is_ipu ? devices : stages)[v];
      if (slot != sharding_result::unset) { // which would it be? (ONNX's checker refuses it too)
        throw input_error(node_label(g, v) + ": attribute " + a.name() + " appears twice");
      }
      slot = static_cast<int>(a.i());
    }
  }
  return annotations_read(std::move(devices), std::move(stages));
}

namespace {

// (`g`: the graph's inputs and initializers; `names`: its nodes'.)
template <class Nodes>
std::vector<diagnostic> validate_on(const Nodes& names, const ::onnx::GraphProto& g,
                                    const node_graph& nodes, const sharding_result& result,
                                    const pipeline_options& options) {
  const auto index = get(boost::vertex_index, nodes.graph);
  auto out = refusing_cycles(names, [&] {
    return shardpoint::validate(indexed(nodes.graph, index, display_names<Nodes>{&names}), result,
                                options);
  });
  if (!result.has_devices()) {
    return out;
  }
  // Rule (f) in ONNX's sense: graph inputs and initializers are tensors, not
  // vertices. One read on several devices is copied to each. First, per
  // tensor no node writes, the first device reading it and its first reader
  // (by id: a model of 10^6 nodes may have 10^5 initializers, each of which
  // a map of sets cost an allocation or two); then the devices of the few
  // read on several.
  constexpr int unread = -1;
  constexpr int several = -2;
  const std::size_t tensors = nodes.tensors.size();
  std::vector<int> device_of(tensors, unread);
  std::vector<std::size_t> first_reader(tensors, 0);
  std::map<std::uint32_t, std::set<int>> shared; // tensor -> its devices
  for (const bool collect : {false, true}) {
    for (std::size_t v = 0; v < result.size(); ++v) {
      const auto d = result.device(v);
      for (auto t : d ? nodes.reads(v) : std::span<const std::uint32_t>{}) {
        if (nodes.producer[t] != node_graph::no_producer) {
          continue;
        }
        if (collect) {
          if (device_of[t] == several) {
            shared[t].insert(*d);
          }
        } else if (device_of[t] == unread) {
          device_of[t] = *d;
          first_reader[t] = v;
        } else if (device_of[t] != *d) {
          device_of[t] = several;
        }
      }
    }
    if (!collect && std::find(device_of.begin(), device_of.end(), several) == device_of.end()) {
      break; // no tensor read on several devices
    }
  }
  // Which of them are graph inputs ('i') or else initializers ('n').
  std::unordered_map<std::string_view, char> kind;
  for (const auto& [t, devices] : shared) {
    kind.emplace(nodes.tensors[t], '\0');
  }
  for (const auto& i : g.input()) {
    if (const auto it = kind.find(i.name()); it != kind.end()) {
      it->second = 'i';
    }
  }
  names.initializer_names(g, [&](std::string_view name) {
    if (const auto it = kind.find(name); it != kind.end() && it->second == '\0') {
      it->second = 'n';
    }
  });
  for (const auto& [t, devices] : shared) {
    const std::string& name = nodes.tensors[t];
    const char k = kind.at(name);
    if (k == '\0') {
      continue;
    }
    out.push_back(rules::input_on_several_devices(
        (k == 'i' ? "graph input '" : "initializer '") + name + "'", devices, {first_reader[t]}));
  }
  return out;
}

} // namespace

std::vector<diagnostic> validate(const ::onnx::GraphProto& g, const node_graph& nodes,
                                 const sharding_result& result, const pipeline_options& options) {
  return validate_on(proto_nodes{g}, g, nodes, result, options);
}

std::vector<diagnostic> validate(const loaded_model& model, const node_graph& nodes,
                                 const sharding_result& result, const pipeline_options& options) {
  return on_nodes(model, [&](const auto& names, const auto& g) {
    return validate_on(names, g, nodes, result, options);
  });
}

} // namespace shardpoint::onnx
