// A graph format that is not ONNX, planned by shardpoint's application:
// `suggest`, `simulate` (forward passes, or a training step), `memory` and
// `plan` run on it through app/plans.hpp, with
// points read by shardpoint::config -- the same `--shard` flags and
// shard.yaml files the ONNX command line takes -- and no ONNX code at all.
// Adding a format is this one file: a model_source (app/model_source.hpp).
//
//   custom_format [MODEL.txt] [NAME=DEVICE[:STAGE] | shard.yaml] ...
//   custom_format [MODEL.txt] suggest STAGES
//   custom_format [MODEL.txt] simulate NAME=DEVICE:STAGE ...
//   custom_format [MODEL.txt] train NAME=DEVICE:STAGE ...   (1F1B)
//   custom_format [MODEL.txt] memory [NAME=DEVICE:STAGE ...]
//   custom_format [MODEL.txt] plan                          (on 4 devices)
//
// The first form prints each node's device and stage. The format (see
// model.txt): `NAME <- INPUT ... [| flops=N out=BYTES weight=NAME:ELEMENTS]`.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <shardpoint/app/plans.hpp>

namespace {

namespace app = shardpoint::app;

/// A model in the text format: nodes by first mention, edges, figures.
struct text_model {
  std::vector<std::string> names;
  std::map<std::string, std::size_t> index;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::vector<std::int64_t> flops;
  std::vector<std::int64_t> out_bytes;         ///< per sample
  std::vector<std::vector<std::size_t>> reads; ///< weights each node reads
  std::vector<std::string> weight_names;
  std::vector<std::int64_t> weight_elements;
};

std::size_t node_of(text_model& m, const std::string& name) {
  const auto [it, fresh] = m.index.emplace(name, m.names.size());
  if (fresh) {
    m.names.push_back(name);
    m.flops.push_back(1);
    m.out_bytes.push_back(0);
    m.reads.emplace_back();
  }
  return it->second;
}

std::int64_t number(const std::string& where, const std::string& text) {
  std::size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !(value >= 0 && value < 9e18)) {
    throw shardpoint::bad_input_error(where + ": '" + text + "' is not a count");
  }
  return static_cast<std::int64_t>(value);
}

// One `key=value` of a line's figures.
void read_figure(text_model& m, std::size_t v, const std::string& where, const std::string& word) {
  const auto eq = word.find('=');
  const std::string key = word.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
  if (key == "flops") {
    m.flops[v] = number(where, value);
  } else if (key == "out") {
    m.out_bytes[v] = number(where, value);
  } else if (key == "weight" && value.find(':') != std::string::npos) {
    const std::string name = value.substr(0, value.find(':'));
    const auto elements = number(where, value.substr(value.find(':') + 1));
    const auto at = std::find(m.weight_names.begin(), m.weight_names.end(), name);
    const auto w = static_cast<std::size_t>(at - m.weight_names.begin());
    if (at == m.weight_names.end()) {
      m.weight_names.push_back(name);
      m.weight_elements.push_back(elements);
    } else if (m.weight_elements[w] != elements) {
      throw shardpoint::bad_input_error(where + ": weight '" + name + "' has two sizes");
    }
    m.reads[v].push_back(w);
  } else {
    throw shardpoint::bad_input_error(where +
                                      ": expected flops=N, out=BYTES or "
                                      "weight=NAME:ELEMENTS, not '" +
                                      word + "'");
  }
}

text_model read_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw shardpoint::bad_input_error(path + ": cannot be opened");
  }
  text_model m;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    line = line.substr(0, line.find('#'));
    const auto bar = line.find('|');
    std::istringstream words(line.substr(0, bar));
    std::string name;
    std::string arrow;
    if (!(words >> name)) {
      continue;
    }
    if (!(words >> arrow) || arrow != "<-") {
      throw shardpoint::bad_input_error(where + ": expected 'NAME <- INPUTS'");
    }
    const std::size_t v = node_of(m, name);
    for (std::string input; words >> input;) {
      m.edges.emplace_back(node_of(m, input), v);
    }
    std::istringstream figures(bar == std::string::npos ? "" : line.substr(bar + 1));
    for (std::string word; figures >> word;) {
      read_figure(m, v, where, word);
    }
  }
  return m;
}

/// The text format as a model_source: everything the planning commands
/// need, from the figures each line gives.
class text_source final : public app::model_source {
public:
  explicit text_source(std::string path) : path_(std::move(path)) {}

  void declare_inputs(shardpoint::io::output_set& outputs) const override {
    outputs.input(path_, "the input model");
  }
  void load(shardpoint::io::output_set& /*outputs*/) override {
    m_ = read_model(path_);
    graph_ = graph_type(boost::edges_are_unsorted_multi_pass, m_.edges.begin(), m_.edges.end(),
                        m_.names.size());
  }
  const graph_type& graph() override { return graph_; }
  std::vector<std::string> names() override { return m_.names; }

  app::node_measures measure(app::cost_model how) override {
    const std::size_t n = m_.names.size();
    app::node_measures out;
    out.parameters.bytes.assign(m_.weight_elements.size(), 0);
    for (std::size_t w = 0; w < m_.weight_elements.size(); ++w) {
      out.parameters.bytes[w] = 4 * static_cast<double>(m_.weight_elements[w]); // fp32
    }
    out.parameters.used.resize(n);
    std::vector<bool> read(n, false); // outputs another node reads
    for (const auto& [from, to] : m_.edges) {
      read[from] = true;
    }
    for (std::size_t v = 0; v < n; ++v) {
      std::int64_t bytes = 0;
      for (auto w : m_.reads[v]) {
        bytes += 4 * m_.weight_elements[w];
        out.parameters.used[v].push_back(static_cast<std::uint32_t>(w));
      }
      out.parameter_bytes.push_back(bytes);
      out.output_bytes.push_back(read[v] ? m_.out_bytes[v] : 0);
      out.cost.push_back(how == app::cost_model::unit     ? 1
                         : how == app::cost_model::params ? std::max<std::int64_t>(bytes, 1)
                                                          : m_.flops[v]);
    }
    return out;
  }

  // Every weight split evenly over the tensor-parallel ranks when its size
  // divides, else whole on each (this format has no layouts).
  shardpoint::parameter_uses
  parameters(const shardpoint::sharding_result& /*stages*/, std::int64_t tensor_parallel,
             const std::vector<shardpoint::io::layout_choice>* layout) override {
    if (layout != nullptr) {
      throw shardpoint::unsupported_error("this format has no layouts: drop --layout");
    }
    shardpoint::parameter_uses uses;
    for (auto elements : m_.weight_elements) {
      const bool splits = tensor_parallel > 1 && elements % tensor_parallel == 0;
      uses.tensors.push_back({elements, splits ? tensor_parallel : 1, 4, true});
    }
    for (const auto& reads : m_.reads) {
      uses.used.emplace_back(reads.begin(), reads.end());
    }
    return uses;
  }

  std::vector<std::int64_t> activations(std::int64_t micro_batch_size,
                                        std::vector<std::string>& /*notes*/,
                                        std::vector<std::string>& /*estimates*/) override {
    std::vector<std::int64_t> out;
    for (auto bytes : m_.out_bytes) {
      out.push_back(bytes * micro_batch_size);
    }
    return out;
  }

private:
  std::string path_;
  text_model m_;
  graph_type graph_;
};

// NAME=DEVICE[:STAGE] flags and shard.yaml files, as the command line's.
app::points points_of(const std::vector<std::string>& words) {
  app::points p;
  for (const auto& word : words) {
    if (word.find('=') == std::string::npos) {
      p.config = word;
    } else {
      p.shard_flags.push_back(word);
    }
  }
  return p;
}

int run(const std::string& path, const std::vector<std::string>& words) {
  text_source source(path);
  const std::string command = words.empty() ? "" : words.front();
  const std::vector<std::string> rest(words.begin() + (words.empty() ? 0 : 1), words.end());
  if (command == "suggest") {
    app::suggest_request a;
    a.stages = rest.empty() ? 2 : std::stoi(rest.front());
    const auto r = app::suggest(source, a);
    std::cout << r.report;
    return r.diagnostics.empty() ? 0 : 3;
  }
  if (command == "simulate") {
    app::simulate_request a;
    a.batches_per_step = 12; // a multiple of 1, 2, 3, 4 and 6 stages
    a.cost = "flops";
    std::cout << app::simulate(source, points_of(rest), a).report;
    return 0;
  }
  if (command == "train") { // a training step through the 1F1B schedule
    app::simulate_request a;
    a.batches_per_step = 8;
    a.cost = "flops";
    a.schedule = "1f1b";
    std::cout << app::simulate(source, points_of(rest), a).report;
    return 0;
  }
  if (command == "plan") { // the best training layout on four devices
    app::plan_request a;
    a.devices = 4;
    a.device_memory = "1GiB";
    a.device_flops = "1T";
    a.intra_node_bandwidth = "10GB/s";
    a.global_batch = 8;
    a.top_k = "3";
    const auto r = app::plan_layouts(&source, a);
    std::cout << r.report;
    return r.fits ? 0 : 3;
  }
  if (command == "memory") {
    app::memory_request a;
    const auto r = app::plan_memory(&source, points_of(rest), a);
    std::cout << r.report;
    return r.shortfall.empty() ? 0 : 3;
  }
  // Manual sharding: each node's device and stage.
  shardpoint::io::output_set none;
  source.load(none);
  const auto names = source.names();
  const auto r = app::sharding_of(source, points_of(words));
  for (std::size_t v = 0; v < r.size(); ++v) {
    std::cout << names[v] << ": device " << *r.device(v);
    if (const auto s = r.stage(v)) {
      std::cout << ", stage " << *s;
    }
    std::cout << '\n';
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string path = CUSTOM_FORMAT_MODEL;
  std::vector<std::string> words(argv + std::min(argc, 1), argv + argc);
  if (!words.empty() && words.front().ends_with(".txt")) {
    path = words.front();
    words.erase(words.begin());
  }
  try {
    if (words.empty()) { // the example's own run: all three commands
      for (const auto& command :
           std::vector<std::vector<std::string>>{{"add1=0:0", "add2=1:1"},
                                                 {"suggest", "2"},
                                                 {"simulate", "add1=0:0", "add2=1:1"},
                                                 {"train", "add1=0:0", "add2=1:1"},
                                                 {"memory", "add1=0:0", "add2=1:1"},
                                                 {"plan"}}) {
        if (const int code = run(path, command); code != 0) {
          return code;
        }
      }
      return 0;
    }
    return run(path, words);
  } catch (const app::usage_error& e) { // the command line's exit codes
    std::cerr << "custom_format: usage: " << app::message_of(e) << '\n';
    return 1;
  } catch (const app::check_failed& e) { // before bad_input_error, its base
    std::cerr << "custom_format: " << app::message_of(e) << '\n';
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "custom_format: " << app::message_of(e) << '\n';
    return 2;
  }
}
