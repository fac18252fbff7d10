// MindSpore strategy and checkpoint files, and safetensors.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <nlohmann/json.hpp>

#include <shardpoint/error.hpp>
#include <shardpoint/io/detail/json_input.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/onnx/tensor_data.hpp>
#include <shardpoint/onnx/weight_files.hpp>
#include <shardpoint/sharding_point.hpp>

#include "fd_stream.hpp"

namespace shardpoint::weights {
namespace fs = std::filesystem;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;
using WFL = google::protobuf::internal::WireFormatLite;

namespace {

// ---- writing protobuf messages field by field -------------------------------

/// A message under construction: fields appended to a string.
class message {
public:
  message& varint(int field, std::uint64_t v) {
    stream().WriteTag(WFL::MakeTag(field, WFL::WIRETYPE_VARINT));
    stream().WriteVarint64(v);
    return *this;
  }
  /// int32 as protobuf writes it: negative values sign-extended to 10 bytes.
  message& int32(int field, std::int32_t v) {
    return varint(field, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  }
  message& bytes(int field, std::string_view v) {
    stream().WriteTag(WFL::MakeTag(field, WFL::WIRETYPE_LENGTH_DELIMITED));
    stream().WriteVarint32(static_cast<std::uint32_t>(v.size()));
    if (!v.empty()) { // an empty view's data() may be null, which memcpy may not take
      stream().WriteRaw(v.data(), static_cast<int>(v.size()));
    }
    return *this;
  }
  message& nested(int field, message& m) { return bytes(field, m.str()); }
  const std::string& str() {
    coded_.reset();
    out_.reset();
    return buffer_;
  }

private:
  CodedOutputStream& stream() {
    if (!coded_) {
      out_ = std::make_unique<StringOutputStream>(&buffer_);
      coded_ = std::make_unique<CodedOutputStream>(out_.get());
    }
    return *coded_;
  }
  std::string buffer_;
  std::unique_ptr<StringOutputStream> out_;
  std::unique_ptr<CodedOutputStream> coded_;
};

/// A repeated scalar field as a message of its own: {repeated T dim = 1}.
template <class T>
message dims_message(const std::vector<T>& values, bool as_int32 = false) {
  message m;
  for (auto v : values) {
    if (as_int32) {
      m.int32(1, static_cast<std::int32_t>(v));
    } else {
      m.varint(1, static_cast<std::uint64_t>(v));
    }
  }
  return m;
}

// ---- reading protobuf messages field by field -------------------------------

[[noreturn]] void bad(const fs::path& path, const std::string& what) {
  throw bad_input_error(io::quote(path.string()) + ": " + what);
}

/// Calls `on(field, wire_type, varint, bytes)` for each field of a message.
void fields(std::string_view data, const fs::path& path,
            const std::function<void(int, int, std::uint64_t, std::string_view)>& on) {
  CodedInputStream in(reinterpret_cast<const std::uint8_t*>(data.data()),
                      static_cast<int>(data.size()));
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  while (true) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (in.CurrentPosition() != static_cast<int>(data.size())) {
        bad(path, "not a MindSpore file (a field tag is malformed)");
      }
      return;
    }
    const int field = static_cast<int>(WFL::GetTagFieldNumber(tag));
    const auto type = WFL::GetTagWireType(tag);
    std::uint64_t v = 0;
    switch (type) {
    case WFL::WIRETYPE_VARINT:
      if (!in.ReadVarint64(&v)) {
        bad(path, "not a MindSpore file (a varint is truncated)");
      }
      on(field, type, v, {});
      break;
    case WFL::WIRETYPE_LENGTH_DELIMITED: {
      std::uint32_t size = 0;
      if (!in.ReadVarint32(&size)) {
        bad(path, "not a MindSpore file (a length is truncated)");
      }
      const int at = in.CurrentPosition();
      if (static_cast<std::size_t>(at) + size > data.size()) {
        bad(path, "not a MindSpore file (a field runs past the end)");
      }
      on(field, type, 0, data.substr(static_cast<std::size_t>(at), size));
      in.Skip(static_cast<int>(size));
      break;
    }
    default:
      if (!WFL::SkipField(&in, tag)) {
        bad(path, "not a MindSpore file (a field cannot be skipped)");
      }
    }
  }
}

/// A message of MindSpore's `{string name = 1; Message value = 2;}` pairs
/// (ParallelStrategyItem, ParallelLayoutItem, Checkpoint.Value): its name and
/// its value's bytes; the last of each wins, as protobuf's parser has it.
std::pair<std::string, std::string_view> named_entry(std::string_view data, const fs::path& path) {
  std::pair<std::string, std::string_view> entry;
  fields(data, path, [&](int f, int t, std::uint64_t, std::string_view b) {
    if (f == 1 && t == WFL::WIRETYPE_LENGTH_DELIMITED) {
      entry.first = std::string(b);
    } else if (f == 2 && t == WFL::WIRETYPE_LENGTH_DELIMITED) {
      entry.second = b;
    }
  });
  return entry;
}

/// The varints of a packed repeated field.
std::vector<std::int64_t> unpack_varints(std::string_view packed) {
  std::vector<std::int64_t> out;
  CodedInputStream in(reinterpret_cast<const std::uint8_t*>(packed.data()),
                      static_cast<int>(packed.size()));
  std::uint64_t x = 0;
  while (in.CurrentPosition() < static_cast<int>(packed.size()) && in.ReadVarint64(&x)) {
    out.push_back(static_cast<std::int64_t>(x));
  }
  return out;
}

/// {repeated T dim = 1}, unpacked (as proto2 writes it) or packed.
template <class T>
std::vector<T> read_dims(std::string_view bytes, const fs::path& path) {
  std::vector<T> out;
  fields(bytes, path, [&](int field, int type, std::uint64_t v, std::string_view packed) {
    if (field != 1) {
      return;
    }
    if (type == WFL::WIRETYPE_VARINT) {
      out.push_back(static_cast<T>(static_cast<std::int64_t>(v)));
    } else {
      for (auto x : unpack_varints(packed)) {
        out.push_back(static_cast<T>(x));
      }
    }
  });
  return out;
}

std::string read_file(const fs::path& path, const char* what) {
  io::require_regular_file(path, std::string(what) + " file"); // not /dev/zero, a folder, a FIFO
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    bad(path, "cannot be read");
  }
  return data;
}

} // namespace

// ---- strategies ---------------------------------------------------------------

namespace {

// The layout as MindSpore's C++ writer normalises it: the device-matrix axes
// of size 1 removed, the map renumbered (an entry naming a removed axis
// becomes -1); [1] when every axis is 1.
std::pair<std::vector<std::int64_t>, std::vector<std::int32_t>>
without_unit_axes(const tensor_layout& l) {
  const std::size_t n = l.device_matrix.size();
  std::vector<std::int64_t> dev;
  std::vector<std::int64_t> index_of(n, -1); // old axis -> new axis
  for (std::size_t a = 0; a < n; ++a) {
    if (l.device_matrix[a] != 1) {
      index_of[a] = static_cast<std::int64_t>(dev.size());
      dev.push_back(l.device_matrix[a]);
    }
  }
  std::vector<std::int32_t> map;
  for (const auto& entry : l.tensor_map) {
    const std::int32_t m = entry.empty() ? -1 : entry.front();
    const std::int64_t axis = m < 0 ? -1 : index_of[n - 1 - static_cast<std::size_t>(m)];
    map.push_back(
        axis < 0 ? -1
                 : static_cast<std::int32_t>(static_cast<std::int64_t>(dev.size()) - 1 - axis));
  }
  if (dev.empty()) {
    dev.push_back(1);
  }
  return {dev, map};
}

// The single map of a layout shardpoint made (one axis a dimension).
std::vector<std::int32_t> flat_map(const tensor_layout& l) {
  std::vector<std::int32_t> out;
  for (const auto& entry : l.tensor_map) {
    out.push_back(entry.empty() ? -1 : entry.front());
  }
  return out;
}

} // namespace

std::string strategy_to_protobuf(const stage_strategy& s, layout_form form) {
  const bool tutorial = form == layout_form::tutorial;
  message map;
  map.varint(1, tutorial ? 0 : 1); // current_stage: the tutorial's 0, the C++ writer's first save
  for (const auto& p : s.parameters) {
    message strategy = dims_message(p.layout.shard);
    message strategys;
    strategys.varint(1, static_cast<std::uint64_t>(p.stage)).nested(2, strategy);
    message item;
    item.bytes(1, p.layout.name).nested(2, strategys);
    map.nested(2, item);
  }
  for (const auto& p : s.parameters) {
    message layouts;
    if (tutorial) {
      message dev = dims_message(p.layout.device_matrix);
      message tensor_map = dims_message(flat_map(p.layout), true);
      message split_shape = dims_message(p.layout.shape);
      layouts.nested(1, dev).nested(2, tensor_map).nested(3, split_shape);
    } else {
      const auto [dev_matrix, flat] = without_unit_axes(p.layout);
      message dev = dims_message(dev_matrix);
      message tensor_map = dims_message(flat, true);
      layouts.nested(1, dev).nested(2, tensor_map).bytes(3, {}).bytes(4, {});
    }
    layouts.int32(5, 0).int32(6, 0).int32(7, 0); // field, opt_weight_shard_step / _size
    message item;
    item.bytes(1, p.layout.name).nested(2, layouts);
    map.nested(3, item);
  }
  return map.str();
}

std::string strategy_to_json(const stage_strategy& s) {
  nlohmann::json j; // std::map: keys sorted, as MindSpore's writer
  j["current_stage"] = 1;
  for (const auto& p : s.parameters) {
    if (!io::is_utf8(p.layout.name)) {
      throw unsupported_error("parameter " + io::quote(p.layout.name) +
                              ": its name is not UTF-8, which a JSON strategy cannot carry; "
                              "the protobuf form can (--format ckpt)");
    }
    j["parallel_strategy_item"][p.layout.name] = {{"stage", p.stage},
                                                  {"parallel_strategy", {p.layout.shard}}};
    const auto [dev_matrix, flat] = without_unit_axes(p.layout);
    j["parallel_layout_item"][p.layout.name] = {
        {"dev_matrix", dev_matrix},       {"tensor_map", flat},
        {"tensor_shape", p.layout.shape}, {"field", 0},
        {"opt_weight_shard_step", 0},     {"opt_weight_shard_size", 0}};
  }
  return j.dump();
}

stage_strategy read_strategy(const fs::path& path) {
  return parse_strategy(read_file(path, "strategy"), path, path.extension() == ".json");
}

namespace {

// A JSON integer that fits T; bad input otherwise (nlohmann's get<int>()
// converts a float such as 3e22 with a static_cast, which is undefined when
// it does not fit: fuzz_config).
template <class T>
T json_integer(const nlohmann::ordered_json& v, const fs::path& path, const std::string& what) {
  using limits = std::numeric_limits<T>;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(limits::max())) {
      return static_cast<T>(u);
    }
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= static_cast<std::int64_t>(limits::min()) &&
        i <= static_cast<std::int64_t>(limits::max())) {
      return static_cast<T>(i);
    }
  }
  bad(path, "not a MindSpore JSON strategy: " + what + " " + io::quote(v.dump()) +
                " is not an integer in range");
}

template <class T>
std::vector<T> json_integers(const nlohmann::ordered_json& v, const fs::path& path,
                             const std::string& what) {
  if (!v.is_array()) {
    bad(path, "not a MindSpore JSON strategy: " + what + " is not a list");
  }
  std::vector<T> out;
  out.reserve(v.size());
  for (const auto& x : v) {
    out.push_back(json_integer<T>(x, path, what));
  }
  return out;
}

} // namespace

namespace {

// A tensor map entry of the JSON form: an integer, or a list (nested map).
std::vector<std::int32_t> json_map_entry(const nlohmann::ordered_json& v, const fs::path& path,
                                         const std::string& what) {
  if (v.is_array()) {
    return json_integers<std::int32_t>(v, path, what);
  }
  return {json_integer<std::int32_t>(v, path, what)};
}

// One TensorMap message's values a tensor dimension (the classic form), or
// one message a dimension (MindSpore's Layout API; a 1-D tensor's is
// followed by an empty one).
std::vector<std::vector<std::int32_t>>
tensor_maps(std::vector<std::vector<std::int32_t>> messages) {
  std::vector<std::vector<std::int32_t>> out;
  if (messages.size() == 1) {
    for (const auto m : messages.front()) {
      out.push_back({m});
    }
    return out;
  }
  for (auto& m : messages) {
    if (!m.empty()) {
      out.push_back(std::move(m));
    }
  }
  return out;
}

// Checks what every later use assumes of a layout read from `path`, and
// derives its devices, parts and copies.
void complete_layout(tensor_layout& l, const fs::path& path) {
  const std::string& name = l.name;
  if (name.find('-') != std::string::npos) {
    bad(path, "parameter '" + name +
                  "': MindSpore reads a name with '-' as '<stage>-<name>', a strategy that "
                  "merge_pipeline_strategys merged; give the strategy file of each stage");
  }
  // Products of positive counts that fit, as every later use assumes
  // (fuzz_config found an overflow here).
  std::int64_t devices = 1;
  for (const auto d : l.device_matrix) {
    if (d < 1 || __builtin_mul_overflow(devices, d, &devices) || devices > INT32_MAX) {
      bad(path, "parameter '" + name +
                    "': its dev_matrix is not a list of positive counts whose product is below "
                    "2^31");
    }
  }
  l.devices = devices;
  const auto n = static_cast<std::int64_t>(l.device_matrix.size());
  std::int64_t cut = 1;
  std::set<std::int32_t> used;
  l.shard.clear();
  for (const auto& entry : l.tensor_map) {
    std::int64_t parts = 1;
    for (const auto m : entry) {
      if (m < -1 || m >= n) {
        bad(path, "parameter '" + name + "': tensor_map entry " + std::to_string(m) +
                      " names no dimension of its dev_matrix");
      }
      if (m >= 0 && !used.insert(m).second) {
        bad(path, "parameter '" + name + "': its tensor_map uses an axis of its dev_matrix twice");
      }
      if (m >= 0) {
        parts *= l.device_matrix[static_cast<std::size_t>(n - 1 - m)];
      }
    }
    l.shard.push_back(parts);
    cut *= parts; // distinct axes: at most the devices
  }
  l.repeat = devices / cut;
  for (const auto d : l.shape) {
    if (d < 0) {
      bad(path, "parameter '" + name + "': its tensor_shape has a negative dimension");
    }
  }
  if (l.shape_known && l.shape.size() != l.tensor_map.size()) {
    bad(path, "parameter '" + name + "': its tensor_shape has " + std::to_string(l.shape.size()) +
                  " dimensions and its tensor_map " + std::to_string(l.tensor_map.size()));
  }
  if (l.opt_shard_size < -1 || l.opt_shard_step < 0) {
    bad(path, "parameter '" + name + "': its opt_weight_shard_size or _step is negative");
  }
}

} // namespace

namespace {

// Called with each parallel_strategy_item's name and stage.
using item_stages = std::function<void(const std::string&, std::int64_t)>;

// A ParallelLayouts message of parameter `name`.
tensor_layout protobuf_layout(const std::string& name, std::string_view inner,
                              const fs::path& path) {
  tensor_layout l; // ParallelLayoutItem {param_name, ParallelLayouts}
  l.name = name;
  l.shape_known = false;
  bool dev = false;
  bool split = false;
  bool offset = false;
  std::vector<std::vector<std::int32_t>> maps;
  fields(inner, path, [&](int f, int t, std::uint64_t x, std::string_view b) {
    if (t == WFL::WIRETYPE_VARINT) { // int32: a negative one sign-extended
      const auto v = static_cast<std::int64_t>(static_cast<std::int32_t>(x));
      if (f == 5) {
        l.field = v;
      } else if (f == 6) {
        l.opt_shard_step = v;
      } else if (f == 7) {
        l.opt_shard_size = v;
      }
    } else if (f == 1 && !std::exchange(dev, true)) { // MindSpore reads the first
      l.device_matrix = read_dims<std::int64_t>(b, path);
    } else if (f == 2) {
      maps.push_back(read_dims<std::int32_t>(b, path));
    } else if (f == 3 && !std::exchange(split, true)) {
      l.split_shape = read_dims<std::int64_t>(b, path);
    } else if (f == 4 && !std::exchange(offset, true)) {
      l.indices_offset = read_dims<std::int64_t>(b, path);
    }
  });
  if (!dev || maps.empty()) { // MindSpore reads dev_matrix[0] and tensor_map[0]
    bad(path, "parameter '" + name + "' has no dev_matrix or no tensor_map");
  }
  l.tensor_map = tensor_maps(std::move(maps));
  return l;
}

// The items and layouts of a ParallelStrategyMap.
std::vector<tensor_layout> protobuf_layouts(std::string_view data, const fs::path& path,
                                            const item_stages& item_stage) {
  std::vector<tensor_layout> layouts;
  fields(data, path, [&](int field, int type, std::uint64_t, std::string_view bytes) {
    if ((field != 2 && field != 3) || type != WFL::WIRETYPE_LENGTH_DELIMITED) {
      return; // current_stage (1): a save counter, not the stage
    }
    const auto [name, inner] = named_entry(bytes, path);
    if (field == 2) { // ParallelStrategyItem {node_name, {stage, [strategy]}}
      std::int64_t stage = 0;
      fields(inner, path, [&](int f, int t, std::uint64_t x, std::string_view) {
        if (f == 1 && t == WFL::WIRETYPE_VARINT) {
          stage = static_cast<std::int64_t>(x);
        }
      });
      item_stage(name, stage);
      return;
    }
    layouts.push_back(protobuf_layout(name, inner, path));
  });
  return layouts;
}

// The items and layouts of MindSpore's JSON form.
std::vector<tensor_layout> json_layouts(std::string_view data, const fs::path& path,
                                        const item_stages& item_stage) {
  std::vector<tensor_layout> layouts;
  try {
    const auto j = io::detail::parse_json<nlohmann::ordered_json>(data, path.string());
    if (const auto items = j.find("parallel_strategy_item"); items != j.end()) {
      for (const auto& [node, item] : items->items()) {
        item_stage(node,
                   json_integer<std::int64_t>(item.at("stage"), path, "the stage of " + node));
      }
    }
    for (const auto& kv : j.at("parallel_layout_item").items()) {
      const std::string& name = kv.key(); // not a structured binding: the lambda
      const auto& item = kv.value();      // below captures it (clang 14)
      auto& l = layouts.emplace_back();
      l.name = name;
      l.device_matrix =
          json_integers<std::int64_t>(item.at("dev_matrix"), path, "the dev_matrix of " + name);
      const auto& map = item.at("tensor_map");
      if (!map.is_array()) {
        bad(path, "not a MindSpore JSON strategy: the tensor_map of " + name + " is not a list");
      }
      for (const auto& e : map) {
        l.tensor_map.push_back(json_map_entry(e, path, "the tensor_map of " + name));
      }
      l.shape_known = item.contains("tensor_shape");
      if (l.shape_known) {
        l.shape = json_integers<std::int64_t>(item.at("tensor_shape"), path,
                                              "the tensor_shape of " + name);
      }
      const auto optional = [&](const char* key, auto& out) {
        if (const auto it = item.find(key); it != item.end()) {
          using T = std::decay_t<decltype(out)>;
          if constexpr (std::is_same_v<T, std::int64_t>) {
            out = json_integer<std::int64_t>(*it, path, std::string("the ") + key + " of " + name);
          } else {
            out = json_integers<std::int64_t>(*it, path, std::string("the ") + key + " of " + name);
          }
        }
      };
      optional("field", l.field);
      optional("opt_weight_shard_step", l.opt_shard_step);
      optional("opt_weight_shard_size", l.opt_shard_size);
      optional("param_split_shape", l.split_shape);
      optional("indices_offset", l.indices_offset);
    }
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    bad(path, "not a MindSpore JSON strategy: " + what.substr(what.find("] ") + 2));
  }
  return layouts;
}

} // namespace

stage_strategy parse_strategy(std::string_view data, const fs::path& path, bool json) {
  stage_strategy s;
  s.file = path;
  std::optional<std::pair<std::string, int>> first_item; // the stage, from the items
  const auto item_stage = [&](const std::string& node, std::int64_t stage) {
    if (stage < 0 || stage > max_group_id) { // as every stage id (sharding_point.hpp)
      bad(path, "parallel_strategy_item '" + node + "' has stage " + std::to_string(stage) +
                    ", not a stage id in 0.." + std::to_string(max_group_id));
    }
    if (!first_item) {
      first_item.emplace(node, static_cast<int>(stage));
    } else if (first_item->second != stage) {
      bad(path, "parallel_strategy_item '" + first_item->first + "' is in stage " +
                    std::to_string(first_item->second) + " and '" + node + "' in stage " +
                    std::to_string(stage) +
                    "; a strategy file holds one stage (one that merge_pipeline_strategys "
                    "merged? give the strategy file of each stage)");
    }
  };
  auto layouts =
      json ? json_layouts(data, path, item_stage) : protobuf_layouts(data, path, item_stage);
  s.stage_known = first_item.has_value();
  s.stage = first_item ? first_item->second : 0;
  std::set<std::string> seen;
  for (auto& l : layouts) {
    if (!seen.insert(l.name).second) {
      bad(path, "parameter '" + l.name + "' has two parallel_layout_items");
    }
    complete_layout(l, path);
    s.parameters.push_back({std::move(l), s.stage});
  }
  return s;
}

// ---- element types ------------------------------------------------------------

std::optional<dtype_names> dtype_of(int t) {
  switch (t) {
  case 1:
    return dtype_names{"Float32", "F32", 4};
  case 2:
    return dtype_names{"UInt8", "U8", 1};
  case 3:
    return dtype_names{"Int8", "I8", 1};
  case 4:
    return dtype_names{"UInt16", "U16", 2};
  case 5:
    return dtype_names{"Int16", "I16", 2};
  case 6:
    return dtype_names{"Int32", "I32", 4};
  case 7:
    return dtype_names{"Int64", "I64", 8};
  case 9:
    return dtype_names{"Bool", "BOOL", 1};
  case 10:
    return dtype_names{"Float16", "F16", 2};
  case 11:
    return dtype_names{"Float64", "F64", 8};
  case 12:
    return dtype_names{"UInt32", "U32", 4};
  case 13:
    return dtype_names{"UInt64", "U64", 8};
  case 16:
    return dtype_names{"BFloat16", "BF16", 2};
  default:
    return std::nullopt;
  }
}

std::optional<int> onnx_type_of(const std::string& name) {
  for (int t = 0; t <= 16; ++t) {
    if (const auto d = dtype_of(t); d && (name == d->mindspore || name == d->safetensors)) {
      return t;
    }
  }
  return std::nullopt;
}

// ---- checkpoints ----------------------------------------------------------------

namespace {

constexpr std::uint64_t piece_limit = 512ULL << 20; // MindSpore's largest value

// Writes through a file descriptor with protobuf's buffered stream.
void write_with(const fs::path& path,
                const std::function<void(CodedOutputStream&,
                                         google::protobuf::io::ZeroCopyOutputStream&)>& body) {
  io::write_atomically(path, [&](int fd) {
    shardpoint::onnx::fd_output_stream out(fd);
    bool ok = true;
    {
      CodedOutputStream coded(&out);
      body(coded, out);
      ok = !coded.HadError();
    }
    ok = out.Flush() && ok;
    return ok ? 0 : (out.error() != 0 ? out.error() : EIO);
  });
}

} // namespace

void write_checkpoint(const fs::path& path, const std::vector<tensor_source>& tensors) {
  write_with(path, [&](CodedOutputStream& out, google::protobuf::io::ZeroCopyOutputStream&) {
    for (const auto& t : tensors) {
      const auto type = dtype_of(t.onnx_type);
      if (!type) {
        throw unsupported_error("tensor " + io::quote(t.name) + ": its ONNX type " +
                                std::to_string(t.onnx_type) + " has no MindSpore name");
      }
      // The pieces' sizes, then one Checkpoint.Value a piece; the content is
      // streamed into them as it comes.
      std::vector<std::uint64_t> pieces;
      for (std::uint64_t left = t.bytes; left > 0 || pieces.empty();) {
        pieces.push_back(std::min(left, piece_limit));
        left -= pieces.back();
      }
      message dims = dims_message(t.shape);
      std::size_t piece = 0;
      std::uint64_t written_in_piece = 0;
      const auto open_piece = [&] {
        const std::uint64_t content = pieces[piece];
        const std::size_t dims_size = dims.str().size(); // repeated int64 dims = 1, unpacked
        const std::uint64_t tensor_size =
            dims_size + 1 +
            CodedOutputStream::VarintSize32(
                static_cast<std::uint32_t>(std::strlen(type->mindspore))) +
            std::strlen(type->mindspore) + 1 + CodedOutputStream::VarintSize64(content) + content;
        const std::uint64_t value_size =
            1 + CodedOutputStream::VarintSize32(static_cast<std::uint32_t>(t.name.size())) +
            t.name.size() + 1 + CodedOutputStream::VarintSize64(tensor_size) + tensor_size;
        out.WriteTag(WFL::MakeTag(1, WFL::WIRETYPE_LENGTH_DELIMITED)); // Checkpoint.value
        out.WriteVarint64(value_size);
        out.WriteTag(WFL::MakeTag(1, WFL::WIRETYPE_LENGTH_DELIMITED)); // tag
        out.WriteVarint32(static_cast<std::uint32_t>(t.name.size()));
        out.WriteString(t.name);
        out.WriteTag(WFL::MakeTag(2, WFL::WIRETYPE_LENGTH_DELIMITED)); // tensor
        out.WriteVarint64(tensor_size);
        out.WriteString(dims.str());
        out.WriteTag(WFL::MakeTag(2, WFL::WIRETYPE_LENGTH_DELIMITED)); // tensor_type
        out.WriteVarint32(static_cast<std::uint32_t>(std::strlen(type->mindspore)));
        out.WriteRaw(type->mindspore, static_cast<int>(std::strlen(type->mindspore)));
        out.WriteTag(WFL::MakeTag(3, WFL::WIRETYPE_LENGTH_DELIMITED)); // tensor_content
        out.WriteVarint64(content);
      };
      open_piece();
      std::uint64_t total = 0;
      t.produce([&](const char* data, std::size_t size) {
        while (size > 0) {
          if (written_in_piece == pieces[piece]) {
            ++piece;
            written_in_piece = 0;
            open_piece();
          }
          const auto n = static_cast<std::size_t>(
              std::min<std::uint64_t>(size, pieces[piece] - written_in_piece));
          out.WriteRaw(data, static_cast<int>(n));
          data += n;
          size -= n;
          written_in_piece += n;
          total += n;
        }
      });
      if (total != t.bytes) {
        throw internal_error("tensor " + io::quote(t.name) + " produced " + std::to_string(total) +
                             " bytes for " + std::to_string(t.bytes));
      }
    }
  });
}

void write_safetensors(const fs::path& path, const std::vector<tensor_source>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::uint64_t at = 0;
  for (const auto& t : tensors) {
    const auto type = dtype_of(t.onnx_type);
    if (!type) {
      throw unsupported_error("tensor " + io::quote(t.name) + ": its ONNX type " +
                              std::to_string(t.onnx_type) + " has no safetensors name");
    }
    if (!io::is_utf8(t.name)) { // fuzz_commands: nlohmann's dump threw on it, exit 4
      throw unsupported_error("tensor " + io::quote(t.name) +
                              ": its name is not UTF-8, which safetensors' JSON header cannot "
                              "carry; MindSpore checkpoints can (--format ckpt)");
    }
    header[t.name] = {
        {"dtype", type->safetensors}, {"shape", t.shape}, {"data_offsets", {at, at + t.bytes}}};
    at += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  write_with(path, [&](CodedOutputStream& out, google::protobuf::io::ZeroCopyOutputStream&) {
    const std::uint64_t n = text.size();
    char size[8];
    for (int i = 0; i < 8; ++i) {
      size[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    }
    out.WriteRaw(size, 8);
    out.WriteString(text);
    for (const auto& t : tensors) {
      std::uint64_t total = 0;
      t.produce([&](const char* data, std::size_t size_) {
        out.WriteRaw(data, static_cast<int>(size_));
        total += size_;
      });
      if (total != t.bytes) {
        throw internal_error("tensor " + io::quote(t.name) + " produced " + std::to_string(total) +
                             " bytes for " + std::to_string(t.bytes));
      }
    }
  });
}

std::optional<weight_file_kind> weight_file_kind_of(std::string_view bytes) {
  if (bytes.size() >= 9 && bytes[8] == '{') {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) {
      n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    }
    if (n >= 2 && n <= bytes.size() - 8) {
      return weight_file_kind::safetensors;
    }
  }
  // Checkpoint.value (field 1, length-delimited): tag byte 0x0a.
  if (bytes.empty() || bytes.front() == 0x0a) {
    return weight_file_kind::mindspore_checkpoint;
  }
  return std::nullopt;
}

namespace {

// A tensor read from `path` as a file can hold it, never trusted: each
// dimension a count (MindSpore's and safetensors' shapes are whole numbers
// of at least 0), and exactly the bytes its shape and type need --
// otherwise the slices cut from it would be read past its end or be
// silently wrong. Counted with overflow checks (a file can say 2^40 x 2^40).
void check_stored(const fs::path& path, const std::string& name, const stored_tensor& t) {
  for (const std::int64_t d : t.shape) {
    if (d < 0) {
      bad(path,
          "tensor " + io::quote(name) + " has a negative dimension (" + std::to_string(d) + ")");
    }
  }
  // 0 elements with a dimension 0, however large the others.
  std::uint64_t elements = std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end() ? 0 : 1;
  for (const std::int64_t d : t.shape) {
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(d), &elements)) {
      bad(path, "tensor " + io::quote(name) + " has more elements than a file can hold");
    }
  }
  const std::optional<std::size_t> size = onnx::element_bytes(t.onnx_type);
  std::uint64_t bytes = 0;
  if (!size || __builtin_mul_overflow(elements, std::uint64_t{*size}, &bytes)) {
    bad(path, "tensor " + io::quote(name) + " has more bytes than a file can hold");
  }
  if (bytes != t.data.size()) {
    std::string shape;
    for (const std::int64_t d : t.shape) {
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    }
    bad(path, "tensor " + io::quote(name) + " holds " + std::to_string(t.data.size()) +
                  " bytes; its shape [" + shape + "] needs " + std::to_string(bytes));
  }
}

// A safetensors file's tensors: an 8-byte little-endian header size, the
// JSON header (dtype, shape, data_offsets), the data.
std::map<std::string, stored_tensor> read_safetensors(const fs::path& path,
                                                      const std::string& data) {
  std::map<std::string, stored_tensor> out;
  if (data.size() < 8) {
    bad(path, "not a safetensors file (shorter than its 8-byte header size)");
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(data[static_cast<std::size_t>(i)]);
  }
  if (n > data.size() - 8) {
    bad(path, "not a safetensors file (its header runs past the end)");
  }
  // A key given twice is refused (nlohmann keeps the last), as in every JSON
  // shardpoint reads.
  const auto header = io::detail::parse_json<nlohmann::json>(std::string_view(data).substr(8, n),
                                                             io::quote(path.string()) + " header");
  try {
    const std::size_t base = 8 + n;
    for (const auto& [name, v] : header.items()) {
      if (name == "__metadata__") {
        continue;
      }
      stored_tensor t;
      const auto type = onnx_type_of(v.at("dtype").get<std::string>());
      if (!type) {
        bad(path, "tensor '" + name + "' has dtype " + v.at("dtype").get<std::string>() +
                      ", which shardpoint does not read");
      }
      t.onnx_type = *type;
      if (!v.at("shape").is_array()) { // nlohmann would iterate a number as [it]
        bad(path, "tensor " + io::quote(name) + " has a shape that is not a list");
      }
      for (const auto& d : v.at("shape")) { // whole numbers: 8.5 is not a dimension
        const bool beyond = d.is_number_unsigned()
                                ? d.get<std::uint64_t>() > std::uint64_t{INT64_MAX}
                                : d.is_number_float() && std::abs(d.get<double>()) >= 9.2e18;
        if (beyond) { // nlohmann reads a number past 2^64 as a double
          bad(path, "tensor " + io::quote(name) + " has a dimension beyond 2^63");
        }
        if (!d.is_number_integer()) {
          bad(path, "tensor " + io::quote(name) + " has a dimension that is not a whole number");
        }
        t.shape.push_back(d.get<std::int64_t>());
      }
      const auto offsets = v.at("data_offsets").get<std::vector<std::uint64_t>>();
      const std::uint64_t stored = data.size() - base; // the bytes after the header
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > stored) {
        std::string given;
        for (const auto o : offsets) {
          given += (given.empty() ? "" : ", ") + std::to_string(o);
        }
        bad(path, "tensor " + io::quote(name) + " has data offsets [" + given +
                      "], not a range within the " + std::to_string(stored) +
                      " bytes of data after the header");
      }
      t.data = data.substr(base + offsets[0], offsets[1] - offsets[0]);
      check_stored(path, name, t);
      out.emplace(name, std::move(t));
    }
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    bad(path, "not a safetensors header: " + what.substr(what.find("] ") + 2));
  }
  return out;
}

// A MindSpore checkpoint's tensors (Checkpoint.value: name, and a tensor of
// dims, tensor_type, data), the pieces of one over 512 MiB joined.
std::map<std::string, stored_tensor> read_checkpoint(const fs::path& path,
                                                     const std::string& data) {
  std::map<std::string, stored_tensor> out;
  // MindSpore's save_checkpoint(crc_check=True) ends the file with "crc_num"
  // and a 10-byte CRC; its load_checkpoint drops them, as here.
  std::string_view values = data;
  if (values.size() >= 17 && values.substr(values.size() - 17, 7) == "crc_num") {
    values.remove_suffix(17);
  }
  fields(values, path, [&](int field, int type, std::uint64_t, std::string_view value) {
    if (field != 1 || type != WFL::WIRETYPE_LENGTH_DELIMITED) {
      return;
    }
    const auto [name, tensor] = named_entry(value, path);
    stored_tensor piece;
    std::string dtype;
    fields(tensor, path, [&](int f, int t, std::uint64_t x, std::string_view b) {
      if (f == 1 && t == WFL::WIRETYPE_VARINT) {
        piece.shape.push_back(static_cast<std::int64_t>(x));
      } else if (f == 1) { // packed dims, which proto2 readers accept too
        const auto packed = unpack_varints(b);
        piece.shape.insert(piece.shape.end(), packed.begin(), packed.end());
      } else if (f == 2) {
        dtype = std::string(b);
      } else if (f == 3) {
        piece.data = std::string(b);
      }
    });
    const auto onnx_type = onnx_type_of(dtype);
    if (!onnx_type) {
      bad(path,
          "tensor '" + name + "' has tensor_type '" + dtype + "', which shardpoint does not read");
    }
    piece.onnx_type = *onnx_type;
    // Older MindSpore writes a scalar's dims as [0]; its loader reads them so.
    if (piece.shape == std::vector<std::int64_t>{0} && !piece.data.empty()) {
      piece.shape.clear();
    }
    auto [it, fresh] = out.try_emplace(name, std::move(piece));
    if (!fresh) { // a tensor over 512 MiB: the pieces concatenate
      it->second.data.append(piece.data);
    }
  });
  for (const auto& [name, t] : out) {
    check_stored(path, name, t);
  }
  return out;
}

} // namespace

std::map<std::string, stored_tensor> read_weights(const fs::path& path) {
  return parse_weights(read_file(path, "weights"), path);
}

std::map<std::string, stored_tensor> parse_weights(const std::string& data,
                                                   const fs::path& source) {
  const auto kind = weight_file_kind_of(data);
  if (!kind) {
    bad(source, "neither safetensors nor a MindSpore checkpoint");
  }
  return *kind == weight_file_kind::safetensors ? read_safetensors(source, data)
                                                : read_checkpoint(source, data);
}

} // namespace shardpoint::weights
