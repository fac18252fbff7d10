// shardpoint/io/layout_file.hpp -- which weights are split, and how: the
// seed's sharded_state_dict written down, as YAML.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
//   layer0/q_w: column        # column-parallel (the seed's ColumnParallelLinear)
//   layer0/q_b: column        # its bias: (T,)
//   layer0/attn_out_w: row    # row-parallel; its bias stays whole
//   embedding: vocab          # VocabParallelEmbedding: (T, 1)
//   norm_w: replicated
//   odd_w: [4, 1]             # an explicit shard tuple
#ifndef SHARDPOINT_IO_LAYOUT_FILE_HPP
#define SHARDPOINT_IO_LAYOUT_FILE_HPP

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace shardpoint::io {

/// How one weight is split.
struct layout_choice {
  enum class kind { column, row, vocab, replicated, tuple };
  std::string name;
  kind how = kind::replicated;
  std::vector<std::int64_t> shard; ///< kind::tuple only
  std::string where;               ///< "layout.yaml:3:1", for messages
  std::string reason;              ///< why (derived layouts), for the printout
};

[[nodiscard]] const char* to_string(layout_choice::kind k);

/// Reads a layout file: a mapping from initializer name to a kind (column,
/// row, vocab, replicated) or a list of positive integers. Throws
/// bad_input_error with file, line and column.
std::vector<layout_choice> read_layout_file(const std::filesystem::path& path);
/// The same on a file's text; `source` names it in messages.
std::vector<layout_choice> parse_layout(std::string_view text, const std::string& source);

/// The choices as a layout file (the reasons as comments).
std::string to_layout_yaml(const std::vector<layout_choice>& choices);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_LAYOUT_FILE_HPP
