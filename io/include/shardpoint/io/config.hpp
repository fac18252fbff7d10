// shardpoint/io/config.hpp -- sharding configs, independent of any graph
// format: the seed's shard.yaml, the Python API's sharding_info /
// pipelining_info mapping (YAML or JSON), `--shard NODE=DEVICE[:STAGE]`
// flags; resolving node names to vertex indices; writing shard.yaml back.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// An adapter for a graph format only has to say what each vertex is called
// (`resolve`'s `name_of`); everything else here is shared. Errors are
// `shardpoint::bad_input_error`, one line naming the file with line and
// column (YAML) or the entry (JSON), or the flag.
#ifndef SHARDPOINT_IO_CONFIG_HPP
#define SHARDPOINT_IO_CONFIG_HPP

#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/sharding_point.hpp>

namespace shardpoint::config {

/// One sharding point as a config names it.
struct entry {
  std::string node;
  std::optional<int> device;
  std::optional<int> stage;
  std::string where; ///< e.g. "shard.yaml:5:3", for messages

  friend bool operator==(const entry&, const entry&) = default;
};

/// Reads a sharding config file: a YAML list of {node, device, stage} (the
/// seed's shard.yaml) or a mapping {sharding_info: {node: device},
/// pipelining_info: {node: stage}} in YAML or, for a `.json` file, JSON.
std::vector<entry> read_file(const std::filesystem::path& path);

/// Whether read_file reads `path` as JSON: its extension is `.json` (any
/// case).
bool is_json_file(const std::filesystem::path& path);

/// The same from text; `source` names it in messages, `json` picks the
/// parser.
std::vector<entry> parse(std::string_view text, const std::string& source, bool json = false);

/// Parses one `--shard NODE=DEVICE[:STAGE]` flag. The name is everything
/// before the last '=', so names containing '=' work.
entry parse_shard_flag(const std::string& text);

/// Entries from the Python API's two mappings, in first-mention order: a
/// node in both gets its device and its stage. `source` names them in
/// messages.
std::vector<entry> from_mappings(const std::vector<std::pair<std::string, int>>& sharding_info,
                                 const std::vector<std::pair<std::string, int>>& pipelining_info,
                                 const std::string& source = "sharding_info/pipelining_info");
/// The same with each id as the decimal text of a whole number of any size
/// (Python's int: 2**70 is "not an integer in 0..65535", said as a
/// config's id is, not a failed conversion).
std::vector<entry>
from_mapping_texts(const std::vector<std::pair<std::string, std::string>>& sharding_info,
                   const std::vector<std::pair<std::string, std::string>>& pipelining_info,
                   const std::string& source = "sharding_info/pipelining_info");

/// How far a word typed may be from a hint given for it: a third of its
/// length, at least 2 edits ("--num_ipu" is 1 from "--num_ipus"; "--force"
/// is 4 from "--dim", and "no_such_node" 9 from "Constant_0": no hints).
std::size_t hint_within(std::string_view typed);

/// Up to `most` of `candidates` closest to `name` (Levenshtein distance,
/// then alphabetical), for "did you mean" hints; only those within
/// `within` edits of it (none farther is a hint worth giving).
std::vector<std::string> closest(std::string_view name,
                                 const std::vector<std::string_view>& candidates,
                                 std::size_t most = 3,
                                 std::size_t within = std::numeric_limits<std::size_t>::max());

/// Resolves entries to sharding points on a graph of `num_vertices`
/// vertices, `name_of(i)` being the name of vertex i. Throws bad_input_error
/// for an unknown name (with the closest names within hint_within), a name on two vertices, or
/// a vertex listed twice.
std::vector<sharding_point<std::size_t>>
resolve(const std::vector<entry>& entries, std::size_t num_vertices,
        const std::function<std::string_view(std::size_t)>& name_of);

/// The entries as a shard.yaml in the seed's form (a list of {node,
/// device, stage}); names are quoted where YAML needs it.
std::string to_shard_yaml(const std::vector<entry>& entries);

} // namespace shardpoint::config

#endif // SHARDPOINT_IO_CONFIG_HPP
