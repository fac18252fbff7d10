// The text policy: UTF-8, escapes for display, quoting in messages.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>

#include <shardpoint/error.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::io {

namespace {

// The UTF-8 sequence at text[i]: its length in bytes and code point, or
// length 0 when the byte there does not start a well-formed sequence.
struct sequence {
  std::size_t size = 0;
  char32_t value = 0;
};

sequence decode(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  // The length, and the smallest value it may encode (no overlong forms), by
  // the first byte.
  const std::size_t n = c < 0x80         ? 1
                        : (c >> 5) == 6  ? 2
                        : (c >> 4) == 14 ? 3
                        : (c >> 3) == 30 ? 4
                                         : 0;
  char32_t v = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  bool ok = n != 0 && i + n <= text.size();
  for (std::size_t k = 1; ok && k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    ok = (b >> 6) == 2;
    v = (v << 6) | (b & 0x3F);
  }
  static constexpr char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (!ok || v < least[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    return {};
  }
  return {n, v};
}

void append_byte_escape(std::string& out, unsigned char c) {
  char code[8];
  std::snprintf(code, sizeof code, "\\x%02x", c);
  out += code;
}

// Characters that change how the text around them is shown without being
// seen: the C1 controls and Unicode's bidirectional marks and overrides
// (U+202E turns the rest of a line around, the "Trojan Source" trick).
bool invisible_format(char32_t v) {
  return (v >= 0x80 && v <= 0x9F) || v == 0x061C || v == 0x200E || v == 0x200F ||
         (v >= 0x202A && v <= 0x202E) || (v >= 0x2066 && v <= 0x2069);
}

// Appends the sequence of `size` bytes at `p` (code point `v`), escaping
// controls when asked.
void append(std::string& out, const char* p, std::size_t size, char32_t v, bool controls) {
  if (controls && invisible_format(v)) {
    char code[12];
    std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(v));
    out += code;
    return;
  }
  if (controls && (v < 0x20 || v == 0x7F)) {
    switch (v) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      append_byte_escape(out, static_cast<unsigned char>(v));
      return;
    }
  }
  out.append(p, size);
}

// Escapes `text` up to `limit` bytes of input; returns the bytes consumed.
std::size_t escape_into(std::string& out, std::string_view text, bool controls, std::size_t limit) {
  const std::size_t end = std::min(text.size(), limit);
  std::size_t i = 0;
  while (i < end) {
    // A run of printable ASCII, kept as it is in both modes, in one append
    // (names are mostly that: a listing of 10^6 nodes spent a fifth of its
    // time here, character by character).
    std::size_t j = i;
    while (j < end && text[j] >= 0x20 && text[j] < 0x7F) {
      ++j;
    }
    if (j != i) {
      out.append(text.data() + i, j - i);
      i = j;
      continue;
    }
    const sequence s = decode(text, i);
    if (s.size == 0) {
      append_byte_escape(out, static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (i + s.size > limit) {
      break; // not half a character
    }
    append(out, text.data() + i, s.size, s.value, controls);
    i += s.size;
  }
  return i;
}

} // namespace

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) { // ASCII, the common case
      ++i;
      continue;
    }
    const sequence s = decode(text, i);
    if (s.size == 0) {
      return false;
    }
    i += s.size;
  }
  return true;
}

std::string utf8_escaped(std::string_view text) {
  if (is_utf8(text)) {
    return std::string(text);
  }
  std::string out;
  escape_into(out, text, false, text.size());
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  escape_into(out, text, true, text.size());
  return out;
}

std::string quote(std::string_view value, std::size_t most) {
  std::string out = "'";
  const std::size_t used = escape_into(out, value, true, most);
  out += "'";
  if (used < value.size()) {
    out += "... (" + std::to_string(value.size()) + " bytes)";
  }
  return out;
}

std::string quoted_names(std::span<const std::string> names, std::size_t most) {
  std::string list;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) {
    list.append(i == 0 ? "" : ", ").append(quote(names[i]));
  }
  if (names.size() > most) {
    list += " and " + std::to_string(names.size() - most) + " more";
  }
  return list;
}

void check_yaml_text(std::string_view text, const std::string& source) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const sequence s = decode(text, i);
    const auto place = [&] {
      return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
    };
    if (s.size == 0) {
      throw bad_input_error(place() + "not UTF-8 text");
    }
    // The C0 controls but tab, LF and CR: YAML does not allow them, and
    // yaml-cpp misreads them (a NUL becomes a stray byte). The others YAML
    // leaves out (DEL, C1) yaml-cpp reads as they are; the writers escape
    // them (yaml_support.hpp).
    const char32_t v = s.value;
    if (v < 0x20 && v != '\t' && v != '\n' && v != '\r') {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(v));
      throw bad_input_error(place() + "control character " + code + ", which YAML does not allow");
    }
    if (v == '\n') {
      ++line;
      column = 0;
    }
    ++column;
    i += s.size;
  }
}

void check_name(std::string_view name, const std::string& where) {
  // U+FFFE and U+FFFF in UTF-8: EF BF BE, EF BF BF.
  for (const auto* nc : {"\xEF\xBF\xBE", "\xEF\xBF\xBF"}) {
    if (name.find(nc) != std::string_view::npos) {
      throw bad_input_error(where + ": the name " + quote(name) + " holds U+" +
                            (nc[2] == '\xBE' ? "FFFE" : "FFFF") +
                            ", a noncharacter a YAML file cannot hold");
    }
  }
}

} // namespace shardpoint::io
