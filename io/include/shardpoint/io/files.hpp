// shardpoint/io/files.hpp -- writing files so that a failure leaves nothing.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_FILES_HPP
#define SHARDPOINT_IO_FILES_HPP

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace shardpoint::io {

/// Creates a temporary file next to `path`, lets `write(fd)` fill it
/// (returning 0 or an errno value), flushes it to disk and renames it over
/// `path`. On any failure `path` is left as it was, no temporary file
/// remains, and bad_input_error says "'path': what went wrong".
void write_atomically(const std::filesystem::path& path, const std::function<int(int fd)>& write);

/// Writes `bytes` to `path` atomically.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Reads a whole (small) text file; bad_input_error naming `what` when it
/// is missing, a folder or unreadable.
std::string read_text_file(const std::filesystem::path& path, const std::string& what);

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

/// Writes every file of a folder as one step: files go into a temporary
/// sibling folder, which is renamed to `folder` by commit(). Destroyed
/// without commit(), it removes what it wrote. `folder` must not exist, or
/// be an empty folder (replaced), unless `replace` is set.
class folder_transaction {
public:
  explicit folder_transaction(std::filesystem::path folder, bool replace = false);
  ~folder_transaction();
  folder_transaction(const folder_transaction&) = delete;
  folder_transaction& operator=(const folder_transaction&) = delete;

  /// Where to write `name` (a relative path) before commit().
  [[nodiscard]] std::filesystem::path path(const std::string& name) const;
  /// Moves everything into place.
  void commit();

private:
  std::filesystem::path folder_;
  std::filesystem::path temp_;
  bool replace_;
  bool done_ = false;
};

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_FILES_HPP
