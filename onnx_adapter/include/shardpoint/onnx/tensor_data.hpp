// shardpoint/onnx/tensor_data.hpp -- the bytes of an initializer, whatever
// ONNX stores them in: raw_data, typed fields, or an external data file.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_TENSOR_DATA_HPP
#define SHARDPOINT_ONNX_TENSOR_DATA_HPP

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace shardpoint::io {
class output_set;
} // namespace shardpoint::io

namespace shardpoint::onnx {

class loaded_model;

/// Bytes per element of an ONNX tensor type; nothing for STRING and types
/// without a fixed size.
std::optional<std::size_t> element_bytes(int data_type);

/// The element count (the product of the dims; 1 for a scalar).
std::uint64_t element_count(const ::onnx::TensorProto& t);

/// Whether the tensor's data lives in an external file.
bool is_external(const ::onnx::TensorProto& t);

/// The external-data locations of every tensor of `graph`, its subgraphs'
/// included (initializers, Constant values, sparse tensors' values and
/// indices), each once, as written.
std::vector<std::string> external_locations(const ::onnx::GraphProto& graph);
/// The same of a loaded model's graph (model.hpp), without parsing nodes
/// read as views: the locations proto()'s graph would give.
std::vector<std::string> external_locations(const loaded_model& model);

/// Declares the model `model_path` and each external data file its `graph`
/// names as inputs of `outputs`, which then refuses to write over them or
/// into a folder holding them, naming the model and the file.
void declare_model_inputs(io::output_set& outputs, const std::filesystem::path& model_path,
                          const ::onnx::GraphProto& graph);
void declare_model_inputs(io::output_set& outputs, const std::filesystem::path& model_path,
                          const loaded_model& model);

/// Refuses (bad_input_error naming the tensor) an external-data location of
/// `graph` that is absolute, holds '..' or leaves `model_dir` through a
/// symbolic link, as the ONNX checker does; opens nothing
/// (io::check_external_location).
void check_external_locations(const ::onnx::GraphProto& graph,
                              const std::filesystem::path& model_dir);
void check_external_locations(const loaded_model& model, const std::filesystem::path& model_dir);

/// Calls `sink(data, size)` with the tensor's data as raw little-endian
/// bytes, row-major, in order, in chunks of at most 1 MiB: from raw_data,
/// from the typed field (narrowed to the element size), or streamed from the
/// external file (its location in `base_dir`, confined there as
/// io::external_data_file says, at offset, for length) without loading it
/// whole. Throws input_error naming the tensor for a STRING tensor, a size
/// that does not match its dims, or an external file that is missing, too
/// short, or outside the model's folder.
void for_each_chunk(const ::onnx::TensorProto& t, const std::filesystem::path& base_dir,
                    const std::function<void(const char* data, std::size_t size)>& sink);

/// All of it in one string (for tensors that fit in memory).
std::string raw_bytes(const ::onnx::TensorProto& t, const std::filesystem::path& base_dir);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_TENSOR_DATA_HPP
