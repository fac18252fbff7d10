// strip: remove the sharding attributes from a model (ONNX Runtime's Gemm +
// activation fusion rejects models that carry them).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>

namespace shardpoint::app {

std::size_t strip_model(const strip_options& a) {
  io::output_set outputs;
  protect_inputs(outputs, a.input, nullptr);
  const auto& output = outputs.file(a.output, "--output-model");
  auto file = load_model(a.input, {}, reading::graph);
  protect_inputs(outputs, a.input, &file);
  const std::size_t removed = onnx::strip_annotations(*file.proto().mutable_graph());
  onnx::save_model(file, output.staging());
  outputs.commit();
  return removed;
}
} // namespace shardpoint::app
