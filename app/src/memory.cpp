// memory on an ONNX model (or from counts alone): app/core/memory.cpp.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

memory_outcome plan_model_memory(const memory_options& a) {
  if (a.model.input.empty() && a.model.data.data() == nullptr) {
    if (a.shapes.given()) {
      throw usage_error("--input-shape and --dim need --input-model");
    }
    return plan_memory(nullptr, a.model, a);
  }
  onnx_source source(a.model.input, a.model.data, a.shapes.sizes());
  return plan_memory(&source, a.model, a);
}

} // namespace shardpoint::app
