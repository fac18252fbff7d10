// evaluate() against a reference that recomputes every figure from sets.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include <boost/property_map/property_map.hpp>

#include "support.hpp"

using shardpoint::sharding_result;

namespace {

struct expected_group {
  std::size_t vertices = 0;
  double cost = 0;
  double memory = 0;
  double received = 0;
  std::size_t producers = 0;
  std::size_t in = 0;
  std::size_t out = 0;
  std::size_t backward = 0;
};

std::map<int, expected_group> reference(const test::edge_list& edges, const std::vector<int>& group,
                                        const std::vector<double>& cost,
                                        const std::vector<double>& memory,
                                        const std::vector<double>& bytes) {
  std::map<int, expected_group> out;
  for (std::size_t v = 0; v < group.size(); ++v) {
    auto& x = out[group[v]];
    ++x.vertices;
    x.cost += cost[v];
    x.memory += memory[v];
  }
  std::map<int, std::set<std::size_t>> received;
  for (auto [u, v] : edges) {
    if (group[u] != group[v]) {
      ++out[group[u]].out;
      ++out[group[v]].in;
      out[group[v]].backward += group[v] < group[u];
      received[group[v]].insert(u);
    }
  }
  for (const auto& [g, producers] : received) {
    for (auto u : producers) {
      out[g].received += bytes[u];
    }
    out[g].producers = producers.size();
  }
  return out;
}

} // namespace

TEST_CASE("every figure, on random graphs and partitions") {
  shardpoint::synthetic::splitmix64 rng(7);
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const auto d = shardpoint::synthetic::random_dag(2 + seed % 20, seed % 40, seed);
    const test::edge_list edges(d.edges.begin(), d.edges.end());
    const auto g = test::make_graph(d.num_vertices, edges);
    const std::size_t n = d.num_vertices;
    const int groups = 1 + static_cast<int>(rng.below(4));
    std::vector<int> stage(n);
    std::vector<int> device(n);
    std::vector<double> cost(n);
    std::vector<double> memory(n);
    std::vector<double> bytes(n);
    for (std::size_t v = 0; v < n; ++v) {
      stage[v] = static_cast<int>(rng.below(static_cast<std::uint64_t>(groups)));
      device[v] = static_cast<int>(rng.below(2));
      cost[v] = static_cast<double>(rng.below(50));
      memory[v] = static_cast<double>(rng.below(1000));
      bytes[v] = static_cast<double>(rng.below(100));
    }
    const sharding_result r(n, device, stage);
    const auto index = get(boost::vertex_index, g);
    const auto map = [&](const std::vector<double>& v) {
      return boost::make_iterator_property_map(v.begin(), index);
    };
    const double w = 0.5;
    const auto m =
        shardpoint::evaluate(g, r, map(cost), map(memory), map(bytes), {.communication_weight = w});
    CAPTURE(seed);
    for (const auto& [list, values] :
         {std::pair{&m.stages, &stage}, std::pair{&m.devices, &device}}) {
      const auto want = reference(edges, *values, cost, memory, bytes);
      for (const auto& x : *list) {
        const auto it = want.find(x.id);
        const expected_group e = it == want.end() ? expected_group{} : it->second;
        CHECK(x.vertices == e.vertices);
        CHECK(x.cost == e.cost);
        CHECK(x.memory == e.memory);
        CHECK(x.received_bytes == e.received);
        CHECK(x.received_producers == e.producers);
        CHECK(x.edges_in == e.in);
        CHECK(x.edges_out == e.out);
        CHECK(x.backward_edges_in == e.backward);
        CHECK(x.load == e.cost + w * e.received);
      }
    }
    double most = 0;
    double sum = 0;
    double total = 0;
    double largest = 0;
    std::size_t cut = 0;
    std::size_t backward = 0;
    for (const auto& x : m.stages) {
      most = std::max(most, x.load);
      sum += x.load;
      cut += x.edges_in;
      backward += x.backward_edges_in;
    }
    for (double c : cost) {
      total += c;
      largest = std::max(largest, c);
    }
    CHECK(std::string(m.partition) == "stage");
    CHECK(m.bottleneck == most);
    CHECK(m.edges_cut == cut);
    CHECK(m.backward_edges == backward);
    CHECK(m.total_cost == total);
    CHECK(m.mean_load == doctest::Approx(sum / static_cast<double>(m.stages.size())));
    CHECK(m.lower_bound == std::max(total / static_cast<double>(m.stages.size()), largest));
  }
}

TEST_CASE("defaults: unit costs, no memory, no bytes; devices when there are no stages") {
  const auto g = test::make_graph(4, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  const auto m = shardpoint::evaluate(g, sharding_result(4, {0, 0, 1, 1}, {}));
  CHECK(std::string(m.partition) == "device");
  REQUIRE(m.devices.size() == 2);
  CHECK(m.stages.empty());
  CHECK(m.devices[1].cost == 2);
  CHECK(m.devices[1].received_producers == 2); // vertices 1 and 0, once each
  CHECK(m.devices[1].received_bytes == 0);
  CHECK(m.edges_cut == 2);
  CHECK(m.bottleneck == 2);
  CHECK(m.imbalance == 1);
  CHECK(m.lower_bound == 2);
  CHECK_THROWS_AS(shardpoint::evaluate(g, sharding_result(3, {0, 0, 1}, {})),
                  shardpoint::size_mismatch_error);
}

TEST_CASE("a stage gap counts as an empty group") {
  const auto g = test::make_graph(2, {{0, 1}});
  const auto m = shardpoint::evaluate(g, sharding_result(2, {}, {0, 2}));
  REQUIRE(m.stages.size() == 3);
  CHECK(m.stages[1].vertices == 0);
  CHECK(m.mean_load == doctest::Approx(2.0 / 3));
  CHECK(m.imbalance == doctest::Approx(1.5));
}

// Shared items (memory_items): each counted once in every group a vertex of
// which uses it, against sets; up to 100 groups, past the 64 a word holds.
TEST_CASE("shared memory items: once per group, on random partitions of up to 100 groups") {
  shardpoint::synthetic::splitmix64 rng(11);
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const auto d = shardpoint::synthetic::random_dag(2 + seed % 150, seed % 300, seed);
    const test::edge_list edges(d.edges.begin(), d.edges.end());
    const auto g = test::make_graph(d.num_vertices, edges);
    const std::size_t n = d.num_vertices;
    const auto groups = 1 + rng.below(seed % 3 == 0 ? 100 : 8);
    const auto items = rng.below(20);
    shardpoint::memory_items memory;
    for (std::uint64_t i = 0; i < items; ++i) {
      memory.bytes.push_back(static_cast<double>(rng.below(1U << 20)));
    }
    memory.used.resize(n);
    std::vector<int> stage(n);
    for (std::size_t v = 0; v < n; ++v) {
      stage[v] = static_cast<int>(rng.below(groups));
      for (std::uint64_t k = items == 0 ? 0 : rng.below(4); k > 0; --k) {
        memory.used[v].push_back(static_cast<std::uint32_t>(rng.below(items))); // repeats too
      }
    }
    std::map<int, std::set<std::uint32_t>> held;
    for (std::size_t v = 0; v < n; ++v) {
      held[stage[v]].insert(memory.used[v].begin(), memory.used[v].end());
    }
    const std::vector<double> zero(n, 0.0);
    const auto index = get(boost::vertex_index, g);
    const auto none = boost::make_iterator_property_map(zero.begin(), index);
    const auto m = shardpoint::evaluate(g, sharding_result(n, {}, stage), none, memory, none, {});
    CAPTURE(seed);
    for (const auto& x : m.stages) {
      double want = 0;
      for (auto it : held[x.id]) {
        want += memory.bytes[it];
      }
      CHECK(x.memory == want);
    }
  }
}
