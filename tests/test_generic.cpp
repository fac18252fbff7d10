// The same procedure on every kind of graph: Boost's adjacency_list (vecS,
// bidirectional, listS with an explicit index map), compressed_sparse_row_graph,
// and a graph type that is not Boost's; plus the property-map output overload
// and the concept requirements.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/property_map/vector_property_map.hpp>

#include "custom_graph/custom_graph.hpp"
#include "support.hpp"

namespace {

// A fixed, non-trivial DAG whose index order is not topological.
const std::size_t n = 9;
const test::edge_list edges{{8, 0}, {0, 1}, {1, 2}, {8, 3}, {3, 4},
                            {4, 2}, {2, 5}, {5, 6}, {6, 7}, {3, 6}};
const std::vector<test::point> points{{1, 0, 0}, {4, 1, 0}, {5, 2, 1}};

shardpoint::sharding_result expected() {
  return shardpoint::manual_shard(test::make_graph(n, edges), points);
}

} // namespace

TEST_CASE("the expectation is the reference's") {
  const test::reference ref(n, edges);
  CHECK(test::devices_of(expected()) == ref.run(points, 0));
  CHECK(test::stages_of(expected()) == ref.run(points, 1));
}

TEST_CASE("adjacency_list<vecS, vecS, bidirectionalS>") {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS> g(n);
  for (auto [u, v] : edges) {
    add_edge(u, v, g);
  }
  CHECK(shardpoint::manual_shard(g, points) == expected());
}

// The fixed DAG as a listS graph with names; its index map and points.
struct named_lists {
  struct node {
    std::string name;
  };
  using graph = boost::adjacency_list<boost::listS, boost::listS, boost::directedS, node>;
  using vertex = graph::vertex_descriptor;
  graph g;
  std::vector<vertex> vs;
  std::map<vertex, std::size_t> index;
  std::vector<shardpoint::sharding_point<vertex>> pts;

  named_lists() {
    for (std::size_t i = 0; i < n; ++i) {
      vs.push_back(add_vertex(node{"n" + std::to_string(i)}, g));
      index[vs.back()] = i;
    }
    for (auto [u, v] : edges) {
      add_edge(vs[u], vs[v], g);
    }
    for (const auto& p : points) {
      pts.push_back({vs[p.vertex], p.device, p.stage});
    }
  }
  auto index_map() const {
    return boost::const_associative_property_map<std::map<vertex, std::size_t>>(index);
  }
  auto name_map() const { return get(&node::name, g); }
};

TEST_CASE("adjacency_list<listS, listS> with an explicit index map and names") {
  named_lists l;
  const auto& g = l.g;
  auto& pts = l.pts;
  const auto index_map = l.index_map();
  CHECK(shardpoint::manual_shard(g, pts, index_map) == expected());

  const auto names = l.name_map();
  CHECK(shardpoint::manual_shard(g, pts, index_map, names) == expected());
  pts.push_back(pts.front());
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(g, pts, index_map, names),
                       "shardpoint: vertex 1 ('n1') is listed as a sharding point more than once",
                       shardpoint::duplicate_point_error);
}

TEST_CASE("compressed_sparse_row_graph") {
  using csr = boost::compressed_sparse_row_graph<boost::directedS>;
  const csr g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);
  std::vector<shardpoint::sharding_point<csr::vertex_descriptor>> pts;
  for (const auto& p : points) {
    pts.push_back({static_cast<csr::vertex_descriptor>(p.vertex), p.device, p.stage});
  }
  CHECK(shardpoint::manual_shard(g, pts) == expected());
}

TEST_CASE("a graph type that is not Boost's") {
  mygraph::dag g{std::vector<std::vector<std::uint32_t>>(n)};
  for (auto [u, v] : edges) {
    g.successors[u].push_back(static_cast<std::uint32_t>(v));
  }
  std::vector<shardpoint::sharding_point<std::uint32_t>> pts;
  for (const auto& p : points) {
    pts.push_back({static_cast<std::uint32_t>(p.vertex), p.device, p.stage});
  }
  CHECK(shardpoint::manual_shard(g, pts) == expected());
  CHECK(shardpoint::validate(g, expected()) ==
        shardpoint::validate(test::make_graph(n, edges), expected()));
}

TEST_CASE("the BGL way: results written into property maps") {
  const auto g = test::make_graph(n, edges);
  std::vector<int> device(n, -7);
  std::vector<int> stage(n, -7);
  const auto index = get(boost::vertex_index, g);
  shardpoint::manual_shard(g, points, index,
                           boost::make_iterator_property_map(device.begin(), index),
                           boost::make_iterator_property_map(stage.begin(), index));
  CHECK(device == test::devices_of(expected()));
  CHECK(stage == test::stages_of(expected()));

  SUBCASE("a map whose attribute no point carries is not written") {
    std::vector<int> untouched(n, -7);
    shardpoint::manual_shard(g, std::vector<test::point>{{1, 0, std::nullopt}}, index,
                             boost::make_iterator_property_map(device.begin(), index),
                             boost::make_iterator_property_map(untouched.begin(), index));
    CHECK(untouched == std::vector<int>(n, -7));
  }
  SUBCASE("on an error no map is written") {
    std::vector<int> d(n, -7);
    std::vector<int> s(n, -7);
    CHECK_THROWS_AS(shardpoint::manual_shard(g, std::vector<test::point>{{1, 0, 0}, {1, 1, 1}},
                                             index,
                                             boost::make_iterator_property_map(d.begin(), index),
                                             boost::make_iterator_property_map(s.begin(), index)),
                    shardpoint::duplicate_point_error);
    CHECK(d == std::vector<int>(n, -7));
    CHECK(s == std::vector<int>(n, -7));
  }
}

// The requirements, as concepts: satisfied by graphs, not by other types, and
// a short "constraints not satisfied" instead of a page of template errors.
static_assert(shardpoint::sharding_graph<test::graph>);
static_assert(shardpoint::sharding_graph<mygraph::dag>);
static_assert(shardpoint::sharding_graph<boost::compressed_sparse_row_graph<boost::directedS>>);
static_assert(!shardpoint::sharding_graph<int>);
static_assert(!shardpoint::sharding_graph<std::vector<int>>);
static_assert(!shardpoint::sharding_graph<std::string>);
static_assert(shardpoint::indexed_graph<test::graph>);
static_assert(!shardpoint::sharding_point_range<std::vector<int>, test::graph>);
static_assert(shardpoint::sharding_point_range<std::vector<test::point>, test::graph>);

template <class G>
concept can_shard = requires(const G& g, const std::vector<test::point>& p) {
  shardpoint::manual_shard(g, p);
};
static_assert(can_shard<test::graph>);
static_assert(!can_shard<int>);
static_assert(!can_shard<std::vector<std::vector<int>>>);

TEST_CASE("points of another integer type, and a braced list of points") {
  const auto g = test::make_graph(n, edges);
  const std::vector<shardpoint::sharding_point<int>> ints{{1, 0, 0}, {4, 1, 0}, {5, 2, 1}};
  CHECK(shardpoint::manual_shard(g, ints) == expected());
  CHECK(shardpoint::manual_shard(g, {{1, 0, 0}, {4, 1, 0}, {5, 2, 1}}) == expected());
  // A negative int is no vertex: reported, not wrapped around silently.
  CHECK_THROWS_AS(
      shardpoint::manual_shard(g, std::vector<shardpoint::sharding_point<int>>{{-1, 0, 0}}),
      shardpoint::vertex_out_of_range_error);
}

TEST_CASE("indexed(g, index, names) serves every entry point") {
  named_lists l;
  using graph = named_lists::graph;
  static_assert(!shardpoint::indexed_graph<graph>); // and no hard error asking
  const auto view = shardpoint::indexed(l.g, l.index_map(), l.name_map());
  static_assert(shardpoint::sharding_graph<decltype(view)>);
  static_assert(shardpoint::indexed_graph<decltype(view)>);
  const auto& pts = l.pts;
  const auto r = shardpoint::manual_shard(view, pts);
  CHECK(r == expected());
  const auto by_view = shardpoint::validate(view, r, {.num_devices = 1});
  const auto plain =
      shardpoint::validate(test::make_graph(n, edges), expected(), {.num_devices = 1});
  REQUIRE(by_view.size() == plain.size());
  REQUIRE_FALSE(by_view.empty());
  CHECK(by_view[0].rule == plain[0].rule);
  CHECK(shardpoint::evaluate(view, r).bottleneck ==
        shardpoint::evaluate(test::make_graph(n, edges), expected()).bottleneck);
  CHECK_THROWS_WITH_AS(shardpoint::manual_shard(view, std::vector{pts[0], pts[0]}),
                       "shardpoint: vertex 1 ('n1') is listed as a sharding point more than once",
                       shardpoint::duplicate_point_error);
}

static_assert(!shardpoint::indexed_graph<
              boost::adjacency_list<boost::vecS, boost::listS, boost::bidirectionalS>>);
static_assert(shardpoint::indexed_graph<
              boost::adjacency_list<boost::vecS, boost::listS, boost::directedS,
                                    boost::property<boost::vertex_index_t, std::size_t>>>);
