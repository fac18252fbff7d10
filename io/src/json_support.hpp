// Pieces of the reports that several renderings share (internal to io/).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_JSON_SUPPORT_HPP
#define SHARDPOINT_IO_JSON_SUPPORT_HPP

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardpoint/io/text.hpp>
#include <shardpoint/pipeline_rules.hpp>

namespace shardpoint::io::detail {

/// Every string of `j` (keys too) with the bytes that are not UTF-8 escaped
/// (io/text.hpp): names from a model may hold any bytes, and JSON holds
/// only UTF-8.
inline void make_utf8(nlohmann::json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!is_utf8(s)) {
      s = utf8_escaped(s);
    }
  } else if (j.is_array()) {
    for (auto& x : j) {
      make_utf8(x);
    }
  } else if (j.is_object()) {
    nlohmann::json fixed = nlohmann::json::object();
    bool renamed = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      renamed = renamed || !is_utf8(it.key());
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      make_utf8(it.value());
    }
    if (renamed) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        fixed[utf8_escaped(it.key())] = std::move(it.value());
      }
      j = std::move(fixed);
    }
  }
}

/// A count held as a double (bytes, whole cost units) as JSON: an integer
/// when it is one (37036, not 37036.0, as the other reports write bytes),
/// else the double.
inline nlohmann::json count_json(double x) {
  constexpr double exact = 9007199254740992.0; // 2^53: every integer below is a double
  if (x >= -exact && x <= exact && x == static_cast<double>(static_cast<std::int64_t>(x))) {
    return static_cast<std::int64_t>(x);
  }
  return x;
}

/// A report's JSON document: valid UTF-8 whatever the names held,
/// indented by 2, with a final line feed.
inline std::string document(nlohmann::json j) {
  make_utf8(j);
  return j.dump(2) + "\n";
}

/// What a figure rests on that is a guess: an "estimated: ..." line each
/// in a table; "estimated" and "estimates" in JSON (docs/cli.md, Figures
/// that are guesses).
inline std::string estimates_table(const std::vector<std::string>& estimates) {
  std::string out;
  for (const auto& e : estimates) {
    out += "estimated: " + e + "\n";
  }
  return out;
}
inline void add_estimates(nlohmann::json& j, const std::vector<std::string>& estimates) {
  j["estimated"] = !estimates.empty();
  j["estimates"] = estimates;
}

/// "validation: no problems", or the count and one indented line each.
inline std::string findings_table(const std::vector<diagnostic>& diagnostics) {
  std::string out = "validation: ";
  if (diagnostics.empty()) {
    return out + "no problems\n";
  }
  out.append(std::to_string(diagnostics.size())).append(" finding(s)\n");
  for (const auto& d : diagnostics) {
    out.append("  ").append(to_string(d.severity)).append(" [").append(to_string(d.rule));
    out.append("] ").append(printable(d.message)).append("\n");
  }
  return out;
}

/// [{"severity", "rule", "message", "nodes"}]
inline nlohmann::json findings_json(const std::vector<diagnostic>& diagnostics) {
  auto out = nlohmann::json::array();
  for (const auto& d : diagnostics) {
    out.push_back({{"severity", std::string(to_string(d.severity))},
                   {"rule", std::string(to_string(d.rule))},
                   {"message", d.message},
                   {"nodes", d.vertices}});
  }
  return out;
}

} // namespace shardpoint::io::detail

#endif // SHARDPOINT_IO_JSON_SUPPORT_HPP
