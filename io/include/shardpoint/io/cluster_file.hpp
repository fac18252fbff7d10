// shardpoint/io/cluster_file.hpp -- a small YAML file describing a cluster
// for `shardpoint plan --cluster FILE`.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
//   devices: 64
//   devices_per_node: 8
//   device_memory: 80GiB
//   device_flops: 312e12          # FLOP/s a device sustains
//   intra_node_bandwidth: 300GB/s
//   inter_node_bandwidth: 25GB/s
//
// Every key is optional (the command line's flags give the rest and win
// over the file); values are text as the flags take it.
#ifndef SHARDPOINT_IO_CLUSTER_FILE_HPP
#define SHARDPOINT_IO_CLUSTER_FILE_HPP

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace shardpoint::io {

/// Each key's value and where it is ("file:line:column"), by key.
struct cluster_entries {
  std::map<std::string, std::pair<std::string, std::string>> values;
};

/// The keys of the file at the top; bad_input_error "file:line:column: ..."
/// for YAML that is not a mapping of those keys to scalars.
cluster_entries read_cluster_file(const std::filesystem::path& path);
cluster_entries parse_cluster(std::string_view text, const std::string& file);

/// "300GB/s", "25e9", "1.5 TB/s": bytes a second (parse_bytes' forms, "/s"
/// optional); "312e12", "312T", "19.5 TFLOPS": operations a second (k, M,
/// G, T, P powers of 1000; "FLOPS" or "FLOP/s" optional). Nothing for
/// anything else, or a rate below 1 a second (no device is that slow, and
/// the times a plan divides by it would pass a double's range).
std::optional<double> parse_bandwidth(std::string_view text);
std::optional<double> parse_flops(std::string_view text);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_CLUSTER_FILE_HPP
