// Node views (onnx_adapter/src/node_view.hpp) against protobuf's parse of
// the same nodes: every node of a generated decoder, serialised as protobuf
// writes it, read one after the other on one core -- into views and names
// (decode_node), or into NodeProto objects on an arena, as the wire reader
// parses a skeleton's nodes today. Items are nodes.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/arena.h>

#include <shardpoint/onnx/synth.hpp>

#include "bench_main.hpp"
#include "node_view.hpp"

namespace {

namespace wire = shardpoint::onnx::wire;

// The decoder's nodes (29 a layer), serialised back to back.
struct nodes {
  std::string bytes;
  std::vector<std::string_view> values;

  explicit nodes(int layers) {
    const auto model = shardpoint::onnx::synth_decoder(layers);
    std::vector<std::size_t> ends;
    for (const auto& node : model.graph().node()) {
      bytes += node.SerializeAsString();
      ends.push_back(bytes.size());
    }
    std::size_t at = 0;
    for (const auto end : ends) {
      values.emplace_back(bytes.data() + at, end - at);
      at = end;
    }
  }
};

const nodes& decoder(int layers) {
  static std::vector<std::pair<int, nodes>> made;
  for (const auto& [n, d] : made) {
    if (n == layers) {
      return d;
    }
  }
  return made.emplace_back(layers, nodes(layers)).second;
}

void views(benchmark::State& state) {
  const auto& d = decoder(static_cast<int>(state.range(0)));
  std::vector<wire::node_view> out(d.values.size());
  std::vector<std::string_view> names;
  wire::node_sharding sharding;
  for (auto _ : state) {
    names.clear();
    names.reserve(3 * d.values.size());
    for (std::size_t i = 0; i < d.values.size(); ++i) {
      if (!wire::decode_node(d.values[i], out[i], names, sharding)) {
        state.SkipWithError("a generated node is not plain");
        return;
      }
    }
    benchmark::DoNotOptimize(names.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(d.values.size()));
}

void protobuf_parse(benchmark::State& state) {
  const auto& d = decoder(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    google::protobuf::Arena arena;
    for (const auto value : d.values) {
      auto* node = google::protobuf::Arena::CreateMessage<::onnx::NodeProto>(&arena);
      if (!node->ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        state.SkipWithError("protobuf refused a generated node");
        return;
      }
    }
    benchmark::DoNotOptimize(arena.SpaceUsed());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(d.values.size()));
}

// 29 nodes a layer: ~10^4, ~10^5 and ~10^6 nodes.
BENCHMARK(views)->Arg(345)->Arg(3450)->Arg(34500)->Unit(benchmark::kMillisecond);
BENCHMARK(protobuf_parse)->Arg(345)->Arg(3450)->Arg(34500)->Unit(benchmark::kMillisecond);

} // namespace

SHARDPOINT_BENCHMARK_MAIN();
