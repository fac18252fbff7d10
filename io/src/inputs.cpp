// The input policy (see inputs.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/inputs.hpp>
#include <shardpoint/io/text.hpp>

#include "file_kind.hpp"

namespace shardpoint::io {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw bad_input_error(quote(path.string()) + ": " + what);
}

using detail::kind_of;

} // namespace

void require_regular_file(const fs::path& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    fail(path, e == ENOENT || e == ENOTDIR ? "no such " + std::string(what)
                                           : "cannot be read: " + std::string(std::strerror(e)));
  }
  if (S_ISDIR(st.st_mode)) {
    fail(path, "is a directory, not a " + std::string(what));
  }
  if (!S_ISREG(st.st_mode)) {
    fail(path, "the " + std::string(what) + " is " + kind_of(st.st_mode) +
                   ", not a regular file; shardpoint reads only regular files");
  }
}

void require_folder(const fs::path& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    fail(path, "no such " + std::string(what));
  }
  if (!S_ISDIR(st.st_mode)) {
    fail(path, "is not a directory; the " + std::string(what) + " must be one");
  }
}

namespace {

// Whether `file` lies in `folder`, both canonical (every link resolved).
bool lies_in(const fs::path& file, const fs::path& folder) {
  return std::mismatch(file.begin(), file.end(), folder.begin(), folder.end()).second ==
         folder.end();
}

} // namespace

void require_file_in_folder(const fs::path& folder, const fs::path& file, std::string_view what) {
  std::error_code ec;
  const fs::path inside = fs::canonical(folder, ec);
  const fs::path resolved = ec ? fs::path() : fs::canonical(file, ec);
  if (ec) {
    fail(file, "cannot be resolved: " + ec.message());
  }
  if (!lies_in(resolved, inside)) {
    fail(file, "leads out of the folder " + quote(folder.string()) +
                   " through a symbolic link (to " + quote(resolved.string()) +
                   "); shardpoint reads only what is inside the folders it is given");
  }
  require_regular_file(file, what);
}

std::string read_text_file(const fs::path& path, const std::string& what) {
  require_regular_file(path, what + " file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    fail(path, "cannot be read");
  }
  return std::move(text).str();
}

namespace {

// The checks of check_external_location(); returns the canonical file when
// it exists (empty when not, or when `need_file` is false and it does not).
fs::path confined(const fs::path& model_dir, std::string_view location, std::string_view tensor,
                  bool need_file) {
  const auto refuse = [&](const std::string& why) {
    throw bad_input_error("tensor " + quote(tensor) + ": its external data location " +
                          quote(location) + " " + why);
  };
  if (location.empty()) {
    refuse("is empty");
  }
  if (location.find('\0') != std::string_view::npos) {
    refuse("holds a NUL byte");
  }
  const fs::path relative{std::string(location)};
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    refuse("is absolute; ONNX allows only a path relative to the model's folder");
  }
  for (const auto& part : relative) {
    if (part == "..") {
      refuse("holds '..'; ONNX allows only a path inside the model's folder");
    }
  }
  std::error_code ec;
  const fs::path folder = fs::canonical(model_dir.empty() ? fs::path(".") : model_dir, ec);
  if (ec) {
    refuse("cannot be resolved: the model's folder " + quote(model_dir.string()) +
           " cannot be read");
  }
  const fs::path file = fs::canonical(folder / relative, ec);
  if (ec) {
    if (!need_file) {
      return {};
    }
    refuse("names no file in the model's folder " + quote(folder.string()));
  }
  // Inside the folder once every symbolic link is resolved.
  if (!lies_in(file, folder)) {
    refuse("leaves the model's folder through a symbolic link (to " + quote(file.string()) + ")");
  }
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    refuse("is " + std::string(S_ISDIR(st.st_mode) ? "a folder" : kind_of(st.st_mode)) +
           "; external data must be a regular file");
  }
  return file;
}

} // namespace

fs::path external_data_file(const fs::path& model_dir, std::string_view location,
                            std::string_view tensor) {
  return confined(model_dir, location, tensor, true);
}

void check_external_location(const fs::path& model_dir, std::string_view location,
                             std::string_view tensor) {
  (void)confined(model_dir, location, tensor, false);
}

} // namespace shardpoint::io
