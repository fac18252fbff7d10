// Protobuf arenas for large models (internal to the adapter).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SRC_ARENA_HPP
#define SHARDPOINT_ONNX_SRC_ARENA_HPP

#include <cstddef>

#include <google/protobuf/arena.h>

namespace shardpoint::onnx {

/// Options for an arena that will hold about `expected_bytes`: its first
/// block no larger than that needs (from 4 KiB to 256 KiB), growing to
/// 16 MiB blocks, each mapped with its pages faulted in by one system call
/// (touching fresh heap pages one by one costs a page fault each, the
/// largest single cost of filling an arena with 10^5 small messages on a
/// virtual machine). Protobuf's defaults stop at 8 KiB blocks.
google::protobuf::ArenaOptions large_arena_options(std::size_t expected_bytes);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SRC_ARENA_HPP
