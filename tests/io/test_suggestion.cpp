// What `suggest` prints of a split against its memory cap.
#include <doctest/doctest.h>

#include <shardpoint/io/suggestion.hpp>

namespace io = shardpoint::io;

namespace {

// A split of one stage holding `bytes` of parameters.
io::named_split holding(std::string name, double bytes) {
  io::named_split s;
  s.name = std::move(name);
  shardpoint::group_metrics g;
  g.id = 0;
  g.vertices = 1;
  g.cost = 1;
  g.load = 1;
  g.memory = bytes;
  s.metrics.stages.push_back(g);
  s.metrics.bottleneck = 1;
  s.metrics.lower_bound = 1;
  return s;
}

// The table's line of the baseline named `name`.
std::string line_of(const std::string& table, const std::string& name) {
  const auto at = table.find("\n" + name);
  REQUIRE(at != std::string::npos);
  return table.substr(at + 1, table.find('\n', at + 1) - at - 1);
}

} // namespace

TEST_CASE("a baseline over the cap by less than the rounding says by how much, in bytes") {
  io::suggestion s;
  s.cost_model = "params";
  s.memory_capacity = 3072;
  s.plan = holding("shardpoint", 3000);
  s.baselines = {holding("just over", 3080), holding("well over", 8192), holding("within", 3072)};
  const std::string table = io::to_table(s);
  CHECK(line_of(table, "just over")
            .ends_with("3.0 KiB over the memory cap (3080 bytes, the cap "
                       "3072)"));
  CHECK(line_of(table, "well over").ends_with("8.0 KiB over the memory cap"));
  CHECK(line_of(table, "within").ends_with("3.0 KiB "));
}
