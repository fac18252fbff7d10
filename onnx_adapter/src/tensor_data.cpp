// The bytes of an initializer, whatever ONNX stores them in.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fstream>
#include <set>
#include <vector>

#include <shardpoint/detail/checked.hpp>
#include <shardpoint/io/inputs.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/model.hpp>
#include <shardpoint/onnx/tensor_data.hpp>

#include "chunks.hpp"
#include "node_view.hpp"

namespace shardpoint::onnx {
namespace fs = std::filesystem;

std::optional<std::size_t> element_bytes(int type) {
  using T = ::onnx::TensorProto;
  // Bytes an element, by TensorProto::DataType's number; 0: not a fixed
  // size (UNDEFINED, STRING) or a type this version does not read.
  constexpr std::array<std::uint8_t, 17> bytes{
      0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 8, 16, 2,
  };
  static_assert(T::FLOAT == 1 && T::INT64 == 7 && T::STRING == 8 && T::BOOL == 9 &&
                T::COMPLEX128 == 15 && T::BFLOAT16 == 16);
  if (type < 0 || static_cast<std::size_t>(type) >= bytes.size() ||
      bytes[static_cast<std::size_t>(type)] == 0) {
    return std::nullopt;
  }
  return bytes[static_cast<std::size_t>(type)];
}

std::uint64_t element_count(const ::onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (auto d : t.dims()) {
    const auto product = detail::checked_mul(n, d);
    if (!product) {
      std::string dims;
      for (auto x : t.dims()) {
        dims.append(dims.empty() ? "" : ", ").append(std::to_string(x));
      }
      throw input_error("tensor " + io::quote(t.name()) + ": its dims [" + dims + "] are " +
                        (d < 0 ? "not a shape (a negative dimension)" : "more than 2^62 elements"));
    }
    n = *product;
  }
  return static_cast<std::uint64_t>(n);
}

bool is_external(const ::onnx::TensorProto& t) {
  return t.data_location() == ::onnx::TensorProto::EXTERNAL;
}

namespace {

using locations = std::vector<std::pair<std::string, std::string>>;

void add_node(const ::onnx::NodeProto& n, std::set<std::string>& seen, locations& out);

// A tensor's location, unless seen, with the tensor's name.
void add_tensor(const ::onnx::TensorProto& t, std::set<std::string>& seen, locations& out) {
  if (!is_external(t)) {
    return;
  }
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location" && seen.insert(kv.value()).second) {
      out.emplace_back(kv.value(), t.name());
    }
  }
}

// Each location once, with the first tensor naming it.
void collect_locations(const ::onnx::GraphProto& g, std::set<std::string>& seen, locations& out) {
  const auto add = [&](const ::onnx::TensorProto& t) { add_tensor(t, seen, out); };
  for (const auto& t : g.initializer()) {
    add(t);
  }
  for (const auto& t : g.sparse_initializer()) {
    add(t.values());
    add(t.indices());
  }
  for (const auto& n : g.node()) {
    add_node(n, seen, out);
  }
}

// A node's: its tensor attributes' (sparse ones' values and indices too)
// and its subgraphs'.
void add_node(const ::onnx::NodeProto& n, std::set<std::string>& seen, locations& out) {
  for (const auto& a : n.attribute()) {
    if (a.has_t()) {
      add_tensor(a.t(), seen, out);
    }
    for (const auto& t : a.tensors()) {
      add_tensor(t, seen, out);
    }
    if (a.has_sparse_tensor()) {
      add_tensor(a.sparse_tensor().values(), seen, out);
      add_tensor(a.sparse_tensor().indices(), seen, out);
    }
    for (const auto& t : a.sparse_tensors()) {
      add_tensor(t.values(), seen, out);
      add_tensor(t.indices(), seen, out);
    }
    if (a.has_g()) {
      collect_locations(a.g(), seen, out);
    }
    for (const auto& sub : a.graphs()) {
      collect_locations(sub, seen, out);
    }
  }
}

// collect_locations() on a top-level graph `g` whose nodes are node(v),
// v < n (null: a node that holds no tensor, graph or type), its
// initializers read when `initializers`: those and the nodes that can name
// a location are found first, in chunks side by side (a pass over 10^6
// nodes, to find none in most models), then visited in the same order.
template <class Node>
locations top_locations(const ::onnx::GraphProto& g, bool initializers, std::size_t n, Node node) {
  const auto which = [](std::size_t count, const auto& pick) {
    return gather_in_chunks<std::size_t>(count, 0,
                                         [&](std::size_t i, std::vector<std::size_t>& out) {
                                           if (pick(i)) {
                                             out.push_back(i);
                                           }
                                         });
  };
  const auto external =
      which(initializers ? static_cast<std::size_t>(g.initializer_size()) : 0,
            [&](std::size_t k) { return is_external(g.initializer(static_cast<int>(k))); });
  const auto nodes = which(n, [&](std::size_t v) {
    const ::onnx::NodeProto* p = node(v);
    return p != nullptr &&
           std::any_of(p->attribute().begin(), p->attribute().end(), [](const auto& a) {
             return a.has_t() || a.tensors_size() > 0 || a.has_g() || a.graphs_size() > 0 ||
                    a.has_sparse_tensor() || a.sparse_tensors_size() > 0;
           });
  });
  std::set<std::string> seen;
  locations out;
  for (const auto& chunk : external) {
    for (const std::size_t k : chunk) {
      add_tensor(g.initializer(static_cast<int>(k)), seen, out);
    }
  }
  for (const auto& t : g.sparse_initializer()) {
    add_tensor(t.values(), seen, out);
    add_tensor(t.indices(), seen, out);
  }
  for (const auto& chunk : nodes) {
    for (const std::size_t v : chunk) {
      add_node(*node(v), seen, out);
    }
  }
  return out;
}

locations top_locations(const ::onnx::GraphProto& g) {
  return top_locations(g, true, static_cast<std::size_t>(g.node_size()),
                       [&](std::size_t v) { return &g.node(static_cast<int>(v)); });
}

// The same of a loaded model, without parsing nodes read as views: a view
// names a location only where its node was parsed (node_view.hpp: only
// those hold tensors), and initializers read as views name none (nor are
// they in the skeleton to read).
locations top_locations(const loaded_model& model) {
  const auto* views = model.node_views();
  if (views == nullptr) {
    return top_locations(model.proto().graph());
  }
  return top_locations(model.proto_without_nodes().graph(), !views->initializers_as_views,
                       views->size(), [&](std::size_t v) { return views->parsed_node(v); });
}

std::vector<std::string> location_names(locations found) {
  std::vector<std::string> out;
  for (auto& [location, tensor] : found) {
    out.push_back(std::move(location));
  }
  return out;
}

void declare_locations(io::output_set& outputs, const fs::path& model_path,
                       const std::vector<std::string>& locations) {
  outputs.input(model_path, "the input model");
  const fs::path dir = model_path.has_parent_path() ? model_path.parent_path() : ".";
  for (const auto& location : locations) {
    outputs.input(dir / location, "the external data of the input model " +
                                      io::quote(model_path.string()) + ", file");
  }
}

void check_locations(const locations& found, const fs::path& model_dir) {
  for (const auto& [location, tensor] : found) {
    io::check_external_location(model_dir, location, tensor);
  }
}

} // namespace

std::vector<std::string> external_locations(const ::onnx::GraphProto& graph) {
  return location_names(top_locations(graph));
}

std::vector<std::string> external_locations(const loaded_model& model) {
  return location_names(top_locations(model));
}

void declare_model_inputs(io::output_set& outputs, const fs::path& model_path,
                          const ::onnx::GraphProto& graph) {
  declare_locations(outputs, model_path, external_locations(graph));
}

void declare_model_inputs(io::output_set& outputs, const fs::path& model_path,
                          const loaded_model& model) {
  declare_locations(outputs, model_path, external_locations(model));
}

void check_external_locations(const ::onnx::GraphProto& graph, const fs::path& model_dir) {
  check_locations(top_locations(graph), model_dir);
}

void check_external_locations(const loaded_model& model, const fs::path& model_dir) {
  check_locations(top_locations(model), model_dir);
}

namespace {

[[noreturn]] void fail(const ::onnx::TensorProto& t, const std::string& what) {
  throw input_error("initializer " + io::quote(t.name()) + ": " + what);
}

// Typed values narrowed (or copied) to `size` bytes each, in 1 MiB chunks.
template <class Field>
void emit_typed(const Field& values, std::size_t size, std::uint64_t expected,
                const ::onnx::TensorProto& t,
                const std::function<void(const char*, std::size_t)>& sink) {
  using V = typename Field::value_type;
  if (static_cast<std::uint64_t>(values.size()) * sizeof(V) != expected * size &&
      static_cast<std::uint64_t>(values.size()) != expected) {
    fail(t, "holds " + std::to_string(values.size()) + " values for " + std::to_string(expected) +
                " elements");
  }
  if (static_cast<std::uint64_t>(values.size()) * sizeof(V) == expected * size) {
    // Same width (or several values an element, as complex numbers): as is.
    const auto* p = reinterpret_cast<const char*>(values.data());
    const std::size_t total = static_cast<std::size_t>(values.size()) * sizeof(V);
    for (std::size_t at = 0; at < total; at += 1 << 20) {
      sink(p + at, std::min<std::size_t>(1 << 20, total - at));
    }
    return;
  }
  std::vector<char> buffer;
  buffer.reserve(1 << 20);
  for (const V& v : values) { // little-endian: the low bytes come first
    const char* b = reinterpret_cast<const char*>(&v);
    buffer.insert(buffer.end(), b, b + size);
    if (buffer.size() >= (1 << 20)) {
      sink(buffer.data(), buffer.size());
      buffer.clear();
    }
  }
  if (!buffer.empty()) {
    sink(buffer.data(), buffer.size());
  }
}

} // namespace

// One case a storage of a tensor's bytes (raw, external, or each typed
// field of ONNX, at its width), each streamed to `sink`: 84 lines, kept
// together so that every field ONNX defines is seen to be handled.
void for_each_chunk(const ::onnx::TensorProto& t, const fs::path& base_dir,
                    const std::function<void(const char*, std::size_t)>& sink) {
  using T = ::onnx::TensorProto;
  const auto size = element_bytes(t.data_type());
  if (!size) {
    fail(t, "its element type (" + std::to_string(t.data_type()) + ") has no fixed size");
  }
  const std::uint64_t count = element_count(t);
  const auto total =
      detail::checked_mul(static_cast<std::int64_t>(count), static_cast<std::int64_t>(*size));
  if (!total) {
    fail(t, "its data would be more than 2^62 bytes");
  }
  const auto bytes = static_cast<std::uint64_t>(*total);
  if (is_external(t)) {
    std::string location;
    std::uint64_t offset = 0;
    std::optional<std::uint64_t> length;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" || kv.key() == "length") {
        // Digits only (std::stoull would take "-1" and throw on "x").
        std::uint64_t v = 0;
        const auto& text = kv.value();
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
          fail(t, "external data " + kv.key() + " " + io::quote(text) + " is not a byte count");
        }
        (kv.key() == "offset" ? offset : length.emplace()) = v;
      }
    }
    if (location.empty()) {
      fail(t, "external data without a location");
    }
    if (length && *length != bytes) {
      fail(t, "external data of " + std::to_string(*length) + " bytes for " +
                  std::to_string(bytes) + " bytes of elements");
    }
    const fs::path file = io::external_data_file(base_dir, location, t.name());
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fail(t, "its external data file " + io::quote(file.string()) + " cannot be opened");
    }
    in.seekg(static_cast<std::streamoff>(offset));
    std::vector<char> buffer(1 << 20);
    std::uint64_t left = bytes;
    while (left > 0) {
      const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
      in.read(buffer.data(), static_cast<std::streamsize>(chunk));
      if (static_cast<std::size_t>(in.gcount()) != chunk) {
        fail(t, "its external data file " + io::quote(file.string()) + " ends before offset " +
                    std::to_string(offset) + " + " + std::to_string(bytes));
      }
      sink(buffer.data(), chunk);
      left -= chunk;
    }
    return;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes) {
      fail(t, "raw_data holds " + std::to_string(t.raw_data().size()) + " bytes for " +
                  std::to_string(bytes));
    }
    for (std::size_t at = 0; at < bytes; at += 1 << 20) {
      sink(t.raw_data().data() + at, std::min<std::size_t>(1 << 20, bytes - at));
    }
    return;
  }
  switch (t.data_type()) {
  case T::FLOAT:
  case T::COMPLEX64:
    return emit_typed(t.float_data(), *size, count, t, sink);
  case T::DOUBLE:
  case T::COMPLEX128:
    return emit_typed(t.double_data(), *size, count, t, sink);
  case T::INT64:
    return emit_typed(t.int64_data(), *size, count, t, sink);
  case T::UINT32:
  case T::UINT64:
    return emit_typed(t.uint64_data(), *size, count, t, sink);
  default: // INT32 and everything narrower, FLOAT16 and BFLOAT16 as their bits
    return emit_typed(t.int32_data(), *size, count, t, sink);
  }
}

std::string raw_bytes(const ::onnx::TensorProto& t, const fs::path& base_dir) {
  std::string out;
  for_each_chunk(t, base_dir, [&](const char* p, std::size_t n) { out.append(p, n); });
  return out;
}

} // namespace shardpoint::onnx
