// suggest on an ONNX model: app/core/suggest.cpp on an onnx_source.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

suggest_outcome suggest_split(const suggest_options& a) {
  onnx::input_sizes sizes = a.shapes.sizes();
  sizes.batch_dim = a.plan.batch_dim;
  onnx_source source(a.input, a.data, std::move(sizes));
  suggest_options b = a;
  b.report = drawn(a.report, a.input);
  return suggest(source, b);
}

} // namespace shardpoint::app
