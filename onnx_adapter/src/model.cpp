// Reading and atomically writing ONNX models.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shardpoint/onnx/adapter.hpp>

namespace shardpoint::onnx {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw input_error("'" + path.string() + "': " + what);
}

// The checks a parse alone cannot make: random bytes or a truncated file
// sometimes decode as a protobuf message that is not a model.
void check_structure(const ::onnx::ModelProto& model, const fs::path& path) {
  if (model.ir_version() <= 0) {
    fail(path, "not an ONNX model (no ir_version)");
  }
  if (!model.has_graph()) {
    fail(path, "not an ONNX model (no graph)");
  }
  if (model.opset_import_size() == 0) {
    fail(path, "not a complete ONNX model (no opset_import; is the file truncated?)");
  }
  const auto& g = model.graph();
  if (g.output_size() == 0) {
    fail(path, "not a complete ONNX model (the graph has no outputs; is the file truncated?)");
  }
  std::unordered_set<std::string> defined;
  for (const auto& i : g.input()) {
    defined.insert(i.name());
  }
  for (const auto& t : g.initializer()) {
    defined.insert(t.name());
  }
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      defined.insert(o);
    }
  }
  for (const auto& o : g.output()) {
    if (!defined.count(o.name())) {
      fail(path, "graph output '" + o.name() + "' is produced by no node");
    }
  }
}

} // namespace

::onnx::ModelProto load_model(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) {
    fail(path, "no such file");
  }
  if (fs::is_directory(status)) {
    fail(path, "is a directory, not a model file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail(path, std::string("cannot be opened: ") + std::strerror(errno));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in.good() && !in.eof()) {
    fail(path, "read error");
  }
  const std::string data = std::move(bytes).str();
  if (data.empty()) {
    fail(path, "the file is empty");
  }
  ::onnx::ModelProto model;
  if (!model.ParseFromString(data)) {
    fail(path, "not an ONNX model (protobuf parse failed; truncated or not a model file?)");
  }
  check_structure(model, path);
  return model;
}

void save_model(const ::onnx::ModelProto& model, const fs::path& path) {
  std::string data;
  if (!model.SerializeToString(&data)) {
    fail(path, "the model cannot be serialised (larger than 2 GiB?)");
  }
  write_file_atomically(path, data);
}

void write_file_atomically(const fs::path& path, const std::string& data) {
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    fail(path, "the output folder '" + folder.string() + "' does not exist");
  }
  if (fs::is_directory(path, ec)) {
    fail(path, "is a directory; give a file name");
  }
  std::string temp = (folder / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    fail(path, std::string("cannot create a file in the output folder: ") + std::strerror(errno));
  }
  const auto abandon = [&](const std::string& why) {
    ::close(fd);
    ::unlink(temp.c_str());
    fail(path, why);
  };
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      abandon(std::string("write failed: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  // Same permissions as a file created normally (mkstemp uses 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) {
    abandon(std::string("write failed: ") + std::strerror(errno));
  }
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail(path, std::string("write failed: ") + std::strerror(errno));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, std::string("cannot be written: ") + std::strerror(err));
  }
}

} // namespace shardpoint::onnx
