// Layout files: which weights are split, and how.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <yaml-cpp/yaml.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/files.hpp>
#include <shardpoint/io/layout_file.hpp>

#include "yaml_support.hpp"

namespace shardpoint::io {

const char* to_string(layout_choice::kind k) {
  switch (k) {
  case layout_choice::kind::column:
    return "column";
  case layout_choice::kind::row:
    return "row";
  case layout_choice::kind::vocab:
    return "vocab";
  case layout_choice::kind::replicated:
    return "replicated";
  case layout_choice::kind::tuple:
    return "tuple";
  }
  return "unknown";
}

namespace {

std::string at(const std::string& file, const YAML::Node& n) {
  const auto m = n.Mark();
  return m.line < 0 ? file
                    : file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

} // namespace

std::vector<layout_choice> read_layout_file(const std::filesystem::path& path) {
  return parse_layout(read_text_file(path, "layout"), path.string());
}

std::vector<layout_choice> parse_layout(std::string_view text, const std::string& file) {
  const YAML::Node root = detail::load_yaml(text, file);
  if (!root.IsMap()) {
    throw bad_input_error(file + ": a layout file maps initializer names to column, row, vocab, "
                                 "replicated or a shard tuple like [4, 1]");
  }
  std::vector<layout_choice> out;
  for (const auto& kv : root) {
    layout_choice c;
    c.where = at(file, kv.first);
    if (!kv.first.IsScalar()) {
      throw bad_input_error(c.where + ": a key must be an initializer name");
    }
    c.name = kv.first.Scalar();
    const auto& v = kv.second;
    if (v.IsScalar()) {
      const std::string k = v.Scalar();
      using K = layout_choice::kind;
      if (k == "column") {
        c.how = K::column;
      } else if (k == "row") {
        c.how = K::row;
      } else if (k == "vocab") {
        c.how = K::vocab;
      } else if (k == "replicated") {
        c.how = K::replicated;
      } else {
        throw bad_input_error(at(file, v) + ": " + io::quote(k) + " for " + c.name +
                              " is not column, row, vocab, replicated or a shard tuple");
      }
    } else if (v.IsSequence()) {
      c.how = layout_choice::kind::tuple;
      for (const auto& x : v) {
        long long value = 0;
        try {
          value = x.as<long long>();
        } catch (const YAML::Exception&) {
          value = 0;
        }
        if (value < 1) {
          throw bad_input_error(at(file, x) + ": the shard tuple of " + c.name + " holds '" +
                                (x.IsScalar() ? x.Scalar() : std::string("?")) +
                                "', not a positive integer");
        }
        c.shard.push_back(value);
      }
    } else {
      throw bad_input_error(at(file, v) + ": " + c.name + " needs a kind or a shard tuple");
    }
    out.push_back(std::move(c));
  }
  for (const auto& c : out) {
    check_name(c.name, c.where);
  }
  return out;
}

std::string to_layout_yaml(const std::vector<layout_choice>& choices) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& c : choices) {
    detail::emit_key(out, c.name);
    out << YAML::Value;
    if (c.how == layout_choice::kind::tuple) {
      out << YAML::Flow << c.shard;
    } else {
      out << to_string(c.how);
    }
    if (!c.reason.empty()) {
      out << YAML::Comment(c.reason);
    }
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

} // namespace shardpoint::io
