// Sharding configs: shard.yaml lists, sharding_info / pipelining_info
// mappings (YAML or JSON), and --shard flags.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cctype>
#include <climits>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <shardpoint/onnx/adapter.hpp>

namespace shardpoint::onnx {
namespace fs = std::filesystem;

namespace {

// A device or stage: decimal digits only, below INT_MAX (the default group
// is largest + 1).
std::optional<int> parse_value(const std::string& text) {
  if (text.empty() || text.size() > 10 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  const long long value = std::stoll(text);
  if (value >= INT_MAX) {
    return std::nullopt;
  }
  return static_cast<int>(value);
}

int value_or_throw(const std::string& text, const char* what, const std::string& where) {
  if (const auto v = parse_value(text)) {
    return *v;
  }
  throw input_error(where + ": " + what + " '" + text +
                    "' is not a non-negative integer below 2147483647");
}

// ---- YAML ------------------------------------------------------------------

std::string at(const fs::path& path, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) {
    return path.string();
  }
  return path.string() + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string scalar(const fs::path& path, const YAML::Node& node, const char* what) {
  if (!node.IsScalar()) {
    throw input_error(at(path, node) + ": " + what + " must be a single value");
  }
  return node.Scalar();
}

std::vector<config_entry> yaml_list(const fs::path& path, const YAML::Node& root) {
  std::vector<config_entry> out;
  for (std::size_t k = 0; k < root.size(); ++k) {
    const YAML::Node item = root[k];
    const std::string where = at(path, item);
    if (!item.IsMap()) {
      throw input_error(where + ": entry " + std::to_string(k + 1) +
                        " must be a mapping with 'node', 'device' and/or 'stage'");
    }
    config_entry e;
    e.where = where;
    bool has_node = false;
    for (const auto& kv : item) {
      const std::string key = scalar(path, kv.first, "a key");
      if (key == "node") {
        e.node = scalar(path, kv.second, "'node'");
        has_node = true;
      } else if (key == "device") {
        e.device =
            value_or_throw(scalar(path, kv.second, "'device'"), "device", at(path, kv.second));
      } else if (key == "stage") {
        e.stage = value_or_throw(scalar(path, kv.second, "'stage'"), "stage", at(path, kv.second));
      } else {
        throw input_error(at(path, kv.first) + ": unknown key '" + key +
                          "' (expected node, device, stage)");
      }
    }
    if (!has_node) {
      throw input_error(where + ": entry " + std::to_string(k + 1) + " has no 'node'");
    }
    if (!e.device && !e.stage) {
      throw input_error(where + ": entry for node '" + e.node + "' has neither device nor stage");
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Merges {node: value} mappings into entries, in first-mention order.
struct mapping_builder {
  std::vector<config_entry> entries;
  std::map<std::string, std::size_t> index;

  config_entry& entry(const std::string& node, const std::string& where) {
    const auto [it, fresh] = index.emplace(node, entries.size());
    if (fresh) {
      entries.push_back({node, std::nullopt, std::nullopt, where});
    }
    return entries[it->second];
  }
};

std::vector<config_entry> yaml_mapping(const fs::path& path, const YAML::Node& root) {
  mapping_builder b;
  for (const auto& kv : root) {
    const std::string key = scalar(path, kv.first, "a key");
    const bool devices = key == "sharding_info";
    if (!devices && key != "pipelining_info") {
      throw input_error(at(path, kv.first) + ": unknown key '" + key +
                        "' (expected sharding_info, pipelining_info)");
    }
    if (!kv.second.IsMap()) {
      throw input_error(at(path, kv.second) + ": '" + key + "' must map node names to numbers");
    }
    std::map<std::string, std::string> seen;
    for (const auto& item : kv.second) {
      const std::string node = scalar(path, item.first, "a node name");
      const std::string where = at(path, item.first);
      if (const auto [it, fresh] = seen.emplace(node, where); !fresh) {
        throw input_error(where + ": node '" + node + "' is listed twice in '" + key +
                          "' (first at " + it->second + ")");
      }
      const int value = value_or_throw(scalar(path, item.second, "a value"),
                                       devices ? "device" : "stage", at(path, item.second));
      auto& e = b.entry(node, where);
      (devices ? e.device : e.stage) = value;
    }
  }
  return b.entries;
}

std::vector<config_entry> read_yaml(const fs::path& path, const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw input_error(path.string() + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
  try {
    if (root.IsSequence()) {
      return yaml_list(path, root);
    }
    if (root.IsMap()) {
      return yaml_mapping(path, root);
    }
  } catch (const YAML::Exception& e) {
    throw input_error(path.string() + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  throw input_error(path.string() +
                    ": a sharding config must be a list of {node, device, stage} entries or a "
                    "mapping with sharding_info / pipelining_info");
}

// ---- JSON ------------------------------------------------------------------

std::vector<config_entry> read_json(const fs::path& path, const std::string& text) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (const auto p = msg.find("] "); p != std::string::npos) {
      msg = msg.substr(p + 2); // drop "[json.exception.parse_error.101] "
    }
    throw input_error(path.string() + ": JSON " + msg);
  }
  const auto number = [&](const nlohmann::json& v, const char* what, const std::string& where) {
    std::string text = v.dump();
    if (v.is_string()) {
      text = v.get<std::string>();
    }
    return value_or_throw(text, what, where);
  };
  mapping_builder b;
  if (root.is_array()) {
    for (std::size_t k = 0; k < root.size(); ++k) {
      const auto& item = root[k];
      const std::string where = path.string() + ": entry " + std::to_string(k + 1);
      if (!item.is_object() || !item.contains("node") || !item["node"].is_string()) {
        throw input_error(where + " must be an object with a string 'node'");
      }
      config_entry e{item["node"].get<std::string>(), std::nullopt, std::nullopt, where};
      for (const auto& [key, value] : item.items()) {
        if (key == "device") {
          e.device = number(value, "device", where);
        } else if (key == "stage") {
          e.stage = number(value, "stage", where);
        } else if (key != "node") {
          throw input_error(where + ": unknown key '" + key + "'");
        }
      }
      if (!e.device && !e.stage) {
        throw input_error(where + ": entry for node '" + e.node + "' has neither device nor stage");
      }
      b.entries.push_back(std::move(e));
    }
    return b.entries;
  }
  if (!root.is_object()) {
    throw input_error(path.string() +
                      ": a sharding config must be a list of {node, device, stage} entries or a "
                      "mapping with sharding_info / pipelining_info");
  }
  for (const auto& [key, table] : root.items()) {
    const bool devices = key == "sharding_info";
    if (!devices && key != "pipelining_info") {
      throw input_error(path.string() + ": unknown key '" + key +
                        "' (expected sharding_info, pipelining_info)");
    }
    if (!table.is_object()) {
      throw input_error(path.string() + ": '" + key + "' must map node names to numbers");
    }
    for (const auto& [node, value] : table.items()) {
      const std::string where = path.string() + ": " + key + "." + node;
      auto& e = b.entry(node, where);
      (devices ? e.device : e.stage) = number(value, devices ? "device" : "stage", where);
    }
  }
  return b.entries;
}

} // namespace

std::vector<config_entry> read_config(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw input_error("'" + path.string() + "': no such sharding config file");
  }
  if (fs::is_directory(path, ec)) {
    throw input_error("'" + path.string() + "': is a directory, not a sharding config");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    throw input_error("'" + path.string() + "': cannot be read");
  }
  const std::string s = std::move(text).str();
  if (s.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw input_error("'" + path.string() + "': the sharding config is empty");
  }
  auto ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".json" ? read_json(path, s) : read_yaml(path, s);
}

config_entry parse_shard_flag(const std::string& text) {
  const std::string where = "--shard " + text;
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    throw input_error(where + ": expected NODE=DEVICE[:STAGE]");
  }
  config_entry e;
  e.where = where;
  e.node = text.substr(0, eq);
  const std::string rest = text.substr(eq + 1);
  const auto colon = rest.find(':');
  e.device = value_or_throw(rest.substr(0, colon), "device", where);
  if (colon != std::string::npos) {
    e.stage = value_or_throw(rest.substr(colon + 1), "stage", where);
  }
  return e;
}

} // namespace shardpoint::onnx
