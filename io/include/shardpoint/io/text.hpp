// shardpoint/io/text.hpp -- the one text policy: how names and values from
// files and users are checked, and how they appear in messages, tables and
// JSON, whatever bytes they hold.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// Names in a model are bytes: ONNX does not require UTF-8 and a hostile or
// broken file may hold anything. shardpoint keeps them as they are for
// matching (a config names a node by its bytes), and shows them so that
// every line stays one line and every JSON document stays valid:
//   - in error lines, quote(): control characters and bytes that are not
//     UTF-8 escaped, and at most ~200 bytes shown, "... (N bytes)" after;
//   - in tables, printable(): the same escapes, nothing cut;
//   - in JSON, utf8_escaped(): only the bytes that are not UTF-8 escaped
//     (the JSON writer escapes controls itself).
// An escape is `\xNN` for a byte, `\n`, `\r`, `\t` for those controls.
#ifndef SHARDPOINT_IO_TEXT_HPP
#define SHARDPOINT_IO_TEXT_HPP

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace shardpoint::io {

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or
/// values past U+10FFFF).
bool is_utf8(std::string_view text);

/// `text` with every byte that is not part of a well-formed UTF-8 sequence
/// written `\xNN`.
std::string utf8_escaped(std::string_view text);

/// utf8_escaped(), with C0 controls and DEL escaped too: one line, any
/// terminal.
std::string printable(std::string_view text);

/// printable(`value`) in single quotes, for an error line: when longer than
/// `most` bytes, its first `most` bytes (cut at a character boundary) and
/// "... (N bytes)".
std::string quote(std::string_view value, std::size_t most = 200);

/// The first `most` of `names`, each quote()d, separated by ", ", and
/// " and N more" when there are more: a list in one line of a message.
std::string quoted_names(std::span<const std::string> names, std::size_t most = 5);

/// Checks that `text` is UTF-8 without C0 control characters but tab, line
/// feed and carriage return, as YAML requires (yaml-cpp would otherwise read
/// bytes, NUL among them, that no writer gives back). bad_input_error
/// "source:line:column: not UTF-8 text" or "...: control character U+00XX,
/// which YAML does not allow" otherwise.
void check_yaml_text(std::string_view text, const std::string& source);

/// Checks that a name read from a config (YAML, or JSON's \u escapes) holds
/// no noncharacter U+FFFE / U+FFFF, which yaml-cpp cannot write back (it
/// writes U+FFFD); bad_input_error "where: the name holds U+FFFF, ..."
/// otherwise.
void check_name(std::string_view name, const std::string& where);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_TEXT_HPP
