// A protobuf output stream onto a file descriptor, in 1 MiB writes (through
// io::file_writer, which starts the disk's writeback as it goes), and long
// runs of an input file's bytes copied file to file (copy()).
//
// protobuf's own FileOutputStream ignores its block_size argument (3.21:
// every write(2) is 8 KiB, 12,500 system calls for a 100 MB model); this one
// is CopyingOutputStreamAdaptor with a buffer of the size asked for.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SRC_FD_STREAM_HPP
#define SHARDPOINT_ONNX_SRC_FD_STREAM_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <shardpoint/io/outputs.hpp>

namespace shardpoint::onnx {

class fd_output_stream : public google::protobuf::io::CopyingOutputStreamAdaptor {
public:
  explicit fd_output_stream(int fd, int block_size = 1 << 20)
      : CopyingOutputStreamAdaptor(&writer_, block_size), writer_(fd) {}
  fd_output_stream(const fd_output_stream&) = delete;
  fd_output_stream& operator=(const fd_output_stream&) = delete;
  ~fd_output_stream() override { Flush(); }

  /// The errno of the first failed write, or 0.
  [[nodiscard]] int error() const { return writer_.error; }

  /// What is buffered, then `bytes` -- the bytes of the open file `from` at
  /// `offset` -- copied file to file (io::file_writer::copy). False after a
  /// failed write, as Write().
  bool copy(int from, std::uint64_t offset, std::string_view bytes) {
    if (!Flush() || writer_.error != 0) {
      return false;
    }
    writer_.error = writer_.file.copy(from, offset, bytes);
    return writer_.error == 0;
  }

private:
  struct writer : google::protobuf::io::CopyingOutputStream {
    explicit writer(int fd) : file(fd) {}
    bool Write(const void* buffer, int size) override {
      if (error != 0) { // a failed copy(): nothing more is written
        return false;
      }
      error = file.write({static_cast<const char*>(buffer), static_cast<std::size_t>(size)});
      return error == 0;
    }
    io::file_writer file;
    int error = 0;
  };
  writer writer_;
};

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SRC_FD_STREAM_HPP
