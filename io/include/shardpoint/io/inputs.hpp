// shardpoint/io/inputs.hpp -- the one input policy: what a command may read.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// A command reads only what it was given: regular files (symbolic links to
// them followed), never a FIFO, device or socket (which could block forever
// or never end), and, of a model's external data, only files inside the
// model's folder, by the rule the ONNX checker itself enforces
// (onnx/checker.cc, resolve_external_data_location): a relative location
// without "..", inside the folder once symbolic links are resolved, naming a
// regular file. Every refusal is a bad_input_error naming the file and, for
// external data, the tensor (exit 2).
#ifndef SHARDPOINT_IO_INPUTS_HPP
#define SHARDPOINT_IO_INPUTS_HPP

#include <filesystem>
#include <string>
#include <string_view>

namespace shardpoint::io {

/// Refuses, unless `path` names a regular file: "'p': no such <what>",
/// "'p': is a directory, not a <what>", "'p': the <what> is a FIFO, not a
/// regular file".
void require_regular_file(const std::filesystem::path& path, std::string_view what);

/// Refuses, unless `path` names a folder: "'p': no such <what>", "'p': is
/// not a directory".
void require_folder(const std::filesystem::path& path, std::string_view what);

/// Reads a whole text file, after require_regular_file.
std::string read_text_file(const std::filesystem::path& path, const std::string& what);

/// Refuses `file`, an entry a command reads from a folder it was given
/// (`folder`: a strategy or rank folder), unless it is a regular file that
/// is still inside `folder` once every symbolic link is resolved; `what`
/// names it ("strategy file"). A link out of the folder, a FIFO, a device
/// or a folder is said as such, never read or passed over.
void require_file_in_folder(const std::filesystem::path& folder, const std::filesystem::path& file,
                            std::string_view what);

/// The checks of external_data_file() for a command that never opens the
/// data (shard, inspect): a location that is absolute, holds '..', or leads
/// out of the folder through a symbolic link is refused the same way; one
/// that names no file yet is accepted (a model copied without its data).
void check_external_location(const std::filesystem::path& model_dir, std::string_view location,
                             std::string_view tensor);

/// The file an ONNX external-data `location` of tensor `tensor` names in
/// `model_dir`, confined as the top of this header says. Throws
/// bad_input_error "tensor 'w': its external data location '../x' leaves
/// the model's folder" and the like.
std::filesystem::path external_data_file(const std::filesystem::path& model_dir,
                                         std::string_view location, std::string_view tensor);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_INPUTS_HPP
