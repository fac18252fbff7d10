// simulate on an ONNX model: app/core/simulate.cpp on an onnx_source (or,
// without a model, on plain stage times).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>
#include <shardpoint/app/onnx_source.hpp>

namespace shardpoint::app {

simulate_outcome simulate_model(const simulate_options& a) {
  if (a.model.input.empty() && a.model.data.data() == nullptr) {
    if (a.stage_times.empty()) {
      throw usage_error("--input-model is required (or --stage-times with --schedule)");
    }
    if (a.shapes.given() || !a.model.config.empty() || !a.model.shard_flags.empty() ||
        !a.batch_dim.empty()) {
      throw usage_error("--input-shape, --dim, --batch-dim, --manual-sharding-config and --shard "
                        "need --input-model");
    }
    return simulate_times(a);
  }
  if (a.schedule.empty() && !a.batch_dim.empty()) {
    throw usage_error("--batch-dim sizes a training step's activations: give --schedule");
  }
  onnx::input_sizes sizes = a.shapes.sizes();
  sizes.batch_dim = a.batch_dim;
  onnx_source source(a.model.input, a.model.data, std::move(sizes));
  simulate_options b = a;
  b.report = drawn(a.report, a.model.input);
  return simulate(source, a.model, b);
}

} // namespace shardpoint::app
