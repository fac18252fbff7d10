// simulate on an ONNX model: app/core/simulate.cpp on an onnx_source.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

simulate_outcome simulate_model(const simulate_options& a) {
  onnx_source source(a.model.input, a.model.data, a.shapes.sizes());
  return simulate(source, a.model, a);
}

} // namespace shardpoint::app
