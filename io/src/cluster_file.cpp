// A cluster file for `shardpoint plan` (cluster_file.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <yaml-cpp/yaml.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/cluster_file.hpp>
#include <shardpoint/io/inputs.hpp>
#include <shardpoint/io/units.hpp>

#include "yaml_support.hpp"

namespace shardpoint::io {

namespace {

constexpr std::array<const char*, 6> keys{
    "devices",      "devices_per_node",     "device_memory",
    "device_flops", "intra_node_bandwidth", "inter_node_bandwidth"};

std::string at(const std::string& file, const YAML::Node& n) {
  const auto m = n.Mark();
  return m.line < 0 ? file
                    : file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// `text` without `suffix` at its end (case-insensitive), and whether it had it.
bool strip(std::string_view& text, std::string_view suffix) {
  if (text.size() < suffix.size()) {
    return false;
  }
  const auto tail = text.substr(text.size() - suffix.size());
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(tail[i])) !=
        std::tolower(static_cast<unsigned char>(suffix[i]))) {
      return false;
    }
  }
  text.remove_suffix(suffix.size());
  while (!text.empty() && text.back() == ' ') {
    text.remove_suffix(1);
  }
  return true;
}

} // namespace

cluster_entries parse_cluster(std::string_view text, const std::string& file) {
  const YAML::Node root = detail::load_yaml(text, file);
  if (!root.IsMap()) {
    throw bad_input_error(file + ": a cluster file maps devices, devices_per_node, device_memory, "
                                 "device_flops, intra_node_bandwidth and inter_node_bandwidth to "
                                 "values");
  }
  cluster_entries out;
  for (const auto& kv : root) {
    const auto where = at(file, kv.first);
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    bool known = false;
    for (const char* k : keys) {
      known = known || key == k;
    }
    if (!known) {
      throw bad_input_error(where + ": '" + key.substr(0, 64) +
                            "' is not a cluster key (devices, devices_per_node, device_memory, "
                            "device_flops, intra_node_bandwidth, inter_node_bandwidth)");
    }
    if (!kv.second.IsScalar()) {
      // The flag's own spelling (a trial was pointed to --device_memory).
      std::string flag = "--" + key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      throw bad_input_error(at(file, kv.second) + ": " + key + " takes one value, as the flag " +
                            flag +
                            " does (not a list, a "
                            "mapping or nothing)");
    }
    if (!out.values.emplace(key, std::pair{kv.second.Scalar(), at(file, kv.second)}).second) {
      throw bad_input_error(where + ": " + key + " given twice");
    }
  }
  return out;
}

cluster_entries read_cluster_file(const std::filesystem::path& path) {
  return parse_cluster(read_text_file(path, "cluster"), path.string());
}

std::optional<double> parse_bandwidth(std::string_view text) {
  strip(text, "/s");
  const auto b = parse_bytes(text);
  return b && *b >= 1 ? b : std::nullopt;
}

std::optional<double> parse_flops(std::string_view text) {
  while (!text.empty() && text.front() == ' ') {
    text.remove_prefix(1);
  }
  if (!strip(text, "flop/s")) {
    strip(text, "flops");
  }
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    case 'P':
      scale = 1e15;
      break;
    default:
      break;
    }
    if (scale != 1) {
      text.remove_suffix(1);
    }
  }
  while (!text.empty() && text.back() == ' ') {
    text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value * scale) ||
      !(value * scale >= 1)) {
    return std::nullopt;
  }
  return value * scale;
}

} // namespace shardpoint::io
