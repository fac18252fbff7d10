// shardpoint/onnx/adapter.hpp -- the ONNX adapter, all of it.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Read a model (model.hpp), look at its top-level nodes as a Boost.Graph and
// shard it (graph.hpp), report on it (report.hpp), price its nodes
// (costs.hpp), generate models (synth.hpp).
#ifndef SHARDPOINT_ONNX_ADAPTER_HPP
#define SHARDPOINT_ONNX_ADAPTER_HPP

#include "costs.hpp"
#include "graph.hpp"
#include "memory.hpp"
#include "model.hpp"
#include "rank_weights.hpp"
#include "report.hpp"
#include "split.hpp"
#include "synth.hpp"
#include "tensor_data.hpp"
#include "weight_files.hpp"
#include "weights.hpp"

#endif // SHARDPOINT_ONNX_ADAPTER_HPP
