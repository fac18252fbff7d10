// Shared helpers of the core tests: graph types, builders and the reference
// implementation the randomised tests compare against.
#ifndef SHARDPOINT_TESTS_SUPPORT_HPP
#define SHARDPOINT_TESTS_SUPPORT_HPP

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <doctest/doctest.h>

#include <shardpoint/shardpoint.hpp>

// Lets doctest print the vectors that CHECKs compare.
template <class T>
requires std::is_arithmetic_v<T>
struct doctest::StringMaker<std::vector<T>> {
  static doctest::String convert(const std::vector<T>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
      out += (i ? ", " : "") + std::to_string(values[i]);
    }
    return (out + "}").c_str();
  }
};

namespace test {

using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using point = shardpoint::sharding_point<std::size_t>;
using edge_list = std::vector<std::pair<std::size_t, std::size_t>>;

inline graph make_graph(std::size_t n, const edge_list& edges) {
  graph g(n);
  for (auto [u, v] : edges) {
    add_edge(u, v, g);
  }
  return g;
}

/// Devices (or stages) of every vertex as plain ints, -1 where unset.
inline std::vector<int> devices_of(const shardpoint::sharding_result& r) {
  std::vector<int> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back(r.device(i).value_or(-1));
  }
  return out;
}

inline std::vector<int> stages_of(const shardpoint::sharding_result& r) {
  std::vector<int> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back(r.stage(i).value_or(-1));
  }
  return out;
}

/// The procedure exactly as the seed words it, with nothing clever: explicit
/// ancestor sets to order the points, a literal backward walk that stops at
/// vertices already assigned. Quadratic; for small graphs only.
class reference {
public:
  reference(std::size_t n, const edge_list& edges) : n_(n), preds_(n), ancestors_(n) {
    for (auto [u, v] : edges) {
      preds_[v].push_back(u);
    }
    for (std::size_t v = 0; v < n; ++v) {
      std::vector<bool> seen(n, false);
      std::vector<std::size_t> todo{v};
      while (!todo.empty()) {
        const std::size_t x = todo.back();
        todo.pop_back();
        for (std::size_t u : preds_[x]) {
          if (!seen[u]) {
            seen[u] = true;
            todo.push_back(u);
          }
        }
      }
      ancestors_[v] = std::move(seen); // strict ancestors (v only if on a cycle)
    }
  }

  /// Values of one attribute (0 device, 1 stage), -1 where unset.
  std::vector<int> run(const std::vector<point>& points, int attr) const {
    std::vector<std::pair<std::size_t, int>> members; // (vertex, value)
    for (const auto& p : points) {
      const auto& value = attr == 0 ? p.device : p.stage;
      if (value) {
        members.emplace_back(p.vertex, *value);
      }
    }
    std::vector<int> out(n_, -1);
    if (members.empty()) {
      return out;
    }
    // Step 1: repeatedly take the smallest-index point whose point
    // ancestors have all been taken.
    std::vector<std::pair<std::size_t, int>> order;
    std::vector<bool> taken(members.size(), false);
    while (order.size() < members.size()) {
      std::size_t best = members.size();
      for (std::size_t k = 0; k < members.size(); ++k) {
        if (taken[k]) {
          continue;
        }
        bool ready = true;
        for (std::size_t j = 0; j < members.size(); ++j) {
          if (!taken[j] && j != k && ancestors_[members[k].first][members[j].first]) {
            ready = false;
          }
        }
        if (ready && (best == members.size() || members[k].first < members[best].first)) {
          best = k;
        }
      }
      taken[best] = true;
      order.push_back(members[best]);
    }
    // Step 2: the literal walk.
    for (auto [p, value] : order) {
      out[p] = value;
      std::vector<std::size_t> branch{p};
      while (!branch.empty()) {
        const std::size_t x = branch.back();
        branch.pop_back();
        for (std::size_t u : preds_[x]) {
          if (out[u] == -1) {
            out[u] = value;
            branch.push_back(u);
          }
        }
      }
    }
    // Step 3.
    int largest = 0;
    for (auto [p, value] : members) {
      largest = std::max(largest, value);
    }
    std::replace(out.begin(), out.end(), -1, largest + 1);
    return out;
  }

private:
  std::size_t n_;
  std::vector<std::vector<std::size_t>> preds_;
  std::vector<std::vector<bool>> ancestors_;
};

} // namespace test

#endif
