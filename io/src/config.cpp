// Sharding configs: shard.yaml lists, sharding_info / pipelining_info
// mappings (YAML or JSON), --shard flags, name resolution, shard.yaml out.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cctype>
#include <climits>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/detail/json_input.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/text.hpp>

#include "yaml_support.hpp"

namespace shardpoint::config {
namespace fs = std::filesystem;

namespace {

// A device or stage: decimal digits only, at most max_group_id
// (sharding_point.hpp).
std::optional<int> parse_value(const std::string& text) {
  if (text.empty() || text.size() > 10 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  const long long value = std::stoll(text);
  if (value > max_group_id) {
    return std::nullopt;
  }
  return static_cast<int>(value);
}

std::string out_of_range(const std::string& where, const char* what, const std::string& text) {
  return where + ": " + what + " " + io::quote(text) + " is not an integer in 0..65535";
}

int value_or_throw(const std::string& text, const char* what, const std::string& where) {
  if (const auto v = parse_value(text)) {
    return *v;
  }
  throw bad_input_error(out_of_range(where, what, text));
}

// ---- YAML ------------------------------------------------------------------

std::string at(const std::string& path, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) {
    return path;
  }
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string scalar(const std::string& path, const YAML::Node& node, const char* what) {
  if (!node.IsScalar()) {
    throw bad_input_error(at(path, node) + ": " + what + " must be a single value");
  }
  return node.Scalar();
}

std::vector<entry> yaml_list(const std::string& path, const YAML::Node& root) {
  std::vector<entry> out;
  for (std::size_t k = 0; k < root.size(); ++k) {
    const YAML::Node item = root[k];
    const std::string where = at(path, item);
    if (!item.IsMap()) {
      throw bad_input_error(where + ": entry " + std::to_string(k + 1) +
                            " must be a mapping with 'node', 'device' and/or 'stage'");
    }
    entry e;
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
        throw bad_input_error(at(path, kv.first) + ": unknown key " + io::quote(key) +
                              " (expected node, device, stage)");
      }
    }
    if (!has_node) {
      throw bad_input_error(where + ": entry " + std::to_string(k + 1) + " has no 'node'");
    }
    if (!e.device && !e.stage) {
      throw bad_input_error(where + ": entry for node " + io::quote(e.node) +
                            " has neither device nor stage");
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Merges {node: value} mappings into entries, in first-mention order.
struct mapping_builder {
  std::vector<entry> entries;
  std::map<std::string, std::size_t> index;

  entry& at_node(const std::string& node, const std::string& where) {
    const auto [it, fresh] = index.emplace(node, entries.size());
    if (fresh) {
      entries.push_back({node, std::nullopt, std::nullopt, where});
    }
    return entries[it->second];
  }
};

std::vector<entry> yaml_mapping(const std::string& path, const YAML::Node& root) {
  mapping_builder b;
  for (const auto& kv : root) {
    const std::string key = scalar(path, kv.first, "a key");
    const bool devices = key == "sharding_info";
    if (!devices && key != "pipelining_info") {
      throw bad_input_error(at(path, kv.first) + ": unknown key " + io::quote(key) +
                            " (expected sharding_info, pipelining_info)");
    }
    if (!kv.second.IsMap()) {
      throw bad_input_error(at(path, kv.second) + ": " + io::quote(key) +
                            " must map node names to numbers");
    }
    std::map<std::string, std::string> seen;
    for (const auto& item : kv.second) {
      const std::string node = scalar(path, item.first, "a node name");
      const std::string where = at(path, item.first);
      if (const auto [it, fresh] = seen.emplace(node, where); !fresh) {
        throw bad_input_error(where + ": node " + io::quote(node) + " is listed twice in '" + key +
                              "' (first at " + it->second + ")");
      }
      const int value = value_or_throw(scalar(path, item.second, "a value"),
                                       devices ? "device" : "stage", at(path, item.second));
      auto& e = b.at_node(node, where);
      (devices ? e.device : e.stage) = value;
    }
  }
  return b.entries;
}

std::vector<entry> read_yaml(const std::string& path, const std::string& text) {
  const YAML::Node root = io::detail::load_yaml(text, path);
  try {
    if (root.IsSequence()) {
      return yaml_list(path, root);
    }
    if (root.IsMap()) {
      return yaml_mapping(path, root);
    }
  } catch (const YAML::Exception& e) {
    throw bad_input_error(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                          std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  throw bad_input_error(path +
                        ": a sharding config must be a list of {node, device, stage} entries or a "
                        "mapping with sharding_info / pipelining_info");
}

// ---- JSON ------------------------------------------------------------------

std::vector<entry> read_json(const std::string& path, const std::string& text) {
  io::detail::json_places places; // line:column, as a YAML config's messages give them
  const auto root = io::detail::parse_json<nlohmann::json>(text, path, &places);
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
      const std::string where =
          path + (k < places.root_items.size() ? ":" + places.root_items[k] : std::string()) +
          ": entry " + std::to_string(k + 1);
      if (!item.is_object() || !item.contains("node") || !item["node"].is_string()) {
        throw bad_input_error(where + " must be an object with a string 'node'");
      }
      entry e{item["node"].get<std::string>(), std::nullopt, std::nullopt, where};
      for (const auto& [key, value] : item.items()) {
        if (key == "device") {
          e.device = number(value, "device", where);
        } else if (key == "stage") {
          e.stage = number(value, "stage", where);
        } else if (key != "node") {
          throw bad_input_error(where + ": unknown key " + io::quote(key));
        }
      }
      if (!e.device && !e.stage) {
        throw bad_input_error(where + ": entry for node " + io::quote(e.node) +
                              " has neither device nor stage");
      }
      b.entries.push_back(std::move(e));
    }
    return b.entries;
  }
  if (!root.is_object()) {
    throw bad_input_error(
        path + ": a sharding config must be a list of {node, device, stage} entries or a "
               "mapping with sharding_info / pipelining_info");
  }
  for (const auto& [key, table] : root.items()) {
    const bool devices = key == "sharding_info";
    if (!devices && key != "pipelining_info") {
      throw bad_input_error(path + ": unknown key " + io::quote(key) +
                            " (expected sharding_info, pipelining_info)");
    }
    if (!table.is_object()) {
      throw bad_input_error(path + ": " + io::quote(key) + " must map node names to numbers");
    }
    for (const auto& [node, value] : table.items()) {
      // As Python's mappings say it (config::from_mappings): the name
      // quoted, so that a NUL or a control character cannot cut the line.
      const auto at = places.inner_keys.find({key, node});
      const std::string where = path + (at != places.inner_keys.end() ? ":" + at->second : "") +
                                ": " + key + "[" + io::quote(node) + "]";
      auto& e = b.at_node(node, where);
      (devices ? e.device : e.stage) = number(value, devices ? "device" : "stage", where);
    }
  }
  return b.entries;
}

} // namespace

std::vector<entry> parse(std::string_view text, const std::string& source, bool json) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw bad_input_error(io::quote(source) + ": the sharding config is empty");
  }
  const std::string s(text);
  auto entries = json ? read_json(source, s) : read_yaml(source, s);
  for (const auto& e : entries) {
    io::check_name(e.node, e.where);
  }
  return entries;
}

bool is_json_file(const fs::path& path) {
  auto ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".json";
}

std::vector<entry> read_file(const fs::path& path) {
  const std::string text = io::read_text_file(path, "sharding config");
  return parse(text, path.string(), is_json_file(path));
}

entry parse_shard_flag(const std::string& text) {
  const std::string where = "--shard " + text;
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    throw bad_input_error(where + ": expected NODE=DEVICE[:STAGE]");
  }
  entry e;
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

std::vector<entry>
from_mapping_texts(const std::vector<std::pair<std::string, std::string>>& sharding_info,
                   const std::vector<std::pair<std::string, std::string>>& pipelining_info,
                   const std::string& source) {
  mapping_builder b;
  const auto add = [&](const auto& table, bool devices) {
    const char* key = devices ? "sharding_info" : "pipelining_info";
    std::map<std::string, bool> seen;
    for (const auto& [node, text] : table) {
      const std::string where = source + ": " + key + "[" + io::quote(node) + "]";
      if (!seen.emplace(node, true).second) {
        throw bad_input_error(where + ": node " + io::quote(node) + " is listed twice");
      }
      const int value = value_or_throw(text, devices ? "device" : "stage", where);
      auto& e = b.at_node(node, where);
      (devices ? e.device : e.stage) = value;
    }
  };
  add(sharding_info, true);
  add(pipelining_info, false);
  return b.entries;
}

std::vector<entry> from_mappings(const std::vector<std::pair<std::string, int>>& sharding_info,
                                 const std::vector<std::pair<std::string, int>>& pipelining_info,
                                 const std::string& source) {
  const auto texts = [](const std::vector<std::pair<std::string, int>>& table) {
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(table.size());
    for (const auto& [node, value] : table) {
      out.emplace_back(node, std::to_string(value));
    }
    return out;
  };
  return from_mapping_texts(texts(sharding_info), texts(pipelining_info), source);
}

namespace {

// Levenshtein distance, for "did you mean", when it is at most `cap`:
// Ukkonen's band, only the cells within `cap` of the diagonal, since a path
// through any other cell already costs more than `cap`. O(cap * min(|a|,
// |b|)) time, O(max(|a|, |b|)) space; nullopt as soon as a whole row of the
// band passes `cap` (a row's minimum never decreases down the table).
std::optional<std::size_t> distance_within(std::string_view a, std::string_view b,
                                           std::size_t cap) {
  if (a.size() > b.size()) {
    std::swap(a, b);
  }
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  if (m - n > cap) {
    return std::nullopt; // at least m - n insertions
  }
  const std::size_t over = cap + 1; // every cell outside the band
  std::vector<std::size_t> row(m + 1, over);
  for (std::size_t j = 0; j <= std::min(m, cap); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t lo = i > cap ? i - cap : 1;
    const std::size_t hi = std::min(m, i + cap);
    std::size_t diagonal = row[lo - 1];               // cell (i - 1, lo - 1)
    row[lo - 1] = lo == 1 ? std::min(i, over) : over; // cell (i, lo - 1)
    std::size_t least = row[lo - 1];
    for (std::size_t j = lo; j <= hi; ++j) {
      const std::size_t up = row[j]; // cell (i - 1, j); `over` past the last band
      row[j] =
          std::min({up + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1U : 0U), over});
      diagonal = up;
      least = std::min(least, row[j]);
    }
    if (least > cap) {
      return std::nullopt;
    }
  }
  return row[m] <= cap ? std::optional(row[m]) : std::nullopt;
}

// The distance when it is at most `limit`: bands of 1, 2, 4, ... cells
// (from the lengths' difference, its lower bound) until one holds it, so a
// near match costs O(d * length), not O(length^2).
std::optional<std::size_t> distance_up_to(std::string_view a, std::string_view b,
                                          std::size_t limit) {
  const std::size_t least = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  const std::size_t longest = std::max(a.size(), b.size()); // no distance is larger
  for (std::size_t cap = std::max<std::size_t>(least, 1);; cap *= 2) {
    const std::size_t bound = std::min({cap, limit, longest});
    if (auto d = distance_within(a, b, bound)) {
      return d;
    }
    if (bound == limit || bound == longest) {
      return std::nullopt;
    }
  }
}

} // namespace

std::size_t hint_within(std::string_view typed) {
  return std::max<std::size_t>(2, typed.size() / 3);
}

std::vector<std::string> closest(std::string_view name,
                                 const std::vector<std::string_view>& candidates, std::size_t most,
                                 std::size_t within) {
  // The best `most` so far, worst first (a max-heap of (distance, name)):
  // a candidate farther than the worst of a full heap is not computed out.
  using scored = std::pair<std::size_t, std::string_view>;
  std::vector<scored> best;
  if (most == 0) {
    return {};
  }
  for (auto c : candidates) {
    if (c.empty()) {
      continue;
    }
    const bool full = best.size() == most;
    const auto d = distance_up_to(name, c, full ? std::min(best.front().first, within) : within);
    if (!d || (full && !(scored(*d, c) < best.front()))) {
      continue;
    }
    if (full) {
      std::pop_heap(best.begin(), best.end());
      best.pop_back();
    }
    best.emplace_back(*d, c);
    std::push_heap(best.begin(), best.end());
  }
  std::sort_heap(best.begin(), best.end());
  std::vector<std::string> out;
  out.reserve(best.size());
  for (const auto& [d, c] : best) {
    out.emplace_back(c);
  }
  return out;
}

std::vector<sharding_point<std::size_t>>
resolve(const std::vector<entry>& entries, std::size_t num_vertices,
        const std::function<std::string_view(std::size_t)>& name_of) {
  // The entries' names -> the vertex that has it and how many do. The
  // entries are few and the vertices up to millions: each vertex's name is
  // looked up among the entries' (a map of every name was a sizable part
  // of sharding a 10^6-node model).
  // Only a name of an entry's length is hashed and looked up.
  std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> by_name;
  std::vector<bool> length_of_one; // by length
  for (const auto& e : entries) {
    by_name.try_emplace(e.node, 0, 0);
    length_of_one.resize(std::max(length_of_one.size(), e.node.size() + 1));
    length_of_one[e.node.size()] = true;
  }
  for (std::size_t v = 0; v < num_vertices && !by_name.empty(); ++v) {
    const std::string_view name = name_of(v);
    if (name.size() >= length_of_one.size() || !length_of_one[name.size()]) {
      continue;
    }
    if (const auto it = by_name.find(name); it != by_name.end()) {
      it->second = {v, it->second.second + 1};
    }
  }
  std::map<std::size_t, const entry*> seen;
  std::vector<sharding_point<std::size_t>> points;
  for (const auto& e : entries) {
    const auto it = by_name.find(e.node);
    if (it->second.second == 0 || e.node.empty()) {
      std::vector<std::string_view> names; // every name, once
      names.reserve(num_vertices);
      for (std::size_t v = 0; v < num_vertices; ++v) {
        names.push_back(name_of(v));
      }
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      std::string hint;
      // Only names near it: a trial's "no_such_node" got three Constants.
      for (const auto& c : closest(e.node, names, 3, hint_within(e.node))) {
        hint += (hint.empty() ? "" : ", ") + io::quote(c); // escaped, as every name (a NUL cut one)
      }
      throw bad_input_error(e.where + ": no node is named " + io::quote(e.node) +
                            (hint.empty() ? "" : "; closest: " + hint));
    }
    if (it->second.second > 1) {
      throw bad_input_error(e.where + ": node name " + io::quote(e.node) + " belongs to " +
                            std::to_string(it->second.second) + " nodes");
    }
    const std::size_t v = it->second.first;
    if (const auto [prev, fresh] = seen.emplace(v, &e); !fresh) {
      throw bad_input_error(e.where + ": node " + io::quote(e.node) +
                            " is listed twice (first at " + prev->second->where + ")");
    }
    points.push_back({v, e.device, e.stage});
  }
  return points;
}

std::string to_shard_yaml(const std::vector<entry>& entries) {
  YAML::Emitter out;
  out << YAML::BeginSeq;
  for (const auto& e : entries) {
    out << YAML::BeginMap << YAML::Key << "node" << YAML::Value;
    io::detail::emit_name(out, e.node);
    if (e.device) {
      out << YAML::Key << "device" << YAML::Value << *e.device;
    }
    if (e.stage) {
      out << YAML::Key << "stage" << YAML::Value << *e.stage;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  return std::string(out.c_str()) + "\n";
}

} // namespace shardpoint::config
