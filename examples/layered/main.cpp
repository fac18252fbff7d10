// Manual sharding of a generated transformer-like graph: N layers, each an
// attention block and an MLP block with residual additions, cut into devices
// and pipeline stages at layer boundaries, then validated.
//
//   layered [LAYERS] [STAGES]      (defaults: 48 layers, 4 stages)
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <range/v3/range/operations.hpp>

#include <shardpoint/shardpoint.hpp>

namespace {

using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using vertex = graph::vertex_descriptor;

/// Appends one decoder layer reading `x`; returns its output vertex.
vertex add_layer(graph& g, vertex x) {
  const auto op = [&g] { return add_vertex(g); };
  const auto edge = [&g](vertex u, vertex v) { add_edge(u, v, g); };
  // attention: norm -> q, k, v -> scores -> softmax -> context -> proj -> add
  const vertex norm1 = op(), q = op(), k = op(), v = op(), scores = op(), softmax = op(),
               context = op(), proj = op(), add1 = op();
  edge(x, norm1);
  for (vertex p : {q, k, v}) {
    edge(norm1, p);
  }
  edge(q, scores);
  edge(k, scores);
  edge(scores, softmax);
  edge(softmax, context);
  edge(v, context);
  edge(context, proj);
  edge(proj, add1);
  edge(x, add1); // residual
  // mlp: norm -> up -> gelu -> down -> add
  const vertex norm2 = op(), up = op(), gelu = op(), down = op(), add2 = op();
  edge(add1, norm2);
  edge(norm2, up);
  edge(up, gelu);
  edge(gelu, down);
  edge(down, add2);
  edge(add1, add2); // residual
  return add2;
}

int parse(const char* text, int fallback) {
  if (text == nullptr) {
    return fallback;
  }
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > 1'000'000) {
    std::cerr << "layered: '" << text << "' is not a count between 1 and 1000000\n";
    std::exit(1);
  }
  return static_cast<int>(value);
}

} // namespace

int main(int argc, char** argv) {
  const int layers = parse(argc > 1 ? argv[1] : nullptr, 48);
  const int stages = parse(argc > 2 ? argv[2] : nullptr, 4);
  if (stages > layers) {
    std::cerr << "layered: cannot cut " << layers << " layers into " << stages << " stages\n";
    return 1;
  }

  graph g;
  vertex x = add_vertex(g); // the embedding
  std::vector<vertex> layer_out;
  for (int l = 0; l < layers; ++l) {
    x = add_layer(g, x);
    layer_out.push_back(x);
  }
  const vertex head = add_vertex(g);
  add_edge(x, head, g);

  // One sharding point at the end of every (layers / stages)-th layer but
  // the last group, which the default group (largest + 1) takes.
  std::vector<shardpoint::sharding_point<vertex>> points;
  for (int s = 0; s + 1 < stages; ++s) {
    const auto last = static_cast<std::size_t>((s + 1) * layers / stages - 1);
    points.push_back({layer_out[last], s, s});
  }
  const shardpoint::sharding_result r = shardpoint::manual_shard(g, points);

  std::cout << "graph: " << num_vertices(g) << " vertices, " << num_edges(g) << " edges, " << layers
            << " layers, " << points.size() << " sharding points\n";
  for (int s = 0; s < r.num_stages(); ++s) {
    auto members = r.vertices_in_stage(s);
    std::cout << "  stage " << s << ": " << ranges::distance(members) << " vertices on device "
              << *r.device(ranges::front(members)) << '\n';
  }
  const auto problems = shardpoint::validate(
      g, r, {.num_devices = stages, .enable_pipelining = true, .batches_per_step = 4 * stages});
  for (const auto& d : problems) {
    std::cout << to_string(d.severity) << " [" << to_string(d.rule) << "] " << d.message << '\n';
  }
  std::cout << (shardpoint::has_errors(problems) ? "invalid" : "valid") << " for " << r.num_stages()
            << " pipeline stages on " << stages << " devices\n";
  return shardpoint::has_errors(problems) ? 3 : 0;
}
