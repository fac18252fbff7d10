// shardpoint/balanced_shard.hpp -- automatic balanced partitioning into
// pipeline stages: the smallest bottleneck, under a memory cap, on any DAG.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PROBLEM
//
//   A DAG with, per vertex, a compute cost c(v) >= 0, a memory weight
//   m(v) >= 0 and the bytes b(v) of its output. Split it into S non-empty
//   stages (stage s on device s), every edge going to the same or a later
//   stage, every stage's memory at most the cap, minimising the bottleneck:
//   the largest stage load, load(X) = c(X) + w * (the bytes of every vertex
//   outside X with a consumer in X, each once), w the communication weight.
//
// THE ALGORITHM
//
//   1. Layout. The vertices are laid out in the lexicographically smallest
//      topological order (the index order when it is topological, checked in
//      one pass). A stage that is an interval of this order always respects
//      the edges.
//
//   2. The best split into intervals, exactly.
//      w = 0: loads are monotone (a sub-interval never weighs more), so for a
//      bound B the greedy probe -- extend each stage as far as B and the cap
//      allow, O(S log V) with prefix sums and binary search -- decides
//      feasibility exactly, and extra stages can always be split off. The
//      optimum B* is the load of some interval. Bisection keeps both ends on
//      such values: a feasible probe lowers the upper end to the bottleneck
//      its partition actually has; an infeasible one raises the lower end to
//      the smallest load any of its stages would have had with one more
//      vertex (below that, every probe builds the same failing partition).
//      It ends when the ends meet, after O(log) probes of O(S log V).
//      Among the optimal splits it then takes the most even one: each
//      boundary nearest to its share of the total cost, inside the range
//      left- and right-packed greedy splits allow.
//      w > 0: a stage that starts later can receive more bytes, so loads are
//      monotone only in the end of the interval, and the greedy probe is no
//      longer exact. The probe becomes exact dynamic programming: for bound
//      B, the furthest end e(i) of a stage starting at i is found for every
//      i in one sweep (a segment tree holds load(i, j) for all i, updated by
//      range additions as j grows: + c(j) for every start, + w * b(u) for the
//      starts that now receive u); then the positions reachable after k
//      stages are unions of intervals (i, e(i)], O(V) per stage. Bisection on
//      B as above. O((V + E) log V + S V) per probe, up to
//      `exact_limit` vertices and `exact_cells` = (S + 1)(V + 1) (the table
//      the split is read back from); beyond either, the greedy probe (each
//      stage extended while its load allows, O(V + E) per probe), which is
//      not proven optimal.
//
//   3. Beyond intervals of one order. A split that respects the edges is an
//      interval split of *some* topological order, not always of the one in
//      step 1. Within `search_budget`:
//      - a graph of at most 64 vertices whose downsets (vertex sets closed
//        under predecessors) are few enough is solved exactly by dynamic
//        programming over pairs of nested downsets;
//      - otherwise, the interval optimum of a second order (depth-first, which
//        keeps branches together; sources moved to just before their first
//        consumer, as producers_late.hpp lays out) is computed too, and each
//        is refined by moving boundary vertices between neighbouring stages
//        (a vertex with no successor in its stage may move to the next, one
//        with no predecessor in its stage to the one before, unless it has
//        none at all) whenever that lowers the larger of the two loads; the
//        bottleneck never rises.
//      The best found is kept, never worse than step 2.
//
//   3b. Sources join their consumers. A source -- a vertex without
//      predecessors: in ONNX a Constant, or a node making a weight from an
//      initializer -- left in an earlier stage than all its consumers
//      (a cut fell between them) moves to the first of their stages wherever
//      that keeps the bottleneck and the cap, so that its output does not
//      cross a cut. The figures change only for the two stages involved, and
//      no load rises above the bottleneck: whatever step 2 or 3 proved
//      still holds. A source stays behind only where joining would raise
//      the bottleneck or break the cap. (With w = 0 nothing else prices the
//      bytes a cut carries.) Runs whenever search_budget > 0 and the edges
//      were read (communication, bytes or the search need them).
//
//   4. Points. The split is handed back as PopRT sharding points (device =
//      stage = s) that manual_shard turns into exactly this split: for each
//      stage s < S - 1, the vertices with no successor in s -- and, when the
//      split is not intervals of a topological index order, also those with a
//      successor in a later stage. Proof: every vertex of s reaches one of
//      its stage's points by following edges inside s; a point q of a later
//      stage that it reaches is reached through an edge leaving s, whose
//      source is a point of s and precedes q in manual_shard's topological
//      order of the points. So the first point it reaches is in s; the last
//      stage's vertices reach no point and form the default group S - 1.
//
// COMPLEXITY (V vertices, E edges, S stages)
//
//   w = 0: O(V + E) to lay out, check and hand back, plus O(S log V) per
//   probe for O(log(total / precision)) probes (about 60 at most).
//   w > 0: O(((V + E) log V + S V) * probes) up to exact_limit and
//   exact_cells, O(S V) memory; above, O((V + E) * probes). Search beyond
//   intervals: bounded by search_budget vertex visits.
//
// REQUIREMENTS
//
//   As every shardpoint algorithm (graph_access.hpp): a sharding_graph with an
//   internal vertex index, or indexed(g, index_map[, name_map]). Weights are
//   vertex_weight_maps; `memory_items` replaces the memory map when memory is
//   shared between vertices (a weight read by two layers counts once per
//   stage).
#ifndef SHARDPOINT_BALANCED_SHARD_HPP
#define SHARDPOINT_BALANCED_SHARD_HPP

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/balance/search.hpp"
#include "detail/text.hpp"
#include "error.hpp"
#include "evaluate.hpp"
#include "graph_access.hpp"
#include "manual_shard.hpp"
#include "memory_items.hpp"
#include "sharding_point.hpp"
#include "sharding_result.hpp"
#include "topological_order.hpp"

namespace shardpoint {

/// What balanced_shard is asked for.
struct balance_options {
  /// The number of pipeline stages S, 1 <= S <= number of vertices.
  int stages = 1;
  /// The most memory a stage may hold, when given.
  std::optional<double> memory_capacity = std::nullopt;
  /// Load per byte a stage receives from outside it.
  double communication_weight = 0;
  /// Vertex visits the search beyond intervals of the layout order may
  /// spend (step 3); 0 turns it off, and step 3b too: the split is then
  /// intervals of the layout order.
  std::size_t search_budget = 4'000'000;
  /// With communication_weight > 0, the largest graph (in vertices) on which
  /// the exact interval algorithm runs; above, the greedy probe.
  std::size_t exact_limit = 200'000;
  /// With communication_weight > 0, the largest (S + 1) x (V + 1) for which
  /// the exact interval algorithm runs: its split is read back from a table
  /// of that many 4-byte cells, and each probe takes S x V steps. Above, the
  /// greedy probe (not proven optimal, `exact_intervals` false), so that
  /// memory and time never grow as S x V past it (default 2^26 cells:
  /// 256 MiB).
  std::size_t exact_cells = std::size_t{1} << 26;
};

/// A balanced split into stages.
struct balanced_sharding {
  /// Every vertex's device and stage (the same number).
  sharding_result result;
  /// Sharding points, as vertex indices, such that manual_shard on them gives
  /// exactly `result`: the split as a PopRT config.
  std::vector<sharding_point<std::size_t>> points;
  std::vector<double> stage_cost;
  std::vector<double> stage_memory;
  std::vector<double> stage_received_bytes;
  /// The largest stage load.
  double bottleneck = 0;
  /// max(total cost / S, largest single vertex cost): no split is below it.
  double lower_bound = 0;
  /// Whether `bottleneck` is proven optimal among splits into intervals of
  /// the layout order (always with w = 0; with w > 0, up to exact_limit and
  /// exact_cells).
  bool exact_intervals = false;
  /// Whether it is proven optimal among all splits: the downset search ran,
  /// the layout is the only topological order, S = 1, or the bottleneck
  /// meets `lower_bound`.
  bool exact = false;
  /// How the split was found: "intervals", "refined", "downsets".
  const char* method = "intervals";
};

/// No split of the graph fits the memory capacity: one vertex is over it
/// alone (`vertex()`), or more stages are needed (`stages_needed()`). The
/// figures let a caller say it in its own units (the core's message gives
/// the memory map's raw numbers).
class infeasible_partition_error : public bad_parameter_error {
public:
  using bad_parameter_error::bad_parameter_error;
  infeasible_partition_error(const std::string& message, std::optional<std::size_t> vertex,
                             int stages_needed, double capacity, double vertex_memory = 0)
      : bad_parameter_error(message, vertex), stages_needed_(stages_needed), capacity_(capacity),
        vertex_memory_(vertex_memory) {}

  /// The fewest stages of the capacity the graph needs; 0 when one vertex
  /// is over the capacity alone (then vertex() is that vertex), or unknown.
  [[nodiscard]] int stages_needed() const noexcept { return stages_needed_; }
  /// A stage's memory capacity, in the memory map's units.
  [[nodiscard]] double capacity() const noexcept { return capacity_; }
  /// The memory of vertex() alone, in the same units (0 without one).
  [[nodiscard]] double vertex_memory() const noexcept { return vertex_memory_; }

private:
  int stages_needed_ = 0;
  double capacity_ = 0;
  double vertex_memory_ = 0;
};

namespace detail::balance {

// ---------------------------------------------------------------------------
// The whole procedure.

inline void check_options(std::size_t n, const balance_options& opt) {
  check_graph_size(n);
  if (opt.stages < 1) {
    throw bad_parameter_error(
        cat("shardpoint: balanced_shard needs at least 1 stage, not ", opt.stages));
  }
  if (static_cast<std::size_t>(opt.stages) > n) {
    throw bad_parameter_error(cat("shardpoint: ", opt.stages, " stages asked of a graph of ", n,
                                  " vertices; every stage needs one"));
  }
  if (opt.memory_capacity && !(*opt.memory_capacity >= 0)) {
    throw bad_parameter_error("shardpoint: the memory capacity must be non-negative");
  }
  if (!(opt.communication_weight >= 0) || !std::isfinite(opt.communication_weight)) {
    throw bad_parameter_error("shardpoint: communication_weight must be finite and non-negative");
  }
}

/// Step 1. With `assume_topological`, positions are vertex indices and the
/// check that every edge goes forward is left to the pass that needs the
/// edges anyway (build_edges, or hand_back); otherwise the smallest
/// topological order (which throws cycle_error).
template <class Ref, class Cost, class Memory, class Bytes>
layout lay_out(const Ref& g, const Cost& cost, const Memory& memory, const Bytes& bytes,
               const balance_options& opt, bool assume_topological, bool with_edges,
               double& largest) {
  const std::size_t n = g.size();
  layout L;
  L.n = n;
  L.S = opt.stages;
  L.cap = opt.memory_capacity.value_or(infinity);
  L.w = opt.communication_weight;
  if (!assume_topological) {
    L.identity = false;
    const auto order = smallest_topological_order(g); // throws cycle_error
    L.at.assign(order.begin(), order.end());
    L.pos.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      L.pos[L.at[p]] = static_cast<vertex_id>(p);
    }
  }
  largest = 0;
  constexpr bool additive = !std::is_same_v<Memory, memory_items>;
  L.P.reserve(n + 1);
  L.P.push_back(0);
  if constexpr (additive) {
    L.M.reserve(n + 1);
    L.M.push_back(0);
  }
  for (std::size_t p = 0; p < n; ++p) { // one pass for cost and memory
    const vertex_id v = L.vertex(p);
    const double c = checked_weight(g, cost, v, "cost");
    L.P.push_back(L.P.back() + c);
    largest = std::max(largest, c);
    if constexpr (additive) {
      L.M.push_back(L.M.back() + checked_weight(g, memory, v, "memory weight"));
    }
  }
  if constexpr (!additive) {
    if (memory.used.size() != n) {
      throw bad_parameter_error(cat("shardpoint: memory_items lists ", memory.used.size(),
                                    " vertices for a graph of ", n));
    }
    for (std::size_t k = 0; k < memory.bytes.size(); ++k) {
      if (!(memory.bytes[k] >= 0) || !std::isfinite(memory.bytes[k])) {
        throw bad_input_error(
            cat("shardpoint: memory item ", k, " has a negative or non-finite size"));
      }
    }
    check_uses<bad_input_error>(g, memory.used, memory.bytes.size(), "memory item");
    L.items = &memory;
    compute_reach(L);
  }
  if constexpr (!std::is_same_v<Bytes, constant_weight>) {
    L.bytes.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      L.bytes[p] = checked_weight(g, bytes, L.vertex(p), "output size");
    }
  }
  if (with_edges) {
    build_edges(g, L);
  }
  return L;
}

/// What steps 2 and 3 found.
struct solution {
  split best;
  bool exact_intervals = true;
  bool exact = false;
};

/// Step 3 where no exact search can run: `best` refined by moving boundary
/// vertices, and the interval optimum of a depth-first layout refined too;
/// the better of the three. `budget` vertex visits for each refinement.
inline void refine(const layout& L, split& best, double lower, bool exact_fits,
                   std::size_t budget) {
  refiner a(L, best.stage);
  a.run(budget);
  split refined{a.stage(), figures(L, a.stage()).bottleneck, "refined", {}};
  const layout D = relaid(L, depth_first_order(L));
  std::vector<std::size_t> d_ends = even_boundaries(D, optimal_bound(D, lower));
  if (D.w > 0 && exact_fits) {
    d_ends = exact_communication(D, lower, d_ends);
  }
  refiner b(D, from_ends(D, d_ends).stage);
  b.run(budget);
  std::vector<int> back(L.n); // D's positions back to L's
  for (std::size_t p = 0; p < L.n; ++p) {
    back[L.identity ? D.at[p] : L.pos[D.at[p]]] = b.stage()[p];
  }
  split other{back, figures(L, back).bottleneck, "refined", {}};
  for (split* s : {&refined, &other}) {
    if (s->bottleneck < best.bottleneck) {
      best = std::move(*s);
    }
  }
}

/// Steps 2 and 3 on a layout. Throws infeasible_partition_error.
template <class Ref>
solution solve(const Ref& g, const layout& L, const balance_options& opt, double largest,
               bool search) {
  const std::size_t n = L.n;
  // A vertex over the cap alone, and the fewest interval stages memory allows.
  for (std::size_t p = 0; p < n; ++p) {
    if (!L.interval_fits(p, p + 1)) {
      const double alone = L.interval_memory(p, p + 1);
      throw infeasible_partition_error(
          cat("shardpoint: ", g.describe(L.vertex(p)), " alone needs ", number(alone),
              " of memory, more than the capacity of a stage (", number(L.cap), ")"),
          L.vertex(p), 0, L.cap, alone);
    }
  }
  int needed = 0;
  std::size_t start = 0;
  while (start < n) {
    start = L.memory_end(start);
    ++needed;
  }
  const auto too_few = [&] {
    return infeasible_partition_error(cat("shardpoint: no split into ", L.S,
                                          " stage(s) fits the memory capacity: it needs at least ",
                                          needed, " stages of capacity ", number(L.cap)),
                                      std::nullopt, needed, L.cap);
  };
  const double lower = std::max(L.P[n] / L.S, largest);
  solution out;
  const auto S = static_cast<std::size_t>(L.S);
  const bool exact_fits = n <= opt.exact_limit && (S + 1) <= opt.exact_cells / (n + 1);

  // Step 2 (when memory lets intervals fit at all).
  if (needed <= L.S) {
    std::vector<std::size_t> ends = even_boundaries(L, optimal_bound(L, lower));
    if (L.w > 0) {
      if (exact_fits) {
        ends = exact_communication(L, lower, ends);
      } else {
        out.exact_intervals = false;
        ends = greedy_communication_split(L, lower, ends);
      }
    }
    out.best = from_ends(L, ends);
    out.best.bottleneck = figures(L, out.best.stage, out.best.ends).bottleneck;
  } else if (!search) {
    throw too_few();
  } else {
    out.exact_intervals = false; // no interval split exists
  }

  // Step 3. When the layout is the graph's only topological order (each
  // position feeds the next, as in a chain), every split is intervals of it:
  // step 2 was already exact over all splits.
  if (L.has_edges() && needed <= L.S && only_topological_order(L)) {
    out.exact = out.exact_intervals;
    return out;
  }
  if (!search) {
    return out;
  }
  split found;
  if (downset_search(L, opt.search_budget, found)) {
    if (found.bottleneck <= out.best.bottleneck) {
      out.best = std::move(found);
    }
    out.exact = true;
  } else if (needed > L.S) {
    throw too_few(); // no interval split fits, and no downset search could run
  } else if (8 * (n + L.succ.size()) <= opt.search_budget) {
    refine(L, out.best, lower, exact_fits, opt.search_budget / 2);
  }
  return out;
}

/// Step 4 and the figures. Returns nothing when an edge turns out to go
/// backwards in a layout assumed topological (then the caller lays out again).
template <class Ref>
std::optional<balanced_sharding> hand_back(const Ref& g, const layout& L, solution& sol,
                                           double largest) {
  const std::size_t n = L.n;
  const std::vector<int>& stage = sol.best.stage; // by position
  bool intervals_of_index = L.identity;
  for (std::size_t p = 1; p < n && intervals_of_index; ++p) {
    intervals_of_index = stage[p - 1] <= stage[p];
  }
  balanced_sharding out;
  bool forward = true;
  for (std::size_t p = 0; p < n; ++p) {
    const int s = stage[p];
    bool same_succ = false;
    bool later_succ = false;
    if (L.has_edges()) {
      for (std::size_t k = L.succs_begin(p); k < L.succs_end(p); ++k) {
        const int t = stage[L.succ[k]];
        same_succ = same_succ || t == s;
        later_succ = later_succ || t > s;
      }
    } else { // edges not built: read them, and check them when assumed forward
      g.for_each_successor(L.vertex(p), [&](std::size_t v) {
        const std::size_t q = L.identity ? v : L.pos[v];
        forward = forward && q > p;
        const int t = stage[q];
        same_succ = same_succ || t == s;
        later_succ = later_succ || t > s;
      });
    }
    if ((s < L.S - 1 || L.S == 1) && (!same_succ || (!intervals_of_index && later_succ))) {
      out.points.push_back({L.vertex(p), s, s});
    }
  }
  if (!forward) {
    return std::nullopt;
  }
  if (!L.identity) {
    std::sort(out.points.begin(), out.points.end(),
              [](const auto& a, const auto& b) { return a.vertex < b.vertex; });
  }
  const stage_figures f = figures(L, stage, sol.best.ends);
  std::vector<int> by_vertex;
  if (L.identity) {
    by_vertex = std::move(sol.best.stage); // `stage` is not read again
  } else {
    by_vertex.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      by_vertex[L.vertex(p)] = stage[p];
    }
  }
  std::vector<int> devices = by_vertex;
  out.result = sharding_result(n, std::move(devices), std::move(by_vertex));
  out.stage_cost = f.cost;
  out.stage_memory = f.memory;
  out.stage_received_bytes = f.received;
  out.bottleneck = f.bottleneck;
  out.lower_bound = std::max(L.P[n] / L.S, largest);
  out.exact_intervals = sol.exact_intervals;
  // One stage has one split; a split at the lower bound cannot be beaten.
  out.exact = sol.exact || L.S == 1 || out.bottleneck <= out.lower_bound;
  out.method = sol.best.method;
  return out;
}

template <class Ref, class Cost, class Memory, class Bytes>
balanced_sharding run(const Ref& g, const Cost& cost, const Memory& memory, const Bytes& bytes,
                      const balance_options& opt) {
  const std::size_t n = g.size();
  check_options(n, opt);
  constexpr bool with_bytes = !std::is_same_v<Bytes, constant_weight>;
  // The search beyond intervals runs where it can afford a few passes.
  const bool search = opt.search_budget > 0 && opt.stages > 1 && 16 * n <= opt.search_budget;
  const bool with_edges = opt.communication_weight > 0 || with_bytes || search;
  // First as if the index order were topological (every valid ONNX node
  // list is): the pass over the edges that checks it is one the work needs
  // anyway. Otherwise, and on a cycle, again in the smallest topological
  // order, which names the cycle.
  double largest = 0;
  const auto attempt = [&](bool assume) -> std::optional<balanced_sharding> {
    const layout L = lay_out(g, cost, memory, bytes, opt, assume, with_edges, largest);
    if (assume && L.has_edges() && !L.forward) {
      return std::nullopt;
    }
    solution sol;
    try {
      sol = solve(g, L, opt, largest, search);
    } catch (const infeasible_partition_error&) {
      if (assume && !L.has_edges() && !is_index_order_topological(g)) {
        return std::nullopt; // the layout was wrong, not the cap
      }
      throw;
    }
    if (opt.search_budget > 0) {
      join_consumers(L, sol.best); // step 3b
    }
    return hand_back(g, L, sol, largest);
  };
  if (auto out = attempt(true)) {
    return std::move(*out);
  }
  return std::move(*attempt(false));
}

template <class G, class Cost, class Memory, class Bytes>
balanced_sharding entry(const G& g, const Cost& cost, const Memory& memory, const Bytes& bytes,
                        const balance_options& options) {
  if constexpr (!accessible<G>) {
    require_graph<G>();
    return {};
  } else {
    static_assert(vertex_weight_map<Cost, G>,
                  "shardpoint: the cost map must be a readable property map from vertex to a "
                  "number");
    static_assert(std::is_same_v<Memory, memory_items> || vertex_weight_map<Memory, G>,
                  "shardpoint: the memory map must be a readable property map from vertex to a "
                  "number, or memory_items");
    static_assert(vertex_weight_map<Bytes, G>,
                  "shardpoint: the output-bytes map must be a readable property map from vertex "
                  "to a number");
    return run(access(g), cost, memory, bytes, options);
  }
}

} // namespace detail::balance

/// The split of `g` into `options.stages` stages with the smallest
/// bottleneck (see the top of this header), with compute costs only.
/// `g` is a graph with an internal vertex index or indexed(g, index[,
/// names]). Throws bad_parameter_error (S < 1, S above the vertex count, a
/// negative cap or weight), bad_input_error naming the vertex (a negative or
/// non-finite cost), cycle_error, or infeasible_partition_error (a vertex
/// heavier than the cap alone; "needs at least N stages of capacity C").
template <vertex_list_graph G, class Cost>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const balance_options& options) {
  return detail::balance::entry(g, cost, constant_weight{0}, constant_weight{0}, options);
}

/// With a memory weight per vertex (or memory_items) and the cap.
template <vertex_list_graph G, class Cost, class Memory>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const Memory& memory,
                                 const balance_options& options) {
  return detail::balance::entry(g, cost, memory, constant_weight{0}, options);
}

/// With the bytes of each vertex's output, which a stage receiving it pays
/// communication_weight per byte for.
template <vertex_list_graph G, class Cost, class Memory, class Bytes>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const Memory& memory,
                                 const Bytes& output_bytes, const balance_options& options) {
  return detail::balance::entry(g, cost, memory, output_bytes, options);
}

/// The forms taking an index map (and a name map for messages) last, as
/// manual_shard does: the same as balanced_shard(indexed(g, index[, names]),
/// ...).
template <sharding_graph G, class Cost, vertex_index_map<G> Index>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const balance_options& options,
                                 Index index) {
  return balanced_shard(indexed(g, std::move(index)), cost, options);
}

template <sharding_graph G, class Cost, vertex_index_map<G> Index, vertex_name_map<G> Names>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const balance_options& options,
                                 Index index, const Names& names) {
  return balanced_shard(indexed(g, std::move(index), names), cost, options);
}

template <sharding_graph G, class Cost, class Memory, vertex_index_map<G> Index>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const Memory& memory,
                                 const balance_options& options, Index index) {
  return balanced_shard(indexed(g, std::move(index)), cost, memory, options);
}

template <sharding_graph G, class Cost, class Memory, vertex_index_map<G> Index,
          vertex_name_map<G> Names>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const Memory& memory,
                                 const balance_options& options, Index index, const Names& names) {
  return balanced_shard(indexed(g, std::move(index), names), cost, memory, options);
}

template <sharding_graph G, class Cost, class Memory, class Bytes, vertex_index_map<G> Index>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const Memory& memory,
                                 const Bytes& output_bytes, const balance_options& options,
                                 Index index) {
  return balanced_shard(indexed(g, std::move(index)), cost, memory, output_bytes, options);
}

template <sharding_graph G, class Cost, class Memory, class Bytes, vertex_index_map<G> Index,
          vertex_name_map<G> Names>
balanced_sharding balanced_shard(const G& g, const Cost& cost, const Memory& memory,
                                 const Bytes& output_bytes, const balance_options& options,
                                 Index index, const Names& names) {
  return balanced_shard(indexed(g, std::move(index), names), cost, memory, output_bytes, options);
}

} // namespace shardpoint

#endif // SHARDPOINT_BALANCED_SHARD_HPP
