// plan on an ONNX model (or on a transformer's counts): app/core/plan.cpp.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

plan_outcome plan_model(const plan_options& a) {
  if (a.input.empty() && a.data.data() == nullptr) {
    if (a.shapes.given() || !a.batch_dim.empty()) {
      throw usage_error("--input-shape, --dim and --batch-dim need --input-model");
    }
    return plan_layouts(nullptr, a);
  }
  onnx::input_sizes sizes = a.shapes.sizes();
  sizes.batch_dim = a.batch_dim;
  onnx_source source(a.input, a.data, std::move(sizes));
  plan_options b = a;
  b.report = drawn(a.report, a.input);
  return plan_layouts(&source, b);
}

} // namespace shardpoint::app
