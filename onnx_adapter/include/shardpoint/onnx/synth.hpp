// shardpoint/onnx/synth.hpp -- synthetic ONNX models for tests, demos and
// benchmarks.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SYNTH_HPP
#define SHARDPOINT_ONNX_SYNTH_HPP

#include <onnx/onnx_pb.h>

namespace shardpoint::onnx {

/// ResNet-50 v1 with the node names, op types and topology of the model zoo's
/// resnet50-v1-7.onnx (175 nodes); weights are a deterministic pattern.
::onnx::ModelProto synth_resnet50();

/// A transformer-decoder-like model of `layers` layers, 29 nodes each
/// (decomposed LayerNorm, single-head attention, MLP, two residual adds),
/// with hidden size `hidden` and sequence length `sequence`; weights are a
/// deterministic pattern. Node names are `layer<L>/<op>`.
::onnx::ModelProto synth_decoder(int layers, int hidden = 8, int sequence = 16);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SYNTH_HPP
