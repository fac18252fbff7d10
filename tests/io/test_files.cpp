// The file policies (io/outputs.hpp, io/inputs.hpp, io/text.hpp): what may
// be written and read, and that a refusal or a failure touches nothing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/files.hpp>

#include "io_support.hpp"

namespace fs = std::filesystem;
namespace io = shardpoint::io;

namespace {

struct scratch {
  fs::path dir;
  scratch() {
    std::string t = (fs::temp_directory_path() / "shardpoint-io-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~scratch() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
  }
  fs::path operator/(const std::string& name) const { return dir / name; }
  // Every entry under the folder with its content: a tree "hash" a test can
  // compare before and after.
  std::map<std::string, std::string> tree() const {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const auto rel = e.path().lexically_relative(dir).string();
      if (e.is_symlink()) {
        out[rel] = "-> " + fs::read_symlink(e.path()).string();
      } else if (e.is_regular_file()) {
        std::ifstream in(e.path(), std::ios::binary);
        out[rel] = std::string(std::istreambuf_iterator<char>(in), {});
      } else {
        out[rel] = e.is_directory() ? "<dir>" : "<other>";
      }
    }
    return out;
  }
};

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string get(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

using io_test::error_of;

// Writes `files` into a new output folder `path` and commits.
void write_folder(const fs::path& path, const std::map<std::string, std::string>& files,
                  bool force = false) {
  io::output_set out;
  auto& f = out.folder(path, "--output-dir", force);
  for (const auto& [name, text] : files) {
    io::write_file_atomically(f.file(name), text);
  }
  out.commit();
}

struct in_folder { // runs a test from inside a folder, and back
  fs::path before = fs::current_path();
  explicit in_folder(const fs::path& p) { fs::current_path(p); }
  ~in_folder() { fs::current_path(before); }
};

} // namespace

TEST_CASE("a file is written whole, or not at all") {
  scratch s;
  io::write_file_atomically(s / "a.txt", "hello");
  CHECK(io::read_text_file(s / "a.txt", "test") == "hello");
  CHECK_THROWS_WITH_AS(io::write_atomically(s / "b.txt", [](int) { return EIO; }),
                       doctest::Contains("b.txt': write failed"), shardpoint::bad_input_error);
  CHECK_THROWS_AS(
      io::write_atomically(s / "c.txt", [](int) -> int { throw std::runtime_error("boom"); }),
      std::runtime_error);
  CHECK(s.tree() == std::map<std::string, std::string>{{"a.txt", "hello"}});
  CHECK_THROWS_WITH_AS(io::read_text_file(s / "none", "layout"),
                       doctest::Contains("none': no such layout file"),
                       shardpoint::bad_input_error);
}

TEST_CASE("file_writer writes every byte, across its writeback points, and says a failure") {
  scratch s;
  constexpr std::size_t mib = 1 << 20;
  // Pieces smaller than, straddling and several times the writeback step.
  const std::vector<std::size_t> sizes{1, 3 * mib + 7, 0, 9 * mib, 17 * mib + 3, 5};
  std::string expected;
  std::vector<std::string> pieces;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::string piece(sizes[k], '\0');
    for (std::size_t i = 0; i < piece.size(); ++i) {
      piece[i] = static_cast<char>((i * 131 + k * 7 + i / 4099) & 0xff);
    }
    expected += piece;
    pieces.push_back(std::move(piece));
  }
  io::write_atomically(s / "big.bin", [&](int fd) {
    io::file_writer out(fd);
    for (const auto& piece : pieces) {
      if (const int err = out.write(piece); err != 0) {
        return err;
      }
    }
    return 0;
  });
  std::ifstream in(s / "big.bin", std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written.size() == expected.size());
  CHECK(written == expected);

  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(full >= 0);
  CHECK(io::file_writer(full).write("x") == ENOSPC);
  ::close(full);
  const int read_only = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(read_only >= 0);
  CHECK(io::file_writer(read_only).write("x") == EBADF);
  CHECK(io::file_writer(read_only).write("") == 0); // nothing to write, nothing done
  ::close(read_only);
}

TEST_CASE("file_writer::copy: the kernel copies a file's bytes, or they are written") {
  scratch s;
  constexpr std::size_t mib = 1 << 20;
  std::string source(19 * mib + 5, '\0');
  for (std::size_t i = 0; i < source.size(); ++i) {
    source[i] = static_cast<char>((i * 37 + i / 8191) & 0xff);
  }
  put(s / "source.bin", source);
  const int from = ::open((s / "source.bin").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(from >= 0);
  // Whether this kernel and file system copy file to file at all: where
  // they do, copy() must (given bytes other than the file's, the output
  // shows which were written); where not, it writes the bytes given.
  bool kernel_copies = false;
  {
    const int probe = ::open((s / "probe.bin").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(probe >= 0);
    off64_t at = 0;
    kernel_copies = ::copy_file_range(from, &at, probe, nullptr, 4096, 0) == 4096;
    ::close(probe);
  }
  const std::size_t offset = 3 * mib + 11;
  const std::size_t length = 11 * mib + 3; // across writeback points
  const std::string other(length, 'x');    // "the file's bytes", not them
  int pipe_ends[2] = {-1, -1};
  REQUIRE(::pipe2(pipe_ends, O_CLOEXEC) == 0);
  io::write_atomically(s / "out.bin", [&](int fd) {
    io::file_writer out(fd);
    int err = out.write("head");
    err = err != 0 ? err : out.copy(from, offset, other);
    err = err != 0 ? err : out.write("middle");
    err = err != 0 ? err : out.copy(pipe_ends[0], 0, "from a pipe: written"); // EINVAL
    err = err != 0 ? err : out.copy(-1, 0, "no file: written");               // EBADF
    err = err != 0 ? err : out.copy(from, source.size() - 2, "end"); // 2 bytes left, then EOF
    return err;
  });
  ::close(pipe_ends[0]);
  ::close(pipe_ends[1]);
  const std::string copied = kernel_copies ? source.substr(offset, length) : other;
  const std::string end = kernel_copies ? source.substr(source.size() - 2) + "d" : "end";
  CHECK(get(s / "out.bin") ==
        "head" + copied + "middle" + "from a pipe: written" + "no file: written" + end);

  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(full >= 0);
  CHECK(io::file_writer(full).copy(from, 0, source.substr(0, 10)) == ENOSPC);
  ::close(full);
  ::close(from);
}

TEST_CASE("a replaced file keeps its mode; only regular files are replaced") {
  scratch s;
  put(s / "a.txt", "old");
  ::chmod((s / "a.txt").c_str(), 0640);
  io::write_file_atomically(s / "a.txt", "new");
  struct stat st {};
  REQUIRE(::stat((s / "a.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(get(s / "a.txt") == "new");

  // A read-only file is not replaced, by root either, nor through a set;
  // one its owner may write is.
  put(s / "kept.txt", "mine");
  ::chmod((s / "kept.txt").c_str(), 0444);
  const std::string read_only = "kept.txt': exists and is read-only (mode 0444); shardpoint does "
                                "not replace it: make it writable, or remove it";
  CHECK(error_of([&] { io::write_file_atomically(s / "kept.txt", "x"); }).find(read_only) !=
        std::string::npos);
  CHECK(error_of([&] {
          io::output_set set;
          set.file(s / "kept.txt", "--output-config");
        }).find(read_only) != std::string::npos);
  CHECK(get(s / "kept.txt") == "mine");
  ::chmod((s / "kept.txt").c_str(), 0244);
  io::write_file_atomically(s / "kept.txt", "x");
  CHECK(get(s / "kept.txt") == "x");

  REQUIRE(::mkfifo((s / "fifo").c_str(), 0600) == 0);
  fs::create_symlink(s / "a.txt", s / "link");
  fs::create_directory(s / "folder");
  const auto before = s.tree();
  CHECK(error_of([&] {
          io::write_file_atomically(s / "fifo", "x");
        }).find("fifo': exists and is a FIFO; shardpoint replaces only regular files") !=
        std::string::npos);
  CHECK(error_of([&] {
          io::write_file_atomically(s / "link", "x");
        }).find("link': exists and is a symbolic link") != std::string::npos);
  CHECK(error_of([&] {
          io::write_file_atomically(s / "folder", "x");
        }).find("folder': is a folder; give a file name") != std::string::npos);
  CHECK(error_of([&] {
          io::write_file_atomically("/dev/null", "x");
        }).find("'/dev/null': exists and is a device") != std::string::npos);
  CHECK(error_of([&] {
          io::write_file_atomically(s / "nowhere" / "a", "x");
        }).find("the output folder") != std::string::npos);
  // A name at NAME_MAX is written (its temporary's name is cut to fit); one
  // past it is refused in words.
  io::write_file_atomically(s / std::string(255, 'n'), "long");
  CHECK(get(s / std::string(255, 'n')) == "long");
  fs::remove(s / std::string(255, 'n'));
  CHECK(error_of([&] {
          io::write_file_atomically(s / std::string(256, 'n'), "x");
        }).find("its name is 256 bytes long; file names are at most 255") != std::string::npos);
  CHECK(s.tree() == before);
}

TEST_CASE("an output folder appears on commit, and not otherwise, with its manifest") {
  scratch s;
  {
    io::output_set out;
    auto& f = out.folder(s / "out", "--output-dir", false);
    io::write_file_atomically(f.file("x"), "1");
  } // not committed
  CHECK(s.tree().empty());
  write_folder(s / "out", {{"x", "1"}, {"sub/y", "2"}});
  CHECK(get(s / "out" / "x") == "1");
  CHECK(get(s / "out" / "sub" / "y") == "2");
  CHECK(get(s / "out" / io::manifest_name).find("\"sub/y\"") != std::string::npos);
  CHECK(error_of([&] {
          write_folder(s / "out", {{"z", "3"}});
        })
            .find("out': the output folder exists and is not empty (--force replaces a folder "
                  "shardpoint wrote)") != std::string::npos);
  // --force replaces shardpoint's own output, and only that.
  write_folder(s / "out", {{"z", "3"}}, true);
  CHECK(get(s / "out" / "z") == "3");
  CHECK_FALSE(fs::exists(s / "out" / "x"));
  CHECK_FALSE(fs::exists(s / "out" / "sub"));
  put(s / "out" / "notes.txt", "mine");
  const auto before = s.tree();
  CHECK(error_of([&] {
          write_folder(s / "out", {{"z", "4"}}, true);
        }).find("out': holds 'notes.txt', which shardpoint did not write") != std::string::npos);
  put(s / "theirs" / "a", "a");
  CHECK(error_of([&] {
          write_folder(s / "theirs", {{"z", "4"}}, true);
        }).find("holds no shardpoint manifest") != std::string::npos);
  CHECK(s.tree().size() == before.size() + 2);
  // A manifest of another form, or naming a file outside the folder, is
  // said to be one (a trial's read "holds no shardpoint manifest").
  for (const std::string manifest : {"garbage", R"({"files": ["../victim.json"]})"}) {
    put(s / "theirs" / io::manifest_name, manifest);
    CHECK(error_of([&] {
            write_folder(s / "theirs", {{"z", "4"}}, true);
          })
              .find("holds a manifest (.shardpoint-manifest.json) shardpoint did not write: not "
                    "its form, or naming a file outside the folder") != std::string::npos);
    CHECK(get(s / "theirs" / "a") == "a");
  }
  fs::remove(s / "theirs" / io::manifest_name);
  // An empty folder is used as it is; the trailing slash is the folder.
  fs::create_directory(s / "empty");
  write_folder(s / "empty/", {{"e", "5"}});
  CHECK(get(s / "empty" / "e") == "5");
  // Nothing is left beside the outputs.
  for (const auto& e : fs::directory_iterator(s.dir)) {
    CHECK(e.path().filename().string().find(".shardpoint-") == std::string::npos);
  }
}

TEST_CASE("a folder that appears while shardpoint writes it is left alone") {
  scratch s;
  io::output_set out;
  auto& f = out.folder(s / "out", "--output-dir", false);
  io::write_file_atomically(f.file("x"), "1");
  put(s / "out" / "theirs", "2"); // another program, meanwhile
  CHECK(error_of([&] { out.commit(); }).find("appeared while shardpoint was writing it") !=
        std::string::npos);
  CHECK(get(s / "out" / "theirs") == "2");
  CHECK_FALSE(fs::exists(s / "out" / "x"));
}

TEST_CASE("outputs never touch the inputs, the current folder, or each other") {
  scratch s;
  put(s / "model.onnx", "model");
  put(s / "shard.yaml", "config");
  put(s / "strategy" / "stage0.ckpt", "strategy");
  fs::create_hard_link(s / "model.onnx", s / "hard.onnx");
  fs::create_symlink(s / "model.onnx", s / "soft.onnx");
  fs::create_directories(s / "work" / "deeper");
  const auto before = s.tree();
  const auto refused = [&](const fs::path& path, bool folder, const std::string& why) {
    io::output_set out;
    out.input(s / "model.onnx", "the input model");
    out.input(s / "shard.yaml", "the sharding config");
    out.input_folder(s / "strategy", "the strategy folder");
    const auto message = error_of([&] {
      if (folder) {
        out.folder(path, "--output-dir", true);
      } else {
        out.file(path, "--output-model");
      }
    });
    CAPTURE(path);
    CHECK(message.find(why) != std::string::npos);
  };
  refused(s / "model.onnx", false, "is the input model");
  refused(s / "work" / ".." / "shard.yaml", false, "is the sharding config");
  refused(s / "hard.onnx", false, "is the input model"); // a hard link to it
  refused(s / "soft.onnx", false, "is the input model"); // a symbolic link to it
  refused(s / "soft.onnx" / "", false, "is the input model");
  refused(s / "strategy" / "x.onnx", false, "lies inside the strategy folder");
  refused(s.dir, true, "holds the input model");
  refused(s.dir / "", true, "holds the input model");
  refused(s / "strategy", true, "is the strategy folder");
  refused(s / "strategy" / "ranks", true, "lies inside the strategy folder");
  refused("/", true, "is the root folder");
  {
    in_folder here(s / "work" / "deeper");
    refused(".", true, "is the current folder");
    refused("./", true, "is the current folder");
    refused("..", true, "holds the current folder");
    refused("../..", true, "holds the current folder");
  }
  {
    io::output_set out;
    out.folder(s / "out", "--output-dir", false);
    CHECK(error_of([&] {
            out.file(s / "out" / "layout.yaml", "--layout-out");
          }).find("lies inside --output-dir") != std::string::npos);
    CHECK(error_of([&] { out.folder(s / "out", "--other", false); }).find("is --output-dir") !=
          std::string::npos);
  }
  {
    io::output_set out;
    out.file(s / "a.yaml", "--output-config");
    CHECK(error_of([&] { out.file(s / "a.yaml", "--output-model"); }).find("is --output-config") !=
          std::string::npos);
    // An input declared after the output is checked as well, once it is
    // there; one that is not protects nothing (its reader says it is not).
    CHECK_NOTHROW(out.input(s / "a.yaml", "the layout file"));
    io::write_file_atomically(s / "a.yaml", "a user's layout\n");
    CHECK(error_of([&] {
            out.input(s / "a.yaml", "the layout file");
          }).find("a.yaml': is the layout file") != std::string::npos);
    fs::remove(s / "a.yaml");
  }
  CHECK(s.tree() == before);
}

TEST_CASE("a path the kernel cannot resolve is refused, not guessed at by its text") {
  // canonical_of fell back to the path's text when it could not be
  // resolved: "loop/../x" collapsed to "./x", the file next to the loop,
  // which the kernel would never open.
  scratch s;
  put(s / "x.onnx", "a user's file");
  fs::create_symlink("loop", s / "loop");
  fs::create_symlink("b", s / "a");
  fs::create_symlink("a", s / "b");
  const auto before = s.tree();
  for (const fs::path& path : {s / "loop" / ".." / "x.onnx", s / "a" / "out.onnx", s / "loop"}) {
    CAPTURE(path);
    for (const bool folder : {false, true}) {
      io::output_set out;
      const auto message = error_of([&] {
        if (folder) {
          out.folder(path, "--output-dir", true);
        } else {
          out.file(path, "--output-model");
        }
      });
      CHECK(message.find("cannot be resolved: Too many levels of symbolic links") !=
            std::string::npos);
    }
    io::output_set in;
    CHECK(error_of([&] {
            in.input_folder(path, "the strategy folder");
          }).find("cannot be resolved") != std::string::npos);
    // An input the kernel cannot open protects nothing: its reader says so.
    CHECK_NOTHROW(in.input(path, "the input model"));
  }
  CHECK(s.tree() == before);
  CHECK(get(s / "x.onnx") == "a user's file");
}

TEST_CASE("several outputs are committed together, or none") {
  scratch s;
  put(s / "b.yaml", "old");
  {
    io::output_set out;
    const auto& a = out.file(s / "a.yaml", "--output-config");
    const auto& b = out.file(s / "b.yaml", "--output-model");
    io::write_file_atomically(a.staging(), "new a");
    io::write_file_atomically(b.staging(), "new b");
    // ... and the command fails before commit()
  }
  CHECK(s.tree() == std::map<std::string, std::string>{{"b.yaml", "old"}});
  io::output_set out;
  const auto& a = out.file(s / "a.yaml", "--output-config");
  const auto& b = out.file(s / "b.yaml", "--output-model");
  io::write_file_atomically(a.staging(), "new a");
  io::write_file_atomically(b.staging(), "new b");
  out.commit();
  CHECK(s.tree() == std::map<std::string, std::string>{{"a.yaml", "new a"}, {"b.yaml", "new b"}});
}

TEST_CASE("a link retargeted while a command runs: outputs go where they were checked to go") {
  // A trial retargeted a link between the checks and the writes (strace's
  // delays): shard wrote over its input, split --force replaced a user's
  // folder, a failed rename left its temporary behind. Outputs are now put
  // where the checks resolved them, every link followed then.
  scratch s;
  put(s / "c" / "x" / ".keep", "");
  put(s / "d" / "x" / ".keep", "");
  put(s / "d" / "in.onnx", "the input");
  put(s / "d" / "out" / "keep.txt", "a user's file");
  fs::create_symlink("c/x", s / "view");
  io::output_set out;
  out.input(s / "d" / "in.onnx", "the input model");
  const auto& f = out.file(s / "view" / ".." / "in.onnx", "--output-model"); // c/in.onnx
  auto& d = out.folder(s / "view" / ".." / "out", "--output-dir", true);     // c/out, new
  io::write_file_atomically(f.staging(), "the output");
  io::write_file_atomically(d.file("a"), "1");
  fs::remove(s / "view");
  fs::create_symlink("d/x", s / "view"); // view/.. is d/ now, the input's folder
  out.commit();
  CHECK(get(s / "c" / "in.onnx") == "the output");
  CHECK(get(s / "c" / "out" / "a") == "1");
  CHECK(get(s / "d" / "in.onnx") == "the input");
  CHECK(get(s / "d" / "out" / "keep.txt") == "a user's file");
  CHECK_FALSE(fs::exists(s / "d" / "out" / "a"));
  for (const char* folder : {"c", "d"}) { // no temporary left in either
    for (const auto& e : fs::directory_iterator(s / folder)) {
      CHECK(e.path().filename().string().find(".shardpoint-") == std::string::npos);
    }
  }
}

TEST_CASE("inputs: regular files only; external data confined to the model's folder") {
  scratch s;
  put(s / "m" / "model.onnx", "m");
  put(s / "m" / "w.bin", "w");
  put(s / "m" / "sub" / "x.bin", "x");
  put(s / "secret", "s");
  fs::create_symlink(s / "secret", s / "m" / "out.bin");
  fs::create_symlink("sub/x.bin", s / "m" / "in.bin");
  REQUIRE(::mkfifo((s / "m" / "pipe").c_str(), 0600) == 0);
  const fs::path dir = s / "m";
  CHECK(io::external_data_file(dir, "w.bin", "t") == fs::canonical(dir / "w.bin"));
  CHECK(io::external_data_file(dir, "sub/x.bin", "t") == fs::canonical(dir / "sub" / "x.bin"));
  CHECK(io::external_data_file(dir, "in.bin", "t") == fs::canonical(dir / "sub" / "x.bin"));
  const auto refused = [&](const std::string& location, const std::string& why) {
    CAPTURE(location);
    CHECK(error_of([&] {
            io::external_data_file(dir, location, "w");
          }).find("tensor 'w': its external data location") != std::string::npos);
    CHECK(error_of([&] { io::external_data_file(dir, location, "w"); }).find(why) !=
          std::string::npos);
  };
  refused("/etc/passwd", "is absolute");
  refused("../secret", "holds '..'");
  refused("sub/../../secret", "holds '..'");
  refused("out.bin", "leaves the model's folder through a symbolic link");
  refused("missing.bin", "names no file in the model's folder");
  refused("pipe", "is a FIFO; external data must be a regular file");
  refused("sub", "is a folder; external data must be a regular file");
  refused("", "is empty");
  CHECK(error_of([&] {
          io::require_regular_file(dir / "pipe", "model");
        }).find("pipe': the model is a FIFO, not a regular file") != std::string::npos);
  CHECK(error_of([&] {
          io::require_regular_file(dir / "sub", "model");
        }).find("sub': is a directory, not a model") != std::string::npos);
  CHECK(error_of([&] {
          io::read_text_file("/dev/zero", "sharding config");
        }).find("is a device, not a regular file") != std::string::npos);
}

TEST_CASE("text: escapes keep one line and valid UTF-8, quotes are cut") {
  CHECK(io::is_utf8("abc \xc3\xa9"));
  CHECK_FALSE(io::is_utf8("a\xff"));
  CHECK(io::utf8_escaped("a\xff\n") == "a\\xff\n");
  CHECK(io::printable("a\xff\n\t\x1b") == "a\\xff\\n\\t\\x1b");
  // Bidirectional overrides and C1 controls, which reorder or hide what
  // follows them on a terminal, are escaped; other characters are kept.
  CHECK(io::printable("na\u202eme\u2066x\u0085") == "na\\u202eme\\u2066x\\u0085");
  CHECK(io::quote("caf\u00e9 \u4e2d") == "'caf\u00e9 \u4e2d'");
  CHECK(io::quote("abc") == "'abc'");
  const std::string long_name(1000, 'x');
  CHECK(io::quote(long_name) == "'" + std::string(200, 'x') + "'... (1000 bytes)");
  // Cut at a character boundary, never inside one.
  std::string accents;
  for (int i = 0; i < 150; ++i) {
    accents += "\xc3\xa9";
  }
  const auto q = io::quote(accents);
  CHECK(io::is_utf8(q));
  CHECK(q.find("... (300 bytes)") != std::string::npos);
  CHECK(io::quote(std::string("a\0b", 3)) == "'a\\x00b'");
  // Character by character: the escape of a string is its characters'
  // escapes (and those of the bytes that start none) put together, whatever
  // runs they come in. Random strings of printable ASCII, controls, DEL,
  // multibyte characters, invisible ones, and bytes that begin no character
  // however they are followed (0x80, 0xC0, 0xFF), against this table.
  struct piece {
    std::string raw, printable, utf8_escaped;
  };
  const std::vector<piece> pieces = {{"a", "a", "a"},
                                     {"Z", "Z", "Z"},
                                     {" ", " ", " "},
                                     {"~", "~", "~"},
                                     {"\\", "\\", "\\"},
                                     {"\n", "\\n", "\n"},
                                     {"\t", "\\t", "\t"},
                                     {"\x1b", "\\x1b", "\x1b"},
                                     {std::string(1, '\0'), "\\x00", std::string(1, '\0')},
                                     {"\x7f", "\\x7f", "\x7f"},
                                     {"\xc3\xa9", "\xc3\xa9", "\xc3\xa9"},
                                     {"\xe4\xb8\xad", "\xe4\xb8\xad", "\xe4\xb8\xad"},
                                     {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
                                     {"\u202e", "\\u202e", "\u202e"},
                                     {"\u0085", "\\u0085", "\u0085"},
                                     {"\x80", "\\x80", "\\x80"},
                                     {"\xc0", "\\xc0", "\\xc0"},
                                     {"\xff", "\\xff", "\\xff"}};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    std::string printed;
    std::string escaped;
    bool valid = true;
    const auto n = std::uniform_int_distribution<int>(0, 40)(rng);
    for (int k = 0; k < n; ++k) {
      const auto& p = pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
      text += p.raw;
      printed += p.printable;
      escaped += p.utf8_escaped;
      valid = valid && p.raw == p.utf8_escaped;
    }
    CAPTURE(text);
    CHECK(io::printable(text) == printed);
    CHECK(io::is_utf8(text) == valid);
    CHECK(io::utf8_escaped(text) == (valid ? text : escaped));
  }
}
