// draw on an ONNX model: app/core/draw.cpp on an onnx_source, every node
// laid out by Graphviz.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

draw_outcome draw_model(const draw_options& a) {
  onnx::input_sizes sizes = a.shapes.sizes();
  sizes.batch_dim = a.plan.batch_dim;
  onnx_source source(a.model.input, a.model.data, std::move(sizes));
  draw_options b = a;
  b.report = drawn(a.report, a.model.input);
  return draw(source, b.model, b);
}

} // namespace shardpoint::app
