// shardpoint/onnx/weight_files.hpp -- the files tensor-parallel weights
// travel in: MindSpore's parallel strategy (protobuf or JSON) and checkpoint
// (.ckpt), and safetensors. Field numbers and layouts: docs/formats.md.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Written at the wire level with protobuf's CodedOutputStream and
// WireFormatLite (no generated classes: MindSpore's .proto files are not
// needed to build), and read back the same way. Tensor contents are streamed
// in and out, never held whole when they need not be.
#ifndef SHARDPOINT_ONNX_WEIGHT_FILES_HPP
#define SHARDPOINT_ONNX_WEIGHT_FILES_HPP

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <shardpoint/tensor_layout.hpp>

namespace shardpoint::weights {

/// One parameter of a stage's strategy.
struct strategy_entry {
  tensor_layout layout;
  int stage = 0;
};

/// A stage's strategy: ParallelStrategyMap.
struct stage_strategy {
  int stage = 0;                          ///< the stage of its parallel_strategy_items
  bool stage_known = true;                ///< false: the file has no parallel_strategy_item
  std::vector<strategy_entry> parameters; ///< in file order
  /// The file it was read from (empty: made here), which a layout refused
  /// when it is placed names.
  std::filesystem::path file;
};

/// How a strategy file is written (docs/formats.md has both byte for byte).
enum class layout_form {
  /// As MindSpore's C++ writer: current_stage 1, the device matrix without
  /// its axes of size 1, one empty param_split_shape and indices_offset.
  mindspore,
  /// As the seed tutorial's save_strategy_file: current_stage 0, the device
  /// matrix [repeat,] shard, param_split_shape the full shape, no
  /// indices_offset (protobuf only).
  tutorial,
};

/// Serialises a stage's strategy as MindSpore's ParallelStrategyMap
/// (proto2): current_stage, then per parameter a parallel_strategy_item
/// (node_name, {stage, [shard]}), then per parameter a parallel_layout_item
/// (param_name, {dev_matrix, tensor_map, param_split_shape[, indices_offset],
/// field 0, opt_weight_shard_step 0, opt_weight_shard_size 0}), in `form`.
std::string strategy_to_protobuf(const stage_strategy& s,
                                 layout_form form = layout_form::mindspore);

/// MindSpore's JSON form of the same, as its C++ writer writes it (keys
/// sorted, compact): {"current_stage": 1, "parallel_layout_item": {name:
/// {"dev_matrix", "field", "opt_weight_shard_size", "opt_weight_shard_step",
/// "tensor_map", "tensor_shape"}}, "parallel_strategy_item": {name:
/// {"parallel_strategy": [[...]], "stage"}}}.
std::string strategy_to_json(const stage_strategy& s);

/// Reads either form back (by the file's extension: .json JSON, anything
/// else protobuf), as MindSpore reads it: the stage from the items'
/// ParallelStrategys.stage (all must agree; current_stage is a save counter
/// and ignored), the parameters from the parallel_layout_items (strategy
/// items may name operators), one TensorMap or one per tensor dimension,
/// param_split_shape, indices_offset, field and optimizer sharding as
/// written. Throws bad_input_error naming the file for what does not
/// decode, items of two stages, or a parameter name with '-'.
stage_strategy read_strategy(const std::filesystem::path& path);
/// The same on a file's bytes; `source` names it in messages.
stage_strategy parse_strategy(std::string_view data, const std::filesystem::path& source,
                              bool json);

/// The element types weights come in, by ONNX data type number.
struct dtype_names {
  const char* mindspore;   ///< "Float32", ...
  const char* safetensors; ///< "F32", ...
  std::size_t size;
};

/// Names of ONNX data type `onnx_type` in the two formats; nothing for a
/// type neither can carry.
std::optional<dtype_names> dtype_of(int onnx_type);

/// The ONNX data type of a MindSpore or safetensors dtype name, or nothing.
std::optional<int> onnx_type_of(const std::string& name);

/// One tensor to write: its name, shape, ONNX data type, byte size, and a
/// producer that calls `sink` with its bytes, in order.
struct tensor_source {
  std::string name;
  std::vector<std::int64_t> shape;
  int onnx_type = 0;
  std::uint64_t bytes = 0;
  std::function<void(const std::function<void(const char*, std::size_t)>& sink)> produce;
};

/// Writes `tensors` as a MindSpore checkpoint to `path` (atomically):
/// consecutive Checkpoint.Value messages {tag, tensor {dims, tensor_type,
/// tensor_content}}, a tensor over 512 MiB as several values with the same
/// tag and full dims whose contents concatenate.
void write_checkpoint(const std::filesystem::path& path, const std::vector<tensor_source>& tensors);

/// Writes `tensors` as safetensors to `path` (atomically), header padded to
/// 8 bytes.
void write_safetensors(const std::filesystem::path& path,
                       const std::vector<tensor_source>& tensors);

/// A tensor read from a checkpoint or safetensors file.
struct stored_tensor {
  std::vector<std::int64_t> shape;
  int onnx_type = 0;
  std::string data; ///< row-major, little-endian
};

/// The files whole or sliced weights come in, told by their bytes.
enum class weight_file_kind { safetensors, mindspore_checkpoint };

/// What `bytes` hold: safetensors (an 8-byte little-endian header length,
/// then a JSON object that fits), a MindSpore checkpoint (empty, or a
/// Checkpoint protobuf whose first field is a value), or neither.
std::optional<weight_file_kind> weight_file_kind_of(std::string_view bytes);

/// Every tensor of a safetensors file or a MindSpore checkpoint, whatever
/// its name (weight_file_kind_of), by name. Throws bad_input_error naming
/// the file for what is neither or does not decode.
std::map<std::string, stored_tensor> read_weights(const std::filesystem::path& path);

/// The same for a file's bytes already read (`source` names it in messages).
std::map<std::string, stored_tensor> parse_weights(const std::string& data,
                                                   const std::filesystem::path& source);

} // namespace shardpoint::weights

#endif // SHARDPOINT_ONNX_WEIGHT_FILES_HPP
