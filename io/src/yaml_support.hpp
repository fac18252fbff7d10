// Reading and writing YAML the way the YAML specification does, on top of
// yaml-cpp (internal to io/; the one place io/ touches yaml-cpp's parser and
// emitter for names).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// yaml-cpp departs from YAML 1.2 in two places that matter to a config
// holding arbitrary node names, both found by fuzz_config:
//   - it reads a lone carriage return as content, where YAML (5.4, "line
//     break characters") reads CR, LF and CR LF alike as a line break;
//   - its emitter writes a name holding a CR, DEL, a C1 control or a BOM as a
//     plain scalar, which YAML readers (yaml-cpp itself for a CR before the
//     line feed, PyYAML for DEL and C1) read differently or refuse.
// load_yaml normalises the line breaks before parsing, and emit_name double
// quotes (with escapes) every name a plain scalar could not carry exactly.
#ifndef SHARDPOINT_IO_YAML_SUPPORT_HPP
#define SHARDPOINT_IO_YAML_SUPPORT_HPP

#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace shardpoint::io::detail {

/// The YAML in `text`, parsed as the specification reads it: the text is
/// checked first (check_yaml_text: UTF-8, no C0 controls but tab, LF, CR),
/// every line break (CR LF, CR, LF) becomes a line feed, then yaml-cpp
/// parses it. bad_input_error "source:line:column: YAML syntax error: ..."
/// when it cannot.
YAML::Node load_yaml(std::string_view text, const std::string& source);

/// Whether a plain or single-quoted scalar could lose or change a character
/// of `text` in some YAML reader: it holds a C0 control (tab, CR and LF
/// included), DEL, a C1 control, U+2028/U+2029 or U+FEFF.
bool needs_escapes(std::string_view text);

/// Emits `text` as a scalar every YAML reader gives back byte for byte:
/// yaml-cpp's own choice, or double-quoted with escapes when needs_escapes.
void emit_name(YAML::Emitter& out, const std::string& text);

/// Emits `text` as a mapping key, as emit_name does. YAML limits an implicit
/// key ("name: value") to 1,024 characters, and yaml-cpp's emitter judges
/// that by the text before escapes and quote doubling: a name of 700 tabs
/// becomes a 1,402-character key its own parser refuses ("illegal map
/// value"; found by fuzz_config). A long name is written as an explicit key
/// ("? name" then ": value"), which has no limit.
void emit_key(YAML::Emitter& out, const std::string& text);

} // namespace shardpoint::io::detail

#endif // SHARDPOINT_IO_YAML_SUPPORT_HPP
