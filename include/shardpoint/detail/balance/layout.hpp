// shardpoint/detail/balance/layout.hpp -- the problem laid out in positions: prefix sums, memory,
// edges (part of balanced_shard.hpp, whose header comment describes the algorithm)
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_BALANCE_LAYOUT_HPP
#define SHARDPOINT_DETAIL_BALANCE_LAYOUT_HPP

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../graph_access.hpp"
#include "../../memory_items.hpp"
#include "../../topological_order.hpp"
#include "../text.hpp"

namespace shardpoint::detail::balance {

using pos_t = std::uint32_t;
inline constexpr double infinity = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// The problem laid out in positions (step 1).

struct layout {
  std::size_t n = 0;
  int S = 1;
  double cap = infinity;
  double w = 0;
  bool identity = true;       ///< position == vertex index
  bool forward = true;        ///< every edge built goes to a later position
  std::vector<vertex_id> at;  ///< position -> vertex index (when not identity)
  std::vector<vertex_id> pos; ///< vertex index -> position (when not identity)
  std::vector<double> P;      ///< cost prefix sums, n + 1
  std::vector<double> M;      ///< additive memory prefix sums, n + 1 (empty with items)
  const memory_items* items = nullptr;
  std::vector<pos_t> reach;  ///< with items: the furthest end of a stage from each start
  std::vector<double> bytes; ///< output bytes by position (empty: none)
  // Predecessors and successors by position (CSR), built when needed.
  std::vector<std::size_t> pred_off, succ_off;
  std::vector<pos_t> pred, succ;

  [[nodiscard]] vertex_id vertex(std::size_t p) const {
    return identity ? static_cast<vertex_id>(p) : at[p];
  }
  [[nodiscard]] double cost(std::size_t p) const { return P[p + 1] - P[p]; }
  [[nodiscard]] double out_bytes(std::size_t p) const { return bytes.empty() ? 0 : bytes[p]; }
  [[nodiscard]] bool has_edges() const { return !succ_off.empty(); }
  [[nodiscard]] std::size_t preds_begin(std::size_t p) const { return pred_off[p]; }
  [[nodiscard]] std::size_t preds_end(std::size_t p) const { return pred_off[p + 1]; }
  [[nodiscard]] std::size_t succs_begin(std::size_t p) const { return succ_off[p]; }
  [[nodiscard]] std::size_t succs_end(std::size_t p) const { return succ_off[p + 1]; }

  /// The memory of the interval [i, j): additive, or each item its
  /// vertices use once. O(j - i) uses with items (for messages).
  [[nodiscard]] double interval_memory(std::size_t i, std::size_t j) const {
    if (!M.empty()) {
      return M[j] - M[i];
    }
    if (items == nullptr) {
      return 0;
    }
    std::vector<bool> seen(items->bytes.size(), false);
    double sum = 0;
    for (std::size_t p = i; p < j; ++p) {
      for (const auto it : items->used[vertex(p)]) {
        if (!seen[it]) {
          seen[it] = true;
          sum += items->bytes[it];
        }
      }
    }
    return sum;
  }
  /// Whether the interval [i, j) fits the capacity.
  [[nodiscard]] bool interval_fits(std::size_t i, std::size_t j) const {
    if (!M.empty()) {
      return M[j] - M[i] <= cap;
    }
    return items == nullptr || j <= reach[i];
  }
  /// The furthest end j of a stage starting at i that memory allows.
  [[nodiscard]] std::size_t memory_end(std::size_t i) const {
    if (items != nullptr) {
      return reach[i];
    }
    if (M.empty() || cap == infinity) {
      return n;
    }
    // largest j with M[j] - M[i] <= cap
    std::size_t lo = i;
    std::size_t hi = n;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (M[mid] - M[i] <= cap) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }
};

template <class Ref>
[[noreturn]] void bad_weight(const Ref& g, std::size_t i, double value, const char* what) {
  throw bad_input_error(cat("shardpoint: ", g.describe(i), " has ",
                            value < 0 ? "a negative " : "a non-finite ", what, " (", number(value),
                            ")"),
                        i);
}

/// A weight of vertex i, checked finite and non-negative (one comparison
/// chain on the hot path; the message is built out of line).
template <class Ref, class Map>
inline double checked_weight(const Ref& g, const Map& m, std::size_t i, const char* what) {
  const auto value = static_cast<double>(g.read(m, i));
  if (!(value >= 0 && value <= std::numeric_limits<double>::max())) [[unlikely]] {
    bad_weight(g, i, value, what);
  }
  return value;
}

/// How many item counts (4 bytes each) the meters that one call keeps at
/// once may hold as arrays: past it, each keeps only its own items' counts.
/// (A variable, so that the tests run both kinds on small graphs.)
inline std::size_t dense_item_counts = std::size_t{1} << 24;

/// Memory of a set of vertices under shared items: reference counts. Dense,
/// a count per item of the graph, where `meters` of them (one a stage, kept
/// at once) fit dense_item_counts; otherwise a hash table of the counts its
/// vertices' items have, so that S meters hold O(V + uses), not S x items
/// (a trial's 65536 stages of a 116k-node model asked for 15 GB). Both add
/// and take away the same bytes in the same order: the same values.
class item_meter {
public:
  explicit item_meter(const memory_items& items, std::size_t meters = 1)
      : items_(items),
        dense_(meters <= dense_item_counts / std::max<std::size_t>(items.bytes.size(), 1)) {
    if (dense_) {
      count_.assign(items.bytes.size(), 0);
    }
  }
  void add(vertex_id v) {
    for (auto it : items_.used[v]) {
      if ((dense_ ? count_[it]++ : sparse_[it]++) == 0) {
        value_ += items_.bytes[it];
      }
    }
  }
  void remove(vertex_id v) {
    for (auto it : items_.used[v]) {
      if (dense_) {
        if (--count_[it] == 0) {
          value_ -= items_.bytes[it];
        }
      } else if (const auto at = sparse_.find(it); --at->second == 0) {
        sparse_.erase(at);
        value_ -= items_.bytes[it];
      }
    }
  }
  /// The memory with v added, without adding it: each of its items once,
  /// as add() counts them (an item v names twice was counted twice here).
  [[nodiscard]] double with(vertex_id v) const {
    const auto& used = items_.used[v];
    double extra = 0;
    for (auto at = used.begin(); at != used.end(); ++at) {
      if (!counted(*at) && std::find(used.begin(), at, *at) == at) {
        extra += items_.bytes[*at];
      }
    }
    return value_ + extra;
  }
  [[nodiscard]] double value() const { return value_; }
  /// Empty again, after `members` were added (and no other vertex).
  template <class Members>
  void clear(const Members& members) {
    for (auto v : members) {
      for (auto it : items_.used[v]) {
        if (dense_) {
          count_[it] = 0;
        }
      }
    }
    sparse_.clear();
    value_ = 0;
  }

private:
  [[nodiscard]] bool counted(std::uint32_t it) const {
    return dense_ ? count_[it] != 0 : sparse_.contains(it);
  }

  const memory_items& items_;
  bool dense_;
  std::vector<std::uint32_t> count_;
  std::unordered_map<std::uint32_t, std::uint32_t> sparse_;
  double value_ = 0;
};

/// Whether the layout order is the only topological order: every position
/// has an edge to the next.
inline bool only_topological_order(const layout& L) {
  for (std::size_t p = 0; p + 1 < L.n; ++p) {
    bool next = false;
    for (std::size_t k = L.succs_begin(p); k < L.succs_end(p) && !next; ++k) {
      next = L.succ[k] == p + 1;
    }
    if (!next) {
      return false;
    }
  }
  return true;
}

/// With memory items: the furthest end of a stage from each start, by two
/// pointers (memory never shrinks when a vertex is added).
inline void compute_reach(layout& L) {
  L.reach.resize(L.n);
  item_meter meter(*L.items);
  std::size_t j = 0;
  for (std::size_t i = 0; i < L.n; ++i) {
    j = std::max(j, i);
    while (j < L.n && meter.with(L.vertex(j)) <= L.cap) {
      meter.add(L.vertex(j));
      ++j;
    }
    L.reach[i] = static_cast<pos_t>(j);
    if (j > i) {
      meter.remove(L.vertex(i));
    }
  }
}

template <class Ref>
void build_edges(const Ref& g, layout& L) {
  const std::size_t n = L.n;
  L.succ_off.assign(n + 1, 0);
  L.pred_off.assign(n + 1, 0);
  for (std::size_t p = 0; p < n; ++p) {
    g.for_each_successor(L.vertex(p), [&](std::size_t t) {
      ++L.succ_off[p + 1];
      ++L.pred_off[(L.identity ? t : L.pos[t]) + 1];
    });
  }
  std::partial_sum(L.succ_off.begin(), L.succ_off.end(), L.succ_off.begin());
  std::partial_sum(L.pred_off.begin(), L.pred_off.end(), L.pred_off.begin());
  L.succ.resize(L.succ_off[n]);
  L.pred.resize(L.pred_off[n]);
  std::vector<std::size_t> fill(L.pred_off.begin(), L.pred_off.end() - 1);
  for (std::size_t p = 0; p < n; ++p) {
    std::size_t k = L.succ_off[p];
    g.for_each_successor(L.vertex(p), [&](std::size_t t) {
      const auto q = static_cast<pos_t>(L.identity ? t : L.pos[t]);
      L.forward = L.forward && q > p;
      L.succ[k++] = q;
      L.pred[fill[q]++] = static_cast<pos_t>(p);
    });
  }
}

} // namespace shardpoint::detail::balance

#endif // SHARDPOINT_DETAIL_BALANCE_LAYOUT_HPP
