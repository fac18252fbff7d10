// Reading and writing YAML as the specification does (see yaml_support.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <shardpoint/error.hpp>
#include <shardpoint/io/text.hpp>

#include "yaml_support.hpp"

#include <yaml-cpp/eventhandler.h>

namespace shardpoint::io::detail {

namespace {
// CR LF and a lone CR as LF: YAML's line breaks, as yaml-cpp reads only LF.
std::string normalised_breaks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out.push_back(text[i]);
      continue;
    }
    out.push_back('\n');
    if (i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
    }
  }
  return out;
}

std::string place(const std::string& source, const YAML::Mark& m) {
  return m.line < 0
             ? source
             : source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// What check_keys() may visit beyond the nodes the text holds: aliases
// repeat a node where they stand, and a few hundred bytes of aliases of
// aliases stand for 10^12 nodes ("billion laughs"), which every reader of
// the document would walk.
constexpr std::size_t alias_allowance = 1'000'000;

// Refuses a mapping that holds a key twice (yaml-cpp keeps both, and the
// readers would take one silently), in `node` and everything inside it,
// and a document whose aliases make it more than `budget` nodes.
void check_keys(const YAML::Node& node, const std::string& source, int depth, std::size_t& budget) {
  if (depth > 256) {
    throw bad_input_error(place(source, node.Mark()) + ": nested more than 256 deep");
  }
  if (budget == 0) {
    throw bad_input_error(place(source, node.Mark()) + ": its aliases repeat nodes more than " +
                          std::to_string(alias_allowance) + " times (an alias bomb?)");
  }
  --budget;
  if (node.IsSequence()) {
    for (const auto& item : node) {
      check_keys(item, source, depth + 1, budget);
    }
    return;
  }
  if (!node.IsMap()) {
    return;
  }
  std::map<std::string, YAML::Mark> seen;
  for (const auto& kv : node) {
    if (kv.first.IsScalar()) {
      const auto [it, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
      if (!fresh) {
        throw bad_input_error(place(source, kv.first.Mark()) + ": key " + quote(kv.first.Scalar()) +
                              " appears twice in one mapping (first at " +
                              place(source, it->second) + ")");
      }
    }
    check_keys(kv.first, source, depth + 1, budget);
    check_keys(kv.second, source, depth + 1, budget);
  }
}

} // namespace

namespace {

// Where a YAML stream's second document starts, if it has one. Events are
// counted with the parser, at most two documents: yaml-cpp 0.7's LoadAll
// never ends on some inputs (fuzz_config: "&a," yields empty documents
// forever, without consuming the ',').
class document_counter : public YAML::EventHandler {
public:
  std::optional<YAML::Mark> second;
  std::size_t nodes = 0; ///< of the first document, an alias one
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) {
      second = mark;
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { node(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { node(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node();
  }
  void OnMapEnd() override {}

private:
  void node() { nodes += documents_ == 1 ? 1 : 0; }
  int documents_ = 0;
};

} // namespace

YAML::Node load_yaml(std::string_view text, const std::string& source) {
  check_yaml_text(text, source);
  const std::string normal = normalised_breaks(text);
  YAML::Node document;
  document_counter counter;
  try {
    document = YAML::Load(normal);
    std::istringstream in(normal);
    YAML::Parser parser(in);
    for (int k = 0; k < 2 && parser.HandleNextDocument(counter); ++k) {
    }
  } catch (const YAML::Exception& e) {
    throw bad_input_error(place(source, e.mark) + ": YAML syntax error: " + e.msg);
  }
  if (counter.second) {
    throw bad_input_error(place(source, *counter.second) +
                          ": a second YAML document; the file must hold one (no '---' after it)");
  }
  std::size_t budget = counter.nodes + alias_allowance;
  check_keys(document, source, 0, budget);
  return document;
}

bool needs_escapes(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = [&](std::size_t k) {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
    };
    if (c < 0x20 || c == 0x7F) {
      return true; // C0 controls and DEL
    }
    if (c == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) {
      return true; // C1 controls, NEL among them
    }
    if (c == 0xE2 && next(1) == 0x80 && (next(2) == 0xA8 || next(2) == 0xA9)) {
      return true; // line and paragraph separators
    }
    if (c == 0xEF && next(1) == 0xBB && next(2) == 0xBF) {
      return true; // the byte order mark
    }
  }
  return false;
}

void emit_name(YAML::Emitter& out, const std::string& text) {
  if (!is_utf8(text)) {
    // YAML is UTF-8 text: no escape writes other bytes back.
    throw bad_input_error("the name " + quote(text) +
                          " is not UTF-8 text, which a YAML file cannot hold");
  }
  if (needs_escapes(text)) {
    out << YAML::DoubleQuoted;
  }
  out << text;
}

void emit_key(YAML::Emitter& out, const std::string& text) {
  // At most 4 characters a byte once escaped ("\x01" for one byte), so a
  // name of up to 250 bytes stays within the 1,024 of an implicit key.
  constexpr std::size_t implicit_key_bytes = 250;
  if (text.size() > implicit_key_bytes) {
    out << YAML::LongKey;
  }
  out << YAML::Key;
  emit_name(out, text);
}

} // namespace shardpoint::io::detail
