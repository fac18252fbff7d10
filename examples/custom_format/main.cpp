// Manual sharding of a graph read from a small text format (model.txt):
// the core needs nothing ONNX-specific, only a Boost graph and a name for
// each vertex; shardpoint::config (no protobuf) reads the points -- the same
// `--shard` flags and shard.yaml files the ONNX command line takes.
//
//   custom_format MODEL.txt [NAME=DEVICE[:STAGE] | shard.yaml] ...
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/property_map/property_map.hpp>

#include <shardpoint/io/config.hpp>
#include <shardpoint/shardpoint.hpp>

namespace {

using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

struct model {
  graph g;
  std::vector<std::string> names;
  std::map<std::string, std::size_t> index;
};

std::size_t vertex_of(model& m, const std::string& name) {
  const auto [it, fresh] = m.index.emplace(name, m.names.size());
  if (fresh) {
    m.names.push_back(name);
    add_vertex(m.g);
  }
  return it->second;
}

// "NAME <- INPUT ..." per line; throws std::runtime_error with the line number.
model read_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(path + ": cannot be opened");
  }
  model m;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string name;
    std::string arrow;
    if (!(words >> name)) {
      continue;
    }
    if (!(words >> arrow) || arrow != "<-") {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": expected 'NAME <- INPUTS'");
    }
    const std::size_t v = vertex_of(m, name);
    for (std::string input; words >> input;) {
      add_edge(vertex_of(m, input), v, m.g);
    }
  }
  return m;
}

} // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : CUSTOM_FORMAT_MODEL;
  try {
    model m = read_model(path);
    std::vector<std::string> specs(argv + std::min(argc, 2), argv + argc);
    if (specs.empty()) {
      specs = {"add1=0:0", "add2=1:1"};
    }
    std::vector<shardpoint::config::entry> entries;
    for (const auto& spec : specs) { // NAME=DEVICE[:STAGE], or a config file
      if (spec.find('=') == std::string::npos) {
        const auto more = shardpoint::config::read_file(spec);
        entries.insert(entries.end(), more.begin(), more.end());
      } else {
        entries.push_back(shardpoint::config::parse_shard_flag(spec));
      }
    }
    const auto points = shardpoint::config::resolve(
        entries, m.names.size(), [&](std::size_t v) -> std::string_view { return m.names[v]; });
    const auto index = get(boost::vertex_index, m.g);
    const auto names = boost::make_iterator_property_map(m.names.begin(), index);
    const shardpoint::sharding_result r =
        shardpoint::manual_shard(shardpoint::indexed(m.g, index, names), points);
    for (std::size_t v = 0; v < r.size(); ++v) {
      std::cout << m.names[v] << ": device " << *r.device(v);
      if (const auto s = r.stage(v)) {
        std::cout << ", stage " << *s;
      }
      std::cout << '\n';
    }
  } catch (const std::exception& e) {
    std::cerr << "custom_format: " << e.what() << '\n';
    return 2;
  }
}
