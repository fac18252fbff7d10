// synth: generate a synthetic model (the seed example's ResNet-50, or a
// decoder of any size).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/app/commands.hpp>

namespace shardpoint::app {

void synth_model(const synth_options& a) {
  io::output_set outputs;
  const auto& output = outputs.file(a.output, "the output model");
  onnx::save_model(a.what == "resnet50" ? onnx::synth_resnet50()
                                        : onnx::synth_decoder(a.layers, a.hidden, a.sequence),
                   output.staging());
  outputs.commit();
}

} // namespace shardpoint::app
