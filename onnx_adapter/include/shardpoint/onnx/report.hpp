// shardpoint/onnx/report.hpp -- the report of a sharded ONNX model: groups
// with their parameter bytes, tensors crossing boundaries with their sizes
// from ONNX shape inference, validation. Rendering is io/report.hpp's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_REPORT_HPP
#define SHARDPOINT_ONNX_REPORT_HPP

#include <functional>
#include <vector>

#include <onnx/onnx_pb.h>

#include <shardpoint/io/report.hpp>

#include "costs.hpp"
#include "graph.hpp"

namespace shardpoint::onnx {

using io::crossing_tensor;
using io::group_report;
using report = io::sharding_report;
using io::to_json;
using io::to_table;

/// Per device and stage: node counts and parameter bytes (every weight a
/// group reads or holds, costs.hpp's node_weights::parameter_bytes; one read
/// by two groups counts in both); the tensors crossing stage boundaries,
/// with byte sizes where ONNX shape inference knows them -- with the inputs
/// sized as `sizes` says, when given (--input-shape, --dim; refused as
/// estimate_costs refuses them). Shape inference runs on `model` itself,
/// which is returned exactly as it was (also when an exception leaves).
///
/// `also`, when given, is other work that only reads `model` (writing the
/// sharded model, say): run beside the report's shape inference where that
/// leaves the model untouched and no sizes are given, else after the report
/// is made. Its error is thrown as the report's would be.
report make_report(::onnx::ModelProto& model, const node_graph& nodes,
                   const sharding_result& result, std::vector<diagnostic> diagnostics,
                   const input_sizes* sizes = nullptr, const std::function<void()>& also = {});
/// The same of a loaded model: on its views, parsing no node, where
/// measure_nodes(loaded_model&, ...) would (costs.hpp); on proto()
/// otherwise. The same report either way.
report make_report(loaded_model& model, const node_graph& nodes, const sharding_result& result,
                   std::vector<diagnostic> diagnostics, const input_sizes* sizes = nullptr,
                   const std::function<void()>& also = {});

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_REPORT_HPP
