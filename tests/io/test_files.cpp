// Atomic files and folders: on failure nothing is left.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <shardpoint/error.hpp>
#include <shardpoint/io/files.hpp>

namespace fs = std::filesystem;
namespace io = shardpoint::io;

namespace {

struct scratch {
  fs::path dir;
  scratch() {
    std::string t = (fs::temp_directory_path() / "shardpoint-io-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~scratch() { fs::remove_all(dir); }
  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
  }
};

} // namespace

TEST_CASE("a file is written whole, or not at all") {
  scratch s;
  io::write_file_atomically(s.dir / "a.txt", "hello");
  CHECK(io::read_text_file(s.dir / "a.txt", "test") == "hello");
  CHECK_THROWS_WITH_AS(io::write_atomically(s.dir / "b.txt", [](int) { return EIO; }),
                       doctest::Contains("b.txt': write failed"), shardpoint::bad_input_error);
  CHECK_THROWS_AS(
      io::write_atomically(s.dir / "c.txt", [](int) -> int { throw std::runtime_error("boom"); }),
      std::runtime_error);
  CHECK(s.entries() == 1);
  CHECK_THROWS_WITH_AS(io::read_text_file(s.dir / "none", "layout"),
                       doctest::Contains("none': no such layout file"),
                       shardpoint::bad_input_error);
}

TEST_CASE("a folder appears on commit, and not otherwise") {
  scratch s;
  {
    io::folder_transaction t(s.dir / "out");
    std::ofstream(t.path("x")) << "1";
  }
  CHECK(s.entries() == 0);
  {
    io::folder_transaction t(s.dir / "out");
    std::ofstream(t.path("x")) << "1";
    t.commit();
  }
  CHECK(io::read_text_file(s.dir / "out" / "x", "test") == "1");
  CHECK_THROWS_WITH_AS(io::folder_transaction(s.dir / "out"),
                       doctest::Contains("exists and is not empty"), shardpoint::bad_input_error);
  {
    io::folder_transaction t(s.dir / "out", true);
    std::ofstream(t.path("y")) << "2";
    t.commit();
  }
  CHECK(fs::exists(s.dir / "out" / "y"));
  CHECK_FALSE(fs::exists(s.dir / "out" / "x"));
  CHECK(s.entries() == 1);
}
