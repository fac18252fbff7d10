// The memory planner's options, declared once (app::memory_plan_options):
// the command line offers each under its flag with its choices, the Python
// package takes each under its keyword, and the documentation names each.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

#include <CLI/CLI.hpp>

#include "options.hpp"

namespace app = shardpoint::app;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE("every memory plan option is on the command line, with its choices") {
  CLI::App cmd{"test"};
  app::memory_flags f;
  shardpoint::cli::add_to(cmd, f);
  for (const auto& o : app::memory_plan_options) {
    CAPTURE(o.flag);
    const CLI::Option* added = cmd.get_option_no_throw(std::string(o.flag));
    REQUIRE(added != nullptr);
    CHECK(added->get_description() == o.help);
    CHECK((o.text != nullptr) != (o.set != nullptr)); // a value or a flag, never both
    for (const auto& choice : app::choices_of(o)) {
      // Each choice parses into its field, and config() takes it.
      CLI::App one{"test"};
      app::memory_flags g;
      shardpoint::cli::add_to(one, g);
      CAPTURE(choice);
      CHECK_NOTHROW(one.parse(std::vector<std::string>{choice, std::string(o.flag)}));
      CHECK(g.*o.text == choice);
      CHECK_NOTHROW((void)g.config());
    }
  }
  // A value outside the choices is refused as it is parsed, and by config()
  // for the callers that do not parse a command line.
  CHECK_THROWS_AS(cmd.parse(std::vector<std::string>{"adagrad", "--optimizer"}),
                  CLI::ValidationError);
  app::memory_flags bad;
  bad.schedule = "zb-h1";
  CHECK_THROWS_WITH_AS((void)bad.config(), "--schedule 'zb-h1' is not one of gpipe, 1f1b",
                       shardpoint::bad_parameter_error);
}

TEST_CASE("the documentation and the Python package name every memory plan option") {
  const std::string docs = read(SHARDPOINT_SOURCE_DIR "/docs/memory-model.md");
  const std::string python = read(SHARDPOINT_SOURCE_DIR "/python/shardpoint/__init__.py");
  REQUIRE_FALSE(docs.empty());
  REQUIRE_FALSE(python.empty());
  for (const auto& o : app::memory_plan_options) {
    CAPTURE(o.flag);
    CHECK(docs.find(std::string(o.flag)) != std::string::npos);
    if (!o.keyword.empty()) {
      CHECK(python.find("``" + std::string(o.keyword) + "``") != std::string::npos);
    }
  }
}
