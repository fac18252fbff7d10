// shardpoint/detail/balance/intervals.hpp -- the best split into intervals with monotone loads (w =
// 0) (part of balanced_shard.hpp, whose header comment describes the algorithm)
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_DETAIL_BALANCE_INTERVALS_HPP
#define SHARDPOINT_DETAIL_BALANCE_INTERVALS_HPP

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

#include "layout.hpp"

namespace shardpoint::detail::balance {

/// The furthest end j of a stage [i, j) with cost at most B (and memory).
inline std::size_t cost_end(const layout& L, std::size_t i, double B) {
  std::size_t lo = i;
  std::size_t hi = L.memory_end(i);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    if (L.P[mid] - L.P[i] <= B) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

struct probe_result {
  bool feasible = false;
  double achieved = 0;    ///< feasible: the largest stage cost built
  double next = infinity; ///< infeasible: the smallest stage cost one more vertex gives
  std::vector<std::size_t> ends;
};

/// The greedy probe: stages packed from the left as far as B allows.
inline probe_result greedy(const layout& L, double B) {
  probe_result r;
  std::size_t i = 0;
  for (int k = 0; k < L.S && i < L.n; ++k) {
    const std::size_t j = cost_end(L, i, B);
    if (j < L.n && L.interval_fits(i, j + 1)) {
      r.next = std::min(r.next, L.P[j + 1] - L.P[i]);
    }
    if (j == i) {
      return r; // a vertex heavier than B on its own
    }
    r.achieved = std::max(r.achieved, L.P[j] - L.P[i]);
    r.ends.push_back(j);
    i = j;
  }
  r.feasible = i == L.n;
  return r;
}

/// Where a bisection ended: the smallest bound a probe achieved, and that
/// probe's split (the starting split when none improved on it).
struct bisection {
  double bound = infinity;
  std::vector<std::size_t> ends;
};

/// The parametric search the three splitters share: bisection on the
/// bottleneck bound B in [lo, hi], where `probe(B)` builds a split with
/// every stage at most B (feasible: its largest stage, `achieved`, is the
/// new hi) or says the smallest bound one more vertex needs (`next`, the new
/// lo). The first probe is at `lo` itself when `lo_first` (the lower bound
/// is often met); a feasible probe that does not improve on hi ends the
/// search (rounding, or a probe that cannot do better). At most `rounds`
/// probes; each moves lo or hi to a breakpoint of the cost function, so the
/// search ends long before on real costs.
template <class Probe>
bisection bisect(double lo, double hi, std::vector<std::size_t> ends, int rounds, bool lo_first,
                 Probe probe) {
  for (int round = 0; round < rounds && lo < hi; ++round) {
    const double mid = round == 0 && lo_first ? lo : lo + (hi - lo) / 2;
    probe_result r = probe(mid);
    if (!r.feasible) {
      lo = std::max(lo, std::min(r.next, hi));
    } else if (r.achieved < hi) {
      hi = r.achieved;
      ends = std::move(r.ends);
    } else {
      break;
    }
  }
  return {hi, std::move(ends)};
}

/// The smallest bottleneck of a split into S intervals (w = 0), and that
/// bound B*; `lower` is a valid lower bound to start from.
inline double optimal_bound(const layout& L, double lower) {
  return bisect(lower, greedy(L, infinity).achieved, {}, 201, true,
                [&](double B) { return greedy(L, B); })
      .bound;
}

/// Among the splits into S intervals with every stage at most B, the most
/// even: boundary k as near as possible to k/S of the total cost, within
/// what the stages before and after it allow. Returns the S - 1 boundaries
/// followed by n.
inline std::vector<std::size_t> even_boundaries(const layout& L, double B) {
  const std::size_t n = L.n;
  const auto S = static_cast<std::size_t>(L.S);
  // earliest[k]: the smallest start from which S - k stages still cover the
  // rest (right-packed greedy), for k = 1..S-1.
  std::vector<std::size_t> earliest(S + 1, n);
  std::size_t e = n;
  for (std::size_t k = S; k-- > 1;) {
    if (e == 0) { // the rest of the stages fit in none: only non-emptiness binds
      earliest[k] = k;
      continue;
    }
    // the smallest start s with [s, e) fitting B and memory
    std::size_t lo = 0;
    std::size_t hi = e - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (L.P[e] - L.P[mid] <= B && L.interval_fits(mid, e)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    e = lo;
    earliest[k] = std::max(e, k); // at least one vertex per earlier stage
  }
  std::vector<std::size_t> ends;
  std::size_t start = 0;
  const double total = L.P[n];
  for (std::size_t k = 1; k < S; ++k) {
    const std::size_t lo = std::max(earliest[k], start + 1);
    const std::size_t hi = std::min(cost_end(L, start, B), n - (S - k));
    const double target = total * static_cast<double>(k) / static_cast<double>(S);
    std::size_t b = static_cast<std::size_t>(
        std::lower_bound(L.P.begin() + static_cast<std::ptrdiff_t>(lo),
                         L.P.begin() + static_cast<std::ptrdiff_t>(hi) + 1, target) -
        L.P.begin());
    if (b > hi) {
      b = hi;
    } else if (b > lo && target - L.P[b - 1] < L.P[b] - target) {
      --b;
    }
    b = std::clamp(b, lo, std::max(lo, hi));
    ends.push_back(b);
    start = b;
  }
  ends.push_back(n);
  return ends;
}

} // namespace shardpoint::detail::balance

#endif // SHARDPOINT_DETAIL_BALANCE_INTERVALS_HPP
