// Exceptions to exit codes, in the one place the program maps them: by
// category, and an unexpected exception is a bug (4), never "bad input".
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>
#include <stdexcept>

#include "exit_codes.hpp"

using namespace shardpoint::cli;

namespace {

// The exit code and the line printed for `e` thrown.
template <class E>
std::pair<int, std::string> mapped(const E& e) {
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  int code = -1;
  try {
    throw e;
  } catch (...) {
    code = report_current_exception();
  }
  std::cerr.rdbuf(old);
  return {code, captured.str()};
}

} // namespace

TEST_CASE("each category has its code and its one line") {
  CHECK(mapped(usage_error("give X")) == std::pair{1, std::string("shardpoint: usage: give X\n")});
  CHECK(mapped(check_failed("cannot run")) ==
        std::pair{3, std::string("shardpoint: cannot run\n")});
  CHECK(mapped(shardpoint::bad_input_error("'m.onnx': no such file")) ==
        std::pair{2, std::string("shardpoint: error: 'm.onnx': no such file\n")});
  CHECK(mapped(shardpoint::bad_parameter_error("stages must be positive")).first == 2);
  CHECK(mapped(shardpoint::unsupported_error("over 2 GiB")).first == 2);
  CHECK(mapped(shardpoint::cycle_error("a cycle")).first == 2);
  CHECK(mapped(shardpoint::invalid_sharding_error("stage 2 is empty")) ==
        std::pair{3, std::string("shardpoint: error: stage 2 is empty\n")});
  CHECK(mapped(shardpoint::internal_error("broken invariant")) ==
        std::pair{4, std::string("shardpoint: internal error: broken invariant\n")});
}

TEST_CASE("an exception shardpoint did not mean to throw is a bug, exit 4") {
  const auto [code, line] = mapped(std::out_of_range("vector::_M_range_check"));
  CHECK(code == 4);
  CHECK(line == "shardpoint: internal error: vector::_M_range_check (a bug: please report it with "
                "the command line)\n");
  CHECK(mapped(std::logic_error("x")).first == 4);
  CHECK(mapped(42).first == 4);
}
