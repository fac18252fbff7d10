// shardpoint/onnx/split.hpp -- one runnable ONNX model per stage, with the
// tensors that cross a boundary as its inputs and outputs.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Stage s holds its nodes in their original order (attributes kept, the two
// sharding attributes removed unless asked), exactly the initializers they
// read (a weight read by two stages is in both), the graph inputs they read,
// an input for every tensor an earlier stage produces and it reads (reads
// from inside If/Loop/Scan bodies count), and an output for every tensor it
// produces that a later stage or the whole model needs. A tensor produced in
// stage a and read in stage c > a + 1 is an output of a and an input of c, or
// with `relay` passes through every stage between. Opset imports, IR
// version, metadata and functions are kept; inputs and outputs are typed from
// the model and ONNX shape inference.
#ifndef SHARDPOINT_ONNX_SPLIT_HPP
#define SHARDPOINT_ONNX_SPLIT_HPP

#include <filesystem>

#include <onnx/onnx_pb.h>

#include <shardpoint/io/outputs.hpp>
#include <shardpoint/io/split_plan.hpp>

#include "graph.hpp"
#include "model.hpp"

namespace shardpoint::onnx {

struct split_options {
  /// Group nodes by __ipu_number instead of __pipeline_stage.
  bool by_device = false;
  /// Pass a tensor through every stage between its producer and a consumer.
  bool relay = false;
  /// Keep __ipu_number / __pipeline_stage on the stages' nodes.
  bool keep_sharding_attributes = false;
  /// Give each stage a data file of its own with only its weights
  /// (stage_<s>.onnx.data), those of 1024 bytes or more; otherwise weights stay where they are:
  /// inside the stage file, or in the original external data files, which are not opened:
  /// hard-linked into the output folder under the same relative name (ONNX Runtime refuses data
  /// paths outside a model's folder; under external_data/ when the split has a file of that name),
  /// or, across file systems, copied there.
  bool external_data = false;
};

/// What every stage holds and passes on. Throws invalid_sharding_error for a
/// node without a stage (or device), an empty stage, a stage on two devices,
/// or data flowing to an earlier stage.
io::split_plan plan_split(const ::onnx::GraphProto& graph, const node_graph& nodes,
                          const sharding_result& result, const split_options& options);
/// The same of a loaded model: on its views where its nodes are views and
/// its initializers parsed (node_reading::views_with_initializers), parsing
/// no node; on proto() otherwise. The same plan either way.
io::split_plan plan_split(const loaded_model& model, const node_graph& nodes,
                          const sharding_result& result, const split_options& options);

/// Writes stage_<s>.onnx for every stage of `plan` and pipeline.json into
/// `folder`, an output folder of the command's io::output_set (committed
/// with it, all or nothing). `model_path` locates external data, which must
/// lie in the model's folder (io::external_data_file). The model is
/// returned as it was. Returns the data files written (with
/// external_data: one a stage that has a tensor of 1024 bytes or more;
/// smaller ones stay in the stage's file, as onnx's own
/// convert_model_to_external_data keeps them, since onnx's shape inference
/// cannot read the shape constants from external data).
std::size_t write_split(::onnx::ModelProto& model, const node_graph& nodes,
                        const io::split_plan& plan, io::staged_folder& folder,
                        const std::filesystem::path& model_path, const split_options& options);
/// The same on a model read by any of model.hpp's readers: a skeleton's
/// stages get their initializers as byte ranges of its input, copied
/// verbatim (with --external-data, read one tensor at a time); where its
/// nodes are views whose shapes can be found on them (read with
/// node_reading::views_with_initializers, no subgraph), their nodes too,
/// none parsed. The same bytes either way.
std::size_t write_split(loaded_model& model, const node_graph& nodes, const io::split_plan& plan,
                        io::staged_folder& folder, const std::filesystem::path& model_path,
                        const split_options& options);

/// Both in one call: `folder` an output of its own io::output_set, with the
/// model and its external data files as the inputs it may not touch;
/// `replace` is --force (a non-empty folder shardpoint wrote).
void write_split(::onnx::ModelProto& model, const node_graph& nodes, const io::split_plan& plan,
                 const std::filesystem::path& folder, const std::filesystem::path& model_path,
                 const split_options& options, bool replace = false);
void write_split(loaded_model& model, const node_graph& nodes, const io::split_plan& plan,
                 const std::filesystem::path& folder, const std::filesystem::path& model_path,
                 const split_options& options, bool replace = false);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SPLIT_HPP
