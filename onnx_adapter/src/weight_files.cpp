// MindSpore strategy and checkpoint files, and safetensors.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

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
#include <shardpoint/onnx/weight_files.hpp>

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
    stream().WriteRaw(v.data(), static_cast<int>(v.size()));
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
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    bad(path, std::string("no such ") + what + " file");
  }
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    bad(path, "cannot be read");
  }
  return data;
}

} // namespace

// ---- strategies ---------------------------------------------------------------

std::string strategy_to_protobuf(const stage_strategy& s) {
  message map;
  map.varint(1, static_cast<std::uint64_t>(s.stage));
  for (const auto& p : s.parameters) {
    message strategy = dims_message(p.layout.shard);
    message strategys;
    strategys.varint(1, static_cast<std::uint64_t>(p.stage)).nested(2, strategy);
    message item;
    item.bytes(1, p.layout.name).nested(2, strategys);
    map.nested(2, item);
  }
  for (const auto& p : s.parameters) {
    message dev = dims_message(p.layout.device_matrix);
    message tensor_map = dims_message(p.layout.tensor_map, true);
    message split_shape = dims_message(p.layout.shape);
    message layouts;
    layouts.nested(1, dev).nested(2, tensor_map).nested(3, split_shape);
    layouts.int32(5, 0).int32(6, 0).int32(7, 0); // field, opt_weight_shard_step / _size
    message item;
    item.bytes(1, p.layout.name).nested(2, layouts);
    map.nested(3, item);
  }
  return map.str();
}

std::string strategy_to_json(const stage_strategy& s) {
  nlohmann::ordered_json j;
  j["current_stage"] = s.stage;
  j["parallel_strategy_item"] = nlohmann::ordered_json::object();
  j["parallel_layout_item"] = nlohmann::ordered_json::object();
  for (const auto& p : s.parameters) {
    j["parallel_strategy_item"][p.layout.name] = {{"stage", p.stage},
                                                  {"parallel_strategy", {p.layout.shard}}};
    j["parallel_layout_item"][p.layout.name] = {
        {"dev_matrix", p.layout.device_matrix}, {"tensor_map", p.layout.tensor_map},
        {"tensor_shape", p.layout.shape},       {"field", 0},
        {"opt_weight_shard_step", 0},           {"opt_weight_shard_size", 0}};
  }
  return j.dump(2) + "\n";
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

stage_strategy parse_strategy(std::string_view data, const fs::path& path, bool json) {
  stage_strategy s;
  std::map<std::string, strategy_entry> by_name;
  std::set<std::string> with_layout;
  std::vector<std::string> order;
  const auto entry = [&](const std::string& name) -> strategy_entry& {
    auto [it, fresh] = by_name.try_emplace(name);
    if (fresh) {
      order.push_back(name);
      it->second.layout.name = name;
    }
    return it->second;
  };
  if (json) {
    try {
      const auto j = io::detail::parse_json<nlohmann::ordered_json>(data, path.string());
      s.stage = json_integer<int>(j.at("current_stage"), path, "current_stage");
      for (const auto& [name, item] : j.at("parallel_strategy_item").items()) {
        auto& e = entry(name);
        e.stage = json_integer<int>(item.at("stage"), path, "the stage of " + name);
        e.layout.shard = json_integers<std::int64_t>(item.at("parallel_strategy").at(0), path,
                                                     "the parallel_strategy of " + name);
      }
      for (const auto& [name, item] : j.at("parallel_layout_item").items()) {
        auto& e = entry(name);
        with_layout.insert(name);
        e.layout.device_matrix =
            json_integers<std::int64_t>(item.at("dev_matrix"), path, "the dev_matrix of " + name);
        e.layout.tensor_map =
            json_integers<std::int32_t>(item.at("tensor_map"), path, "the tensor_map of " + name);
        e.layout.shape = json_integers<std::int64_t>(item.at("tensor_shape"), path,
                                                     "the tensor_shape of " + name);
      }
    } catch (const nlohmann::json::exception& e) {
      std::string what = e.what();
      bad(path, "not a MindSpore JSON strategy: " + what.substr(what.find("] ") + 2));
    }
  } else {
    fields(data, path, [&](int field, int type, std::uint64_t v, std::string_view bytes) {
      if (field == 1 && type == WFL::WIRETYPE_VARINT) {
        s.stage = static_cast<int>(v);
      } else if ((field == 2 || field == 3) && type == WFL::WIRETYPE_LENGTH_DELIMITED) {
        std::string name;
        std::string_view inner;
        fields(bytes, path, [&](int f, int t, std::uint64_t, std::string_view b) {
          if (f == 1 && t == WFL::WIRETYPE_LENGTH_DELIMITED) {
            name = std::string(b);
          } else if (f == 2 && t == WFL::WIRETYPE_LENGTH_DELIMITED) {
            inner = b;
          }
        });
        auto& e = entry(name);
        if (field == 3) {
          with_layout.insert(name);
        }
        fields(inner, path, [&](int f, int t, std::uint64_t x, std::string_view b) {
          if (field == 2) { // ParallelStrategys {stage, parallel_strategy}
            if (f == 1 && t == WFL::WIRETYPE_VARINT) {
              e.stage = static_cast<int>(x);
            } else if (f == 2 && e.layout.shard.empty()) {
              e.layout.shard = read_dims<std::int64_t>(b, path);
            }
          } else if (t == WFL::WIRETYPE_LENGTH_DELIMITED) { // ParallelLayouts
            if (f == 1 && e.layout.device_matrix.empty()) {
              e.layout.device_matrix = read_dims<std::int64_t>(b, path);
            } else if (f == 2 && e.layout.tensor_map.empty()) {
              e.layout.tensor_map = read_dims<std::int32_t>(b, path);
            } else if (f == 3 && e.layout.shape.empty()) {
              e.layout.shape = read_dims<std::int64_t>(b, path);
            }
          }
        });
      }
    });
  }
  s.parameters.reserve(order.size());
  for (const auto& name : order) {
    auto e = by_name.at(name);
    if (!with_layout.count(name) || e.layout.tensor_map.size() != e.layout.shape.size()) {
      bad(path, "parameter '" + name + "' has no complete layout");
    }
    // Products of positive counts that fit, as every later use assumes
    // (fuzz_config found an overflow here).
    const auto product = [&](const std::vector<std::int64_t>& v, const char* what) {
      std::int64_t p = 1;
      for (const auto d : v) {
        if (d < 1 || __builtin_mul_overflow(p, d, &p) || p > INT32_MAX) {
          bad(path, "parameter '" + name + "': its " + what +
                        " is not a list of positive counts whose product is below 2^31");
        }
      }
      return p;
    };
    e.layout.devices = product(e.layout.device_matrix, "dev_matrix");
    const std::int64_t shards = product(e.layout.shard, "parallel_strategy");
    if (e.layout.devices % shards != 0) {
      bad(path, "parameter '" + name + "': its parallel_strategy needs " + std::to_string(shards) +
                    " devices, which do not divide the " + std::to_string(e.layout.devices) +
                    " of its dev_matrix");
    }
    for (const auto d : e.layout.shape) {
      if (d < 0) {
        bad(path, "parameter '" + name + "': its shape has a negative dimension");
      }
    }
    for (const auto m : e.layout.tensor_map) {
      if (m < -1 || m >= static_cast<std::int64_t>(e.layout.device_matrix.size())) {
        bad(path, "parameter '" + name + "': tensor_map entry " + std::to_string(m) +
                      " names no dimension of its dev_matrix");
      }
    }
    e.layout.repeat = e.layout.devices / shards;
    s.parameters.push_back(std::move(e));
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

std::map<std::string, stored_tensor> read_weights(const fs::path& path) {
  const std::string data = read_file(path, "weights");
  std::map<std::string, stored_tensor> out;
  if (path.extension() == ".safetensors") {
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
    try {
      const auto header = nlohmann::json::parse(data.substr(8, n));
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
        t.shape = v.at("shape").get<std::vector<std::int64_t>>();
        const auto offsets = v.at("data_offsets").get<std::vector<std::uint64_t>>();
        if (offsets.size() != 2 || offsets[0] > offsets[1] || base + offsets[1] > data.size()) {
          bad(path, "tensor '" + name + "' has data offsets past the end");
        }
        t.data = data.substr(base + offsets[0], offsets[1] - offsets[0]);
        out.emplace(name, std::move(t));
      }
    } catch (const nlohmann::json::exception& e) {
      std::string what = e.what();
      bad(path, "not a safetensors header: " + what.substr(what.find("] ") + 2));
    }
    return out;
  }
  fields(data, path, [&](int field, int type, std::uint64_t, std::string_view value) {
    if (field != 1 || type != WFL::WIRETYPE_LENGTH_DELIMITED) {
      return;
    }
    std::string name;
    std::string_view tensor;
    fields(value, path, [&](int f, int t, std::uint64_t, std::string_view b) {
      if (f == 1 && t == WFL::WIRETYPE_LENGTH_DELIMITED) {
        name = std::string(b);
      } else if (f == 2 && t == WFL::WIRETYPE_LENGTH_DELIMITED) {
        tensor = b;
      }
    });
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
    auto [it, fresh] = out.try_emplace(name, std::move(piece));
    if (!fresh) { // a tensor over 512 MiB: the pieces concatenate
      it->second.data.append(piece.data);
    }
  });
  return out;
}

} // namespace shardpoint::weights
