// shardpoint/io/outputs.hpp -- the one output policy: what a command may
// write, and how, so that it never removes or overwrites what it did not
// write and never leaves half an output.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROCEDURE
//
//   A command declares, before it writes anything, every path it reads
//   (output_set::input, input_folder) and every path it writes (file,
//   folder). Each declaration is checked at once against every other, on
//   canonical paths (symlinks resolved, "out/" the same as "out"):
//
//   - no output folder is `/`, the current folder or one of its ancestors;
//   - no output is an input (nor a hard link to one), holds an input, or lies
//     inside a folder the command reads (a strategy or rank folder);
//   - no output is, holds or lies inside another output;
//   - an output file that exists must be a regular file (not a folder,
//     FIFO, device or symbolic link); an output folder that exists must be a
//     folder (not a symbolic link), and is replaced only when it is empty or,
//     with `force`, when everything in it is listed in the manifest
//     (`.shardpoint-manifest.json`) shardpoint writes into every folder it
//     makes, each file as it was written (the manifest records its XXH3-64
//     fingerprint): never a folder holding anything shardpoint did not write
//     or that was changed since; a replaced folder keeps its mode;
//   - names fit NAME_MAX (255 bytes) with room for the temporary's suffix.
//
//   A refusal is a bad_input_error naming the path and the rule (exit 2),
//   and nothing has been touched. Writing goes to temporaries beside the
//   outputs (`.<name>.shardpoint-XXXXXX`); commit() moves them all into place
//   once everything is written, each in one step: a file by rename(2) (it
//   keeps the replaced file's mode, and owner where permitted), a new folder
//   by renameat2(RENAME_NOREPLACE) (a concurrent writer of the same new
//   folder loses, exit 2), a replaced folder by renameat2(RENAME_EXCHANGE),
//   so that at every instant the path holds the complete old or the complete
//   new output (where the file system has no renameat2: rename the old aside,
//   then the new in). The old folder is then removed file by file from its
//   manifest. An output_set destroyed without commit() removes every
//   temporary it made, so a failing command writes nothing.
//
// INTERRUPTION
//
//   remove_temporaries_on_signals() (the command line calls it first) makes
//   SIGINT, SIGTERM and SIGHUP remove every temporary of every live
//   output_set and write_atomically() before the process ends with the
//   signal. A SIGKILL, or a power cut, can leave temporaries: hidden files
//   and folders named `.<output name>.shardpoint-XXXXXX` beside the outputs,
//   which may be removed by hand; an output itself is always whole.
#ifndef SHARDPOINT_IO_OUTPUTS_HPP
#define SHARDPOINT_IO_OUTPUTS_HPP

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardpoint::io {

/// The name of the manifest written into every output folder: a JSON object
/// {"written_by": "shardpoint", "files": [relative paths]}.
inline constexpr const char* manifest_name = ".shardpoint-manifest.json";

/// What an output file and an output folder have: where it goes, and the
/// temporary beside it that is written first.
class staged_output {
public:
  /// Where it goes once committed (as given, normalised).
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Where to write it now: a temporary beside path(), in the same folder
  /// (a file: write it with write_atomically() or any writer of a file by
  /// path; a folder: for hard links into it -- files go through file()).
  [[nodiscard]] const std::filesystem::path& staging() const noexcept { return staging_; }

protected:
  friend class output_set;
  std::filesystem::path path_;
  /// Where it is put: path_ as the checks resolved it, every link on the
  /// way followed then, so that a link retargeted while the command runs
  /// cannot send it elsewhere (a trial's shard so wrote over its input).
  std::filesystem::path target_;
  std::filesystem::path staging_;
  std::string what_;
  bool existed_ = false;
};

/// An output file declared in an output_set.
class staged_file : public staged_output {
private:
  friend class output_set;
  unsigned mode_ = 0;
  unsigned uid_ = 0;
  unsigned gid_ = 0;
};

/// An output folder declared in an output_set.
class staged_folder : public staged_output {
public:
  /// Where to write `relative` (a path inside the folder, e.g. "rank_3/x.ckpt")
  /// now; its parent folders are made, and the file is listed in the
  /// manifest. bad_input_error for a name that leaves the folder or collides
  /// with the manifest.
  std::filesystem::path file(const std::string& relative);

private:
  friend class output_set;
  std::vector<std::string> files_;
};

/// Every output of one command, checked against its inputs and each other
/// before anything is written, and committed together (see the top).
class output_set {
public:
  output_set();
  ~output_set();
  output_set(const output_set&) = delete;
  output_set& operator=(const output_set&) = delete;

  /// A file the command reads; `what` names it in messages ("the input
  /// model"). A path that does not exist protects nothing.
  void input(const std::filesystem::path& path, std::string_view what);
  /// A folder the command reads as a whole (a strategy or rank folder).
  void input_folder(const std::filesystem::path& path, std::string_view what);

  /// Declares an output file (`what`: its option, e.g. "--output-model").
  staged_file& file(const std::filesystem::path& path, std::string_view what);
  /// Declares an output folder; `force` allows replacing a non-empty folder
  /// that holds only a shardpoint output.
  staged_folder& folder(const std::filesystem::path& path, std::string_view what, bool force);

  /// Moves every written output into place (see the top). A file declared
  /// but never written is skipped.
  void commit();

private:
  struct place;
  void check_against_all(const place& p);
  std::vector<place> places_;
  std::vector<std::unique_ptr<staged_file>> files_;
  std::vector<std::unique_ptr<staged_folder>> folders_;
  bool committed_ = false;
};

/// Creates a temporary file next to `path`, lets `write(fd)` fill it
/// (returning 0 or an errno value), flushes it to disk and renames it over
/// `path`, keeping the mode (and owner, where permitted) of a file it
/// replaces. Refuses a `path` that exists and is not a regular file (a
/// folder, FIFO, device or symbolic link) or whose name is longer than
/// NAME_MAX. On any failure `path` is left as it was, no temporary file
/// remains, and bad_input_error says "'path': what went wrong".
void write_atomically(const std::filesystem::path& path, const std::function<int(int fd)>& write);

/// Writes to a file descriptor in full -- again after a short write or EINTR
/// -- and, every `writeback_bytes`, asks the kernel to start putting what
/// came before on the disk (Linux's sync_file_range), so that the fsync with
/// which write_atomically ends waits for the last few MiB, not for the whole
/// file (ResNet-50's `shard --report none`, 100 MB out, went from 0.09 to
/// 0.06 s: bench/README.md). A hint only: where the kernel refuses it, the
/// fsync does it all.
class file_writer {
public:
  static constexpr std::uint64_t writeback_bytes = 8ULL << 20;
  explicit file_writer(int fd) noexcept : fd_(fd) {}
  /// 0, or the errno of the write that failed.
  [[nodiscard]] int write(std::string_view bytes) noexcept;
  /// Writes `bytes`, which are the bytes of the open file `from` at
  /// `offset`, by having the kernel copy them file to file
  /// (copy_file_range): they never pass through this process, so pages of
  /// `from` mapped into it are not touched (their bytes are not counted in
  /// its resident memory, and not copied twice). Where the kernel cannot
  /// copy them so (another file system, an old kernel, a file that is not a
  /// regular one), what is left is written from `bytes`. 0 or an errno, as
  /// write().
  [[nodiscard]] int copy(int from, std::uint64_t offset, std::string_view bytes) noexcept;

private:
  /// Counts `n` more bytes written, and starts the writeback of each
  /// writeback_bytes of them.
  void wrote(std::uint64_t n) noexcept;
  /// The largest piece the next write should be.
  [[nodiscard]] std::size_t piece(std::size_t left) const noexcept;
  int fd_;
  std::uint64_t written_ = 0;
  std::uint64_t started_ = 0; ///< bytes whose writeback was started
};

/// A file's fingerprint: "xxh3-64:" and the 16 hex digits of its bytes'
/// XXH3 64-bit hash (xxHash). bad_input_error when it cannot be read.
std::string fingerprint(const std::filesystem::path& file);

/// The fingerprints the manifest of `folder` records, by relative name (every
/// file shardpoint wrote, not the hard links it made); empty when it has none.
std::map<std::string, std::string> recorded_fingerprints(const std::filesystem::path& folder);

/// Writes `bytes` to `path` atomically.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Makes SIGINT, SIGTERM and SIGHUP remove the temporaries of every live
/// output before the process ends with the signal (it says so in one line on
/// stderr). Call once, before any other thread starts: it blocks these
/// signals in the calling thread and hands them to a thread of its own.
/// Programs that handle signals themselves (Python) should not call it.
void remove_temporaries_on_signals();

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_OUTPUTS_HPP
