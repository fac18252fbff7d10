// Writing files atomically, and reading small text files.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/files.hpp>

namespace shardpoint::io {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw bad_input_error("'" + path.string() + "': " + what);
}

} // namespace

void write_atomically(const fs::path& path, const std::function<int(int fd)>& write) {
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    fail(path, "the output folder '" + folder.string() + "' does not exist");
  }
  if (fs::is_directory(path, ec)) {
    fail(path, "is a directory; give a file name");
  }
  // (Built with append, not operator+: GCC 12 at -O3 gives a false -Wrestrict
  // on `"." + std::string(...)`, GCC bug 105329.)
  std::string temp = folder / ".";
  temp.append(path.filename().string()).append(".XXXXXX");
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    fail(path, std::string("cannot create a file in the output folder: ") + std::strerror(errno));
  }
  const auto abandon = [&](int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    fail(path, std::string("write failed: ") + std::strerror(err));
  };
  int err = 0;
  try {
    err = write(fd);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (err != 0) {
    abandon(err);
  }
  // Same permissions as a file created normally (mkstemp uses 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) {
    abandon(errno);
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(path, std::string("write failed: ") + std::strerror(e));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(path, std::string("cannot be written: ") + std::strerror(e));
  }
}

void write_file_atomically(const fs::path& path, std::string_view data) {
  write_atomically(path, [&](int fd) {
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return errno;
      }
      done += static_cast<std::size_t>(n);
    }
    return 0;
  });
}

std::string read_text_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    fail(path, "no such " + what + " file");
  }
  if (fs::is_directory(path, ec)) {
    fail(path, "is a directory, not a " + what);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    fail(path, "cannot be read");
  }
  return std::move(text).str();
}

void check_yaml_text(std::string_view text, const std::string& source) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    // The sequence's length, and the smallest value it may encode (no
    // overlong forms), by its first byte.
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
    const auto place = [&] {
      return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
    };
    if (!ok || v < least[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
      throw bad_input_error(place() + "not UTF-8 text");
    }
    // The C0 controls but tab, LF and CR: YAML does not allow them, and
    // yaml-cpp misreads them (a NUL becomes a stray byte). The others YAML
    // leaves out (DEL, C1) yaml-cpp reads, and writes back, as they are.
    if (v < 0x20 && v != '\t' && v != '\n' && v != '\r') {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(v));
      throw bad_input_error(place() + "control character " + code + ", which YAML does not allow");
    }
    if (c == '\n') {
      ++line;
      column = 0;
    }
    ++column;
    i += n;
  }
}

void check_name(std::string_view name, const std::string& where) {
  // U+FFFE and U+FFFF in UTF-8: EF BF BE, EF BF BF.
  for (const auto* nc : {"\xEF\xBF\xBE", "\xEF\xBF\xBF"}) {
    if (name.find(nc) != std::string_view::npos) {
      throw bad_input_error(where + ": the name '" + std::string(name) + "' holds U+" +
                            (nc[2] == '\xBE' ? "FFFE" : "FFFF") +
                            ", a noncharacter a YAML file cannot hold");
    }
  }
}

folder_transaction::folder_transaction(fs::path folder, bool replace)
    : folder_(std::move(folder)), replace_(replace) {
  std::error_code ec;
  if (fs::exists(folder_, ec)) {
    if (!fs::is_directory(folder_, ec)) {
      fail(folder_, "exists and is not a folder");
    }
    if (!replace_ && !fs::is_empty(folder_, ec)) {
      fail(folder_, "the output folder exists and is not empty (--force replaces it)");
    }
  }
  const fs::path parent = folder_.has_parent_path() ? folder_.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) {
    fail(folder_, "the folder '" + parent.string() + "' it goes in does not exist");
  }
  std::string temp = parent / ".";
  temp.append(folder_.filename().string()).append(".XXXXXX");
  if (::mkdtemp(temp.data()) == nullptr) {
    fail(folder_, std::string("cannot create a folder next to it: ") + std::strerror(errno));
  }
  temp_ = temp;
}

folder_transaction::~folder_transaction() {
  if (!done_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
}

fs::path folder_transaction::path(const std::string& name) const {
  return temp_ / name;
}

void folder_transaction::commit() {
  std::error_code ec;
  ::chmod(
      temp_.c_str(), 0777 & ~[] {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        return mask;
      }());
  if (fs::exists(folder_, ec)) {
    fs::remove_all(folder_, ec);
    if (ec) {
      fail(folder_, "cannot be replaced: " + ec.message());
    }
  }
  fs::rename(temp_, folder_, ec);
  if (ec) {
    fail(folder_, "cannot be written: " + ec.message());
  }
  done_ = true;
}

} // namespace shardpoint::io
