// memory on an ONNX model (or from counts alone): app/core/memory.cpp.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

memory_outcome plan_model_memory(const memory_options& a) {
  if (a.model.input.empty() && a.model.data.data() == nullptr) {
    if (a.shapes.given() || !a.plan.batch_dim.empty()) {
      throw usage_error("--input-shape, --dim and --batch-dim need --input-model");
    }
    return plan_memory(nullptr, a.model, a);
  }
  onnx::input_sizes sizes = a.shapes.sizes();
  sizes.batch_dim = a.plan.batch_dim;
  onnx_source source(a.model.input, a.model.data, std::move(sizes));
  memory_options b = a;
  b.report = drawn(a.report, a.model.input);
  return plan_memory(&source, a.model, b);
}

} // namespace shardpoint::app
