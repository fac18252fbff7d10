// shardpoint/detail/balance/search.hpp -- splits beyond intervals of one order: downsets,
// refinement, a second order (part of balanced_shard.hpp, whose header comment describes the
// algorithm)
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_BALANCE_SEARCH_HPP
#define SHARDPOINT_DETAIL_BALANCE_SEARCH_HPP

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../../producers_late.hpp"
#include "communication.hpp"
#include "intervals.hpp"
#include "layout.hpp"

namespace shardpoint::detail::balance {

// ---------------------------------------------------------------------------
// A split as stages per position, and its figures.

struct split {
  std::vector<int> stage; ///< by position
  double bottleneck = infinity;
  const char* method = "intervals";
  /// For a split into intervals, where each stage ends; empty otherwise.
  std::vector<std::size_t> ends;
};

inline split from_ends(const layout& L, const std::vector<std::size_t>& ends) {
  split s;
  s.ends = ends;
  s.stage.reserve(L.n);
  std::size_t i = 0;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    s.stage.insert(s.stage.end(), ends[k] - i, static_cast<int>(k));
    i = ends[k];
  }
  return s;
}

/// Cost, memory and received bytes of every stage of a split.
struct stage_figures {
  std::vector<double> cost, memory, received, load;
  double bottleneck = 0;
};

inline stage_figures figures(const layout& L, const std::vector<int>& stage,
                             const std::vector<std::size_t>& ends = {}) {
  const auto S = static_cast<std::size_t>(L.S);
  stage_figures f;
  if (!ends.empty() && L.items == nullptr && L.bytes.empty()) {
    // Intervals with additive memory and no bytes: from the prefix sums.
    f.cost.resize(S);
    f.memory.resize(S);
    f.received.assign(S, 0);
    f.load.resize(S);
    std::size_t i = 0;
    for (std::size_t s = 0; s < S; ++s) {
      f.cost[s] = L.P[ends[s]] - L.P[i];
      f.memory[s] = L.M.empty() ? 0 : L.M[ends[s]] - L.M[i];
      f.load[s] = f.cost[s];
      f.bottleneck = std::max(f.bottleneck, f.load[s]);
      i = ends[s];
    }
    return f;
  }
  f.cost.assign(S, 0);
  f.memory.assign(S, 0);
  f.received.assign(S, 0);
  std::vector<std::vector<vertex_id>> members;
  for (std::size_t p = 0; p < L.n; ++p) {
    f.cost[static_cast<std::size_t>(stage[p])] += L.cost(p);
    if (!L.M.empty()) {
      f.memory[static_cast<std::size_t>(stage[p])] += L.M[p + 1] - L.M[p];
    }
  }
  if (L.items != nullptr) {
    members.resize(S);
    for (std::size_t p = 0; p < L.n; ++p) {
      members[static_cast<std::size_t>(stage[p])].push_back(L.vertex(p));
    }
    item_meter meter(*L.items); // one, emptied after each stage
    for (std::size_t s = 0; s < S; ++s) {
      for (auto v : members[s]) {
        meter.add(v);
      }
      f.memory[s] = meter.value();
      meter.clear(members[s]);
    }
  }
  if (L.has_edges() && !L.bytes.empty()) {
    std::vector<int> stamp(S, -1);
    for (std::size_t u = 0; u < L.n; ++u) {
      for (std::size_t k = L.succs_begin(u); k < L.succs_end(u); ++k) {
        const int t = stage[L.succ[k]];
        if (t != stage[u] && stamp[static_cast<std::size_t>(t)] != static_cast<int>(u)) {
          stamp[static_cast<std::size_t>(t)] = static_cast<int>(u);
          f.received[static_cast<std::size_t>(t)] += L.bytes[u];
        }
      }
    }
  }
  f.load.resize(S);
  for (std::size_t s = 0; s < S; ++s) {
    f.load[s] = f.cost[s] + L.w * f.received[s];
    f.bottleneck = std::max(f.bottleneck, f.load[s]);
  }
  return f;
}

// ---------------------------------------------------------------------------
// Step 3: beyond intervals of one order.

/// Every downset of the vertices (`preds[p]`: p's predecessors as bits),
/// from the empty one by adding ready vertices, fewest vertices first;
/// false when there are more than `budget` allows.
inline bool all_downsets(const layout& L, const std::vector<std::uint64_t>& preds,
                         std::size_t budget, std::vector<std::uint64_t>& sets) {
  sets.assign(1, 0);
  std::unordered_set<std::uint64_t> seen{0};
  for (std::size_t k = 0; k < sets.size(); ++k) {
    for (std::size_t p = 0; p < L.n; ++p) {
      const std::uint64_t bit = std::uint64_t{1} << p;
      if (!(sets[k] & bit) && (preds[p] & ~sets[k]) == 0) {
        const std::uint64_t next = sets[k] | bit;
        if (seen.insert(next).second) {
          sets.push_back(next);
          if (sets.size() * sets.size() / 2 * static_cast<std::size_t>(L.S) > budget) {
            return false;
          }
        }
      }
    }
  }
  std::sort(sets.begin(), sets.end(), [](std::uint64_t a, std::uint64_t b) {
    return std::popcount(a) < std::popcount(b) || (std::popcount(a) == std::popcount(b) && a < b);
  });
  return true;
}

/// The load of a stage holding the vertices of `x` (its cost and, weighted,
/// the bytes it receives from vertices outside), and (`memory`) what it
/// holds.
inline double downset_load(const layout& L, const std::vector<std::uint64_t>& preds,
                           std::uint64_t x, double& memory) {
  double cost = 0;
  double own = 0;
  std::uint64_t in = 0;
  for (std::uint64_t rest = x; rest != 0; rest &= rest - 1) {
    const auto p = static_cast<std::size_t>(std::countr_zero(rest));
    cost += L.cost(p);
    in |= preds[p];
    if (!L.M.empty()) {
      own += L.M[p + 1] - L.M[p];
    }
  }
  if (L.items != nullptr) {
    item_meter meter(*L.items);
    for (std::uint64_t rest = x; rest != 0; rest &= rest - 1) {
      meter.add(L.vertex(static_cast<std::size_t>(std::countr_zero(rest))));
    }
    own = meter.value();
  }
  memory = own;
  double received = 0;
  for (std::uint64_t rest = in & ~x; rest != 0; rest &= rest - 1) {
    received += L.out_bytes(static_cast<std::size_t>(std::countr_zero(rest)));
  }
  return cost + L.w * received;
}

/// Exact dynamic programming over downsets, for at most 64 vertices with few
/// downsets. Returns false (and nothing) when over the budget.
inline bool downset_search(const layout& L, std::size_t budget, split& out) {
  const std::size_t n = L.n;
  if (n > 64 || budget == 0) {
    return false;
  }
  std::vector<std::uint64_t> preds(n, 0);
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t k = L.preds_begin(p); k < L.preds_end(p); ++k) {
      preds[p] |= std::uint64_t{1} << L.pred[k];
    }
  }
  std::vector<std::uint64_t> sets;
  if (!all_downsets(L, preds, budget, sets)) {
    return false;
  }
  const std::size_t m = sets.size();
  const std::uint64_t full = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  // Transitions D' -> D (D' a proper subset of D), with the stage's load.
  struct step {
    std::uint32_t from;
    double load;
  };
  std::vector<std::vector<step>> into(m);
  for (std::size_t b = 0; b < m; ++b) {
    for (std::size_t a = 0; a < b; ++a) {
      if ((sets[a] & ~sets[b]) == 0 && sets[a] != sets[b]) {
        double memory = 0;
        const double load = downset_load(L, preds, sets[b] & ~sets[a], memory);
        if (memory <= L.cap) {
          into[b].push_back({static_cast<std::uint32_t>(a), load});
        }
      }
    }
  }
  const auto S = static_cast<std::size_t>(L.S);
  std::vector<std::vector<double>> best(S + 1, std::vector<double>(m, infinity));
  std::vector<std::vector<std::uint32_t>> came(S + 1, std::vector<std::uint32_t>(m, 0));
  best[0][0] = 0; // sets[0] is the empty set
  for (std::size_t k = 1; k <= S; ++k) {
    for (std::size_t b = 1; b < m; ++b) {
      for (const auto& t : into[b]) {
        const double v = std::max(best[k - 1][t.from], t.load);
        if (v < best[k][b]) {
          best[k][b] = v;
          came[k][b] = t.from;
        }
      }
    }
  }
  const std::size_t last = m - 1;
  if (sets[last] != full || best[S][last] == infinity) {
    return false;
  }
  out.stage.assign(n, 0);
  std::size_t b = last;
  for (std::size_t k = S; k >= 1; --k) {
    const std::size_t a = came[k][b];
    for (std::uint64_t rest = sets[b] & ~sets[a]; rest != 0; rest &= rest - 1) {
      out.stage[static_cast<std::size_t>(std::countr_zero(rest))] = static_cast<int>(k - 1);
    }
    b = a;
  }
  out.bottleneck = best[S][last];
  out.method = "downsets";
  return true;
}

/// Moves boundary vertices between neighbouring stages while that lowers
/// the larger load of the two (a source never back, away from its
/// consumers); spends at most `budget` vertex visits.
class refiner {
public:
  refiner(const layout& L, std::vector<int> stage) : L_(L), stage_(std::move(stage)) {
    const auto S = static_cast<std::size_t>(L.S);
    const std::size_t n = L.n;
    members_.resize(S);
    where_.resize(n);
    same_succ_.assign(n, 0);
    same_pred_.assign(n, 0);
    consumers_.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      auto& m = members_[static_cast<std::size_t>(stage_[p])];
      where_[p] = m.size();
      m.push_back(static_cast<pos_t>(p));
      for (std::size_t k = L.succs_begin(p); k < L.succs_end(p); ++k) {
        const pos_t q = L.succ[k];
        if (stage_[q] == stage_[p]) {
          ++same_succ_[p];
          ++same_pred_[q];
        }
        bump(static_cast<pos_t>(p), stage_[q], +1);
      }
    }
    const stage_figures f = figures(L, stage_);
    cost_ = f.cost;
    received_ = f.received;
    memory_ = f.memory;
    if (L.items != nullptr) {
      meters_.reserve(S);
      for (std::size_t s = 0; s < S; ++s) {
        meters_.emplace_back(*L.items, S);
        for (auto p : members_[s]) {
          meters_.back().add(L.vertex(p));
        }
      }
    }
  }

  /// Runs until no move improves or the budget is spent.
  void run(std::size_t budget) {
    const auto S = static_cast<std::size_t>(L_.S);
    bool moved = true;
    while (moved && spent_ < budget) {
      moved = false;
      for (std::size_t s = 0; s + 1 < S && spent_ < budget; ++s) {
        while (improve(s, budget)) {
          moved = true;
        }
      }
    }
  }

  [[nodiscard]] const std::vector<int>& stage() const { return stage_; }

private:
  double load(std::size_t s) const { return cost_[s] + L_.w * received_[s]; }

  // consumers_[u]: (stage, how many of u's consumers are there)
  int count(pos_t u, int s) const {
    for (const auto& [t, c] : consumers_[u]) {
      if (t == s) {
        return c;
      }
    }
    return 0;
  }
  void bump(pos_t u, int s, int by) {
    for (auto& [t, c] : consumers_[u]) {
      if (t == s) {
        c += by;
        return;
      }
    }
    consumers_[u].emplace_back(s, by);
  }

  // The change in received bytes of stages a and b if v moved from a to b:
  // the only stages whose received bytes change. As a producer, v is now
  // outside a (which receives it if it has consumers there) and inside b.
  // As a consumer, each producer u of v (read over r edges) has r consumers
  // fewer in a and r more in b.
  void received_delta(pos_t v, int a, int b, double& da, double& db) const {
    da = count(v, a) > 0 ? L_.out_bytes(v) : 0;
    db = count(v, b) > 0 ? -L_.out_bytes(v) : 0;
    producers_.assign(L_.pred.begin() + static_cast<std::ptrdiff_t>(L_.preds_begin(v)),
                      L_.pred.begin() + static_cast<std::ptrdiff_t>(L_.preds_end(v)));
    std::sort(producers_.begin(), producers_.end());
    for (std::size_t k = 0; k < producers_.size();) {
      const pos_t u = producers_[k];
      int reads = 0;
      while (k < producers_.size() && producers_[k] == u) {
        ++reads;
        ++k;
      }
      const int su = stage_[u];
      if (su != a && count(u, a) == reads) {
        da -= L_.out_bytes(u);
      }
      if (su != b && count(u, b) == 0) {
        db += L_.out_bytes(u);
      }
    }
  }

  bool fits(std::size_t s, pos_t v) const {
    if (L_.cap == infinity) {
      return true;
    }
    if (L_.items != nullptr) {
      return meters_[s].with(L_.vertex(v)) <= L_.cap;
    }
    return memory_[s] + (L_.M[v + 1] - L_.M[v]) <= L_.cap;
  }

  // The best move across the boundary between s and s + 1, if it lowers the
  // larger of the two loads; applied.
  bool improve(std::size_t s, std::size_t budget) {
    const std::size_t t = s + 1;
    const double before = std::max(load(s), load(t));
    double best = before;
    pos_t pick = 0;
    bool forward = true;
    bool found = false;
    const auto consider = [&](pos_t v, std::size_t from, std::size_t to) {
      ++spent_;
      if (members_[from].size() < 2 || !fits(to, v)) {
        return;
      }
      double da = 0;
      double db = 0;
      received_delta(v, static_cast<int>(from), static_cast<int>(to), da, db);
      const double c = L_.cost(v);
      const double lf = cost_[from] - c + L_.w * (received_[from] + da);
      const double lt = cost_[to] + c + L_.w * (received_[to] + db);
      const double after = std::max(lf, lt);
      if (after < best) {
        best = after;
        pick = v;
        forward = from == s;
        found = true;
      }
    };
    for (pos_t v : members_[s]) {
      if (same_succ_[v] == 0) {
        consider(v, s, t);
      }
    }
    for (pos_t v : members_[t]) {
      // A source (no predecessor at all: a Constant) stays with its
      // consumers: moved back, its output would only cross the cut.
      if (same_pred_[v] == 0 && L_.preds_begin(v) != L_.preds_end(v)) {
        consider(v, t, s);
      }
    }
    if (!found || spent_ > budget) {
      return false;
    }
    move(pick, forward ? s : t, forward ? t : s);
    return true;
  }

  void move(pos_t v, std::size_t from, std::size_t to) {
    double da = 0;
    double db = 0;
    received_delta(v, static_cast<int>(from), static_cast<int>(to), da, db);
    received_[from] += da;
    received_[to] += db;
    cost_[from] -= L_.cost(v);
    cost_[to] += L_.cost(v);
    if (L_.items != nullptr) {
      meters_[from].remove(L_.vertex(v));
      meters_[to].add(L_.vertex(v));
    } else if (!L_.M.empty()) {
      memory_[from] -= L_.M[v + 1] - L_.M[v];
      memory_[to] += L_.M[v + 1] - L_.M[v];
    }
    // membership
    auto& m = members_[from];
    const std::size_t k = where_[v];
    where_[m.back()] = k;
    m[k] = m.back();
    m.pop_back();
    where_[v] = members_[to].size();
    members_[to].push_back(v);
    // same-stage neighbour counts and consumer counts: the edge p -> q,
    // whose other end than v is `other`, leaves `from`'s and joins `to`'s
    const auto recount = [&](pos_t p, pos_t q, pos_t other) {
      if (stage_[other] == static_cast<int>(from)) {
        --same_succ_[p];
        --same_pred_[q];
      }
      if (stage_[other] == static_cast<int>(to)) {
        ++same_succ_[p];
        ++same_pred_[q];
      }
    };
    for (std::size_t k2 = L_.succs_begin(v); k2 < L_.succs_end(v); ++k2) {
      recount(v, L_.succ[k2], L_.succ[k2]);
    }
    for (std::size_t k2 = L_.preds_begin(v); k2 < L_.preds_end(v); ++k2) {
      const pos_t u = L_.pred[k2];
      recount(u, v, u);
      bump(u, static_cast<int>(from), -1);
      bump(u, static_cast<int>(to), +1);
    }
    stage_[v] = static_cast<int>(to);
  }

  const layout& L_;
  std::vector<int> stage_;
  std::vector<std::vector<pos_t>> members_;
  std::vector<std::size_t> where_;
  std::vector<std::uint32_t> same_succ_, same_pred_;
  std::vector<std::vector<std::pair<int, int>>> consumers_;
  std::vector<double> cost_, received_, memory_;
  std::vector<item_meter> meters_;
  mutable std::vector<pos_t> producers_;
  std::size_t spent_ = 0;
};

/// Every source -- a vertex without predecessors, such as a Constant --
/// left in an earlier stage than all its consumers moves to the first of
/// their stages wherever that keeps the bottleneck and the memory cap (and
/// leaves no stage empty): its
/// output then crosses one cut fewer, and no load rises above the
/// bottleneck. Intervals, communication and the figures stay exact: a
/// source's move changes only its old stage (its cost out) and its new one
/// (its cost in, its bytes no longer received). O(V + E), plus the memory
/// items' meters where shared items are capped.
inline void join_consumers(const layout& L, split& best) {
  if (!L.has_edges()) {
    return;
  }
  const stage_figures f = figures(L, best.stage, best.ends);
  std::vector<double> cost = f.cost;
  std::vector<double> received = f.received;
  std::vector<double> memory = f.memory;
  const double bound = f.bottleneck;
  const bool capped = L.cap != infinity;
  std::vector<item_meter> meters;
  if (capped && L.items != nullptr) {
    meters.reserve(static_cast<std::size_t>(L.S));
    for (int k = 0; k < L.S; ++k) {
      meters.emplace_back(*L.items, static_cast<std::size_t>(L.S));
    }
    for (std::size_t p = 0; p < L.n; ++p) {
      meters[static_cast<std::size_t>(best.stage[p])].add(L.vertex(p));
    }
  }
  std::vector<std::size_t> members(static_cast<std::size_t>(L.S), 0);
  for (const int s : best.stage) {
    ++members[static_cast<std::size_t>(s)];
  }
  bool moved = false;
  for (std::size_t p = 0; p < L.n; ++p) {
    if (L.preds_begin(p) != L.preds_end(p) || L.succs_begin(p) == L.succs_end(p)) {
      continue;
    }
    const auto s = static_cast<std::size_t>(best.stage[p]);
    auto t = static_cast<std::size_t>(L.S);
    for (std::size_t k = L.succs_begin(p); k < L.succs_end(p); ++k) {
      t = std::min(t, static_cast<std::size_t>(best.stage[L.succ[k]]));
    }
    const double c = L.cost(p);
    const double rt = received[t] - L.out_bytes(p); // t received p's output
    if (t <= s || members[s] == 1 || cost[t] + c + L.w * rt > bound) {
      continue;
    }
    const double m = L.M.empty() ? 0 : L.M[p + 1] - L.M[p];
    if (capped && (meters.empty() ? memory[t] + m : meters[t].with(L.vertex(p))) > L.cap) {
      continue;
    }
    --members[s];
    ++members[t];
    cost[s] -= c;
    cost[t] += c;
    received[t] = rt;
    memory[t] += m;
    if (!meters.empty()) {
      meters[t].add(L.vertex(p));
    }
    best.stage[p] = static_cast<int>(t);
    moved = true;
  }
  if (moved) {
    best.ends.clear(); // intervals of the layout no more
    best.bottleneck = figures(L, best.stage).bottleneck;
  }
}

/// `order` (positions of L) as a graph whose vertex i is order[i]: what
/// producers_late.hpp reads.
struct in_order {
  const layout& L;
  const std::vector<pos_t>& order;
  std::vector<std::size_t> rank;
  [[nodiscard]] std::size_t size() const { return L.n; }
  template <class F>
  void for_each_successor(std::size_t i, F f) const {
    for (std::size_t k = L.succs_begin(order[i]); k < L.succs_end(order[i]); ++k) {
      f(rank[L.succ[k]]);
    }
  }
};

/// `order` (positions of L, topological) with every source -- a vertex
/// without predecessors, such as a Constant -- moved to just before its
/// first consumer in it, by producers_late.hpp, as the first layout is: a
/// depth-first order otherwise puts every source whose consumer an earlier
/// root reached first, and a split of it sends their outputs across cuts.
inline std::vector<pos_t> sources_late(const layout& L, const std::vector<pos_t>& order) {
  in_order g{L, order, std::vector<std::size_t>(L.n)};
  for (std::size_t i = 0; i < L.n; ++i) {
    g.rank[order[i]] = i;
  }
  const std::vector<std::size_t> position = producers_late(g);
  std::vector<pos_t> out(L.n);
  for (std::size_t i = 0; i < L.n; ++i) {
    out[position[i]] = order[i];
  }
  return out;
}

/// Positions in a depth-first order (reverse postorder, successors in
/// position order): keeps each branch together; sources late.
inline std::vector<pos_t> depth_first_order(const layout& L) {
  const std::size_t n = L.n;
  std::vector<pos_t> post;
  post.reserve(n);
  std::vector<std::uint8_t> state(n, 0);
  std::vector<std::pair<pos_t, std::size_t>> stack;
  for (std::size_t r = 0; r < n; ++r) {
    if (state[r] != 0 || L.preds_begin(r) != L.preds_end(r)) {
      continue;
    }
    stack.emplace_back(static_cast<pos_t>(r), L.succs_begin(r));
    state[r] = 1;
    while (!stack.empty()) {
      auto& [v, k] = stack.back();
      if (k == L.succs_end(v)) {
        post.push_back(v);
        stack.pop_back();
        continue;
      }
      const pos_t w = L.succ[k++];
      if (state[w] == 0) {
        state[w] = 1;
        stack.emplace_back(w, L.succs_begin(w));
      }
    }
  }
  std::reverse(post.begin(), post.end());
  return sources_late(L, post);
}

/// `L` relaid in the order `order` (positions of L): a new layout.
inline layout relaid(const layout& L, const std::vector<pos_t>& order) {
  layout R;
  R.n = L.n;
  R.S = L.S;
  R.cap = L.cap;
  R.w = L.w;
  R.items = L.items;
  R.identity = false;
  R.at.resize(L.n);
  R.pos.resize(L.n);
  std::vector<pos_t> new_of(L.n);
  for (std::size_t p = 0; p < L.n; ++p) {
    new_of[order[p]] = static_cast<pos_t>(p);
    R.at[p] = L.vertex(order[p]);
  }
  for (std::size_t p = 0; p < L.n; ++p) {
    R.pos[R.at[p]] = static_cast<vertex_id>(p);
  }
  R.P.assign(L.n + 1, 0);
  for (std::size_t p = 0; p < L.n; ++p) {
    R.P[p + 1] = R.P[p] + L.cost(order[p]);
  }
  if (!L.M.empty()) {
    R.M.assign(L.n + 1, 0);
    for (std::size_t p = 0; p < L.n; ++p) {
      R.M[p + 1] = R.M[p] + (L.M[order[p] + 1] - L.M[order[p]]);
    }
  }
  if (!L.bytes.empty()) {
    R.bytes.resize(L.n);
    for (std::size_t p = 0; p < L.n; ++p) {
      R.bytes[p] = L.bytes[order[p]];
    }
  }
  if (R.items != nullptr) {
    compute_reach(R);
  }
  // edges, mapped
  R.succ_off.assign(L.n + 1, 0);
  R.pred_off.assign(L.n + 1, 0);
  for (std::size_t p = 0; p < L.n; ++p) {
    const pos_t o = order[p];
    R.succ_off[p + 1] = L.succs_end(o) - L.succs_begin(o);
    R.pred_off[p + 1] = L.preds_end(o) - L.preds_begin(o);
  }
  std::partial_sum(R.succ_off.begin(), R.succ_off.end(), R.succ_off.begin());
  std::partial_sum(R.pred_off.begin(), R.pred_off.end(), R.pred_off.begin());
  R.succ.resize(L.succ.size());
  R.pred.resize(L.pred.size());
  for (std::size_t p = 0; p < L.n; ++p) {
    const pos_t o = order[p];
    std::size_t k = R.succ_off[p];
    for (std::size_t q = L.succs_begin(o); q < L.succs_end(o); ++q) {
      R.succ[k++] = new_of[L.succ[q]];
    }
    k = R.pred_off[p];
    for (std::size_t q = L.preds_begin(o); q < L.preds_end(o); ++q) {
      R.pred[k++] = new_of[L.pred[q]];
    }
  }
  return R;
}

} // namespace shardpoint::detail::balance

#endif // SHARDPOINT_DETAIL_BALANCE_SEARCH_HPP
