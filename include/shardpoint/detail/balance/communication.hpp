// shardpoint/detail/balance/communication.hpp -- the best split into intervals when stages pay for
// the bytes they receive (w > 0) (part of balanced_shard.hpp, whose header comment describes the
// algorithm)
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_BALANCE_COMMUNICATION_HPP
#define SHARDPOINT_DETAIL_BALANCE_COMMUNICATION_HPP

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

#include "intervals.hpp"
#include "layout.hpp"

namespace shardpoint::detail::balance {

/// load(i, j) = c([i, j)) + w * received([i, j)), incrementally in j for a
/// fixed start i: a stamp per producer says whether it is already counted.
class interval_load {
public:
  explicit interval_load(const layout& L) : L_(L), stamp_(L.n, no_vertex) {}
  void start(std::size_t i) {
    i_ = i;
    j_ = i;
    received_ = 0;
    ++epoch_;
    if (epoch_ == no_vertex) { // wrapped: clear
      std::fill(stamp_.begin(), stamp_.end(), no_vertex);
      epoch_ = 0;
    }
  }
  /// load([i, j + 1)) if the vertex at j_ were added.
  [[nodiscard]] double peek() const { return value_with(j_); }
  void extend() {
    for (std::size_t k = L_.preds_begin(j_); k < L_.preds_end(j_); ++k) {
      const pos_t u = L_.pred[k];
      if (u < i_ && stamp_[u] != epoch_) {
        stamp_[u] = epoch_;
        received_ += L_.out_bytes(u);
      }
    }
    ++j_;
  }
  [[nodiscard]] std::size_t end() const { return j_; }
  [[nodiscard]] double value() const { return L_.P[j_] - L_.P[i_] + L_.w * received_; }

private:
  [[nodiscard]] double value_with(std::size_t j) const {
    double extra = 0;
    for (std::size_t k = L_.preds_begin(j); k < L_.preds_end(j); ++k) {
      const pos_t u = L_.pred[k];
      if (u < i_ && stamp_[u] != epoch_) {
        bool again = false; // a producer read twice by j counts once
        for (std::size_t q = L_.preds_begin(j); q < k; ++q) {
          again = again || L_.pred[q] == u;
        }
        extra += again ? 0 : L_.out_bytes(u);
      }
    }
    return L_.P[j + 1] - L_.P[i_] + L_.w * (received_ + extra);
  }

  const layout& L_;
  std::vector<vertex_id> stamp_;
  vertex_id epoch_ = 0;
  std::size_t i_ = 0;
  std::size_t j_ = 0;
  double received_ = 0;
};

/// The load of every stage of a split given by its ends.
inline std::vector<double> interval_loads(const layout& L, const std::vector<std::size_t>& ends) {
  interval_load load(L);
  std::vector<double> out;
  std::size_t i = 0;
  for (std::size_t e : ends) {
    load.start(i);
    while (load.end() < e) {
      load.extend();
    }
    out.push_back(load.value());
    i = e;
  }
  return out;
}

/// The greedy probe with communication: each stage extended while its load
/// stays within B (not exact: a later start may receive more).
inline probe_result greedy_communication(const layout& L, double B) {
  probe_result r;
  interval_load load(L);
  std::size_t i = 0;
  for (int k = 0; k < L.S && i < L.n; ++k) {
    load.start(i);
    const std::size_t limit = L.memory_end(i);
    while (load.end() < limit && load.peek() <= B) {
      load.extend();
    }
    if (load.end() < L.n && load.end() < limit) {
      r.next = std::min(r.next, load.peek());
    }
    if (load.end() == i) {
      return r;
    }
    r.achieved = std::max(r.achieved, load.value());
    r.ends.push_back(load.end());
    i = load.end();
  }
  r.feasible = i == L.n;
  return r;
}

/// Range addition and maximum over starts i, for the sweep of the exact
/// probe: leaf i holds load(i, j) while i is an open start.
class max_tree {
public:
  explicit max_tree(std::size_t n) : size_(1) {
    while (size_ < n) {
      size_ *= 2;
    }
    max_.assign(2 * size_, -infinity);
    add_.assign(2 * size_, 0);
  }
  void open(std::size_t i) { set(1, 0, size_ - 1, i, 0.0); }
  void add(std::size_t l, std::size_t r, double v) { add(1, 0, size_ - 1, l, r, v); }
  [[nodiscard]] double max() const { return max_[1]; }
  /// Closes the leaf holding the maximum; returns its index and value.
  std::pair<std::size_t, double> close_max() { return close(1, 0, size_ - 1, 0.0); }

private:
  void pull(std::size_t x) { max_[x] = std::max(max_[2 * x], max_[2 * x + 1]) + add_[x]; }
  void set(std::size_t x, std::size_t lo, std::size_t hi, std::size_t i, double pending) {
    if (lo == hi) {
      max_[x] = -pending; // + add_[x] (0 at a leaf) cancels what is above
      add_[x] = 0;
      return;
    }
    const std::size_t mid = (lo + hi) / 2;
    if (i <= mid) {
      set(2 * x, lo, mid, i, pending + add_[x]);
    } else {
      set(2 * x + 1, mid + 1, hi, i, pending + add_[x]);
    }
    pull(x);
  }
  void add(std::size_t x, std::size_t lo, std::size_t hi, std::size_t l, std::size_t r, double v) {
    if (r < lo || hi < l) {
      return;
    }
    if (l <= lo && hi <= r) {
      max_[x] += v;
      add_[x] += v;
      return;
    }
    const std::size_t mid = (lo + hi) / 2;
    add(2 * x, lo, mid, l, r, v);
    add(2 * x + 1, mid + 1, hi, l, r, v);
    pull(x);
  }
  std::pair<std::size_t, double> close(std::size_t x, std::size_t lo, std::size_t hi,
                                       double above) {
    if (lo == hi) {
      const double value = max_[x] + above;
      max_[x] = -infinity;
      return {lo, value};
    }
    const std::size_t mid = (lo + hi) / 2;
    auto found = max_[2 * x] >= max_[2 * x + 1] ? close(2 * x, lo, mid, above + add_[x])
                                                : close(2 * x + 1, mid + 1, hi, above + add_[x]);
    pull(x);
    return found;
  }

  std::size_t size_;
  std::vector<double> max_;
  std::vector<double> add_;
};

/// For bound B, the furthest end e(i) of a stage [i, e(i)) with load <= B
/// and memory fitting, for every start i; and the smallest load above B
/// that one more vertex would give any start (`next`).
inline std::vector<std::size_t> furthest_ends(const layout& L, double B, double& next) {
  const std::size_t n = L.n;
  std::vector<std::size_t> e(n, n);
  std::vector<std::size_t> last_consumer(n); // the last consumer of u seen, or u
  std::iota(last_consumer.begin(), last_consumer.end(), std::size_t{0});
  max_tree tree(n);
  std::vector<bool> open(n, false);
  std::vector<std::size_t> memory_end(n);
  for (std::size_t i = 0; i < n; ++i) {
    memory_end[i] = L.memory_end(i);
  }
  // Starts by where memory ends them, to close them on time.
  std::vector<std::vector<pos_t>> closing(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    closing[memory_end[i]].push_back(static_cast<pos_t>(i));
  }
  next = infinity;
  for (std::size_t j = 0; j < n; ++j) {
    // Starts whose memory ends at j: e(i) = j, and no load extends them.
    for (pos_t i : closing[j]) {
      if (open[i]) {
        open[i] = false;
        tree.add(i, i, -infinity);
        e[i] = j;
      }
    }
    // Vertex j joins every open interval [i, j + 1), i <= j.
    tree.open(j);
    open[j] = true;
    tree.add(0, j, L.cost(j));
    for (std::size_t k = L.preds_begin(j); k < L.preds_end(j); ++k) {
      const pos_t u = L.pred[k];
      const std::size_t from = last_consumer[u] + 1; // starts that did not receive u yet
      if (from <= j && L.out_bytes(u) > 0) {
        tree.add(from, j, L.w * L.out_bytes(u));
      }
      last_consumer[u] = std::max(last_consumer[u], j);
    }
    while (tree.max() > B) {
      const auto [i, value] = tree.close_max();
      open[i] = false;
      e[i] = j;
      next = std::min(next, value);
    }
  }
  return e;
}

/// Exact feasibility of S stages under B; with `ends` non-null, a split.
inline bool reachable(const layout& L, const std::vector<std::size_t>& e,
                      std::vector<std::size_t>* ends) {
  const std::size_t n = L.n;
  const auto S = static_cast<std::size_t>(L.S);
  std::vector<std::uint8_t> cur(n + 1, 0);
  std::vector<std::uint8_t> nxt(n + 1, 0);
  cur[0] = 1;
  std::vector<std::vector<pos_t>> from;
  if (ends != nullptr) {
    from.assign(S + 1, std::vector<pos_t>(n + 1, 0));
  }
  for (std::size_t k = 1; k <= S; ++k) {
    std::fill(nxt.begin(), nxt.end(), 0);
    std::size_t best = n + 1; // the open start reaching furthest
    bool any = false;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t i = j - 1;
      if (cur[i] && (best == n + 1 || e[i] > e[best])) {
        best = i;
      }
      if (best != n + 1 && e[best] >= j && n - j >= S - k) {
        nxt[j] = 1;
        any = true;
        if (ends != nullptr) {
          from[k][j] = static_cast<pos_t>(best);
        }
      }
    }
    if (!any) {
      return false;
    }
    std::swap(cur, nxt);
  }
  if (!cur[n]) {
    return false;
  }
  if (ends != nullptr) {
    ends->assign(S, n);
    std::size_t j = n;
    for (std::size_t k = S; k >= 1; --k) {
      (*ends)[k - 1] = j;
      j = from[k][j];
    }
  }
  return true;
}

/// bisect() from the split `ends` (its bottleneck the upper end) down to
/// `lower`, returning the best split found.
template <class Probe>
std::vector<std::size_t> bisect_from(const layout& L, double lower, std::vector<std::size_t> ends,
                                     int rounds, bool lo_first, Probe probe) {
  const auto loads = interval_loads(L, ends);
  const double hi = *std::max_element(loads.begin(), loads.end());
  return bisect(lower, hi, std::move(ends), rounds, lo_first, probe).ends;
}

/// The exact interval optimum with communication: bisection over exact
/// probes. `hi_ends` is a feasible split to start from.
inline std::vector<std::size_t> exact_communication(const layout& L, double lower,
                                                    std::vector<std::size_t> hi_ends) {
  return bisect_from(L, lower, std::move(hi_ends), 200, true, [&](double B) {
    probe_result r;
    r.feasible = reachable(L, furthest_ends(L, B, r.next), &r.ends);
    if (r.feasible) {
      const auto got = interval_loads(L, r.ends);
      r.achieved = *std::max_element(got.begin(), got.end());
    }
    return r;
  });
}

/// Above exact_limit: bisection with the greedy probe, from the
/// compute-only split `ends`. Not proven optimal.
inline std::vector<std::size_t> greedy_communication_split(const layout& L, double lower,
                                                           std::vector<std::size_t> ends) {
  return bisect_from(L, lower, std::move(ends), 100, false, [&](double B) {
    probe_result r = greedy_communication(L, B);
    if (r.feasible && r.ends.size() != static_cast<std::size_t>(L.S)) {
      r.achieved = infinity; // fewer stages than asked: splitting may raise loads
    }
    return r;
  });
}

} // namespace shardpoint::detail::balance

#endif // SHARDPOINT_DETAIL_BALANCE_COMMUNICATION_HPP
