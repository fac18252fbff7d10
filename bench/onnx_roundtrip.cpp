// The baseline for `shardpoint shard`: a bare protobuf parse and serialise of
// an ONNX model, the least any tool that edits a model through libonnx's
// generated classes must do. No checks, no atomic write.
//
//   onnx_roundtrip IN.onnx OUT.onnx
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <fstream>
#include <iostream>
#include <string>

#include <onnx/onnx_pb.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: onnx_roundtrip IN.onnx OUT.onnx\n";
    return 1;
  }
  ::onnx::ModelProto model;
  {
    std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
    const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
    if (size < 0) {
      std::cerr << "onnx_roundtrip: cannot read " << argv[1] << '\n';
      return 2;
    }
    std::string data(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    if (!in || !model.ParseFromString(data)) {
      std::cerr << "onnx_roundtrip: cannot parse " << argv[1] << '\n';
      return 2;
    }
  }
  std::ofstream out(argv[2], std::ios::binary);
  if (!model.SerializeToOstream(&out)) {
    std::cerr << "onnx_roundtrip: cannot write " << argv[2] << '\n';
    return 2;
  }
  return 0;
}
