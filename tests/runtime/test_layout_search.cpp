// plan's layout search against a brute force written from the cost model's
// statement (the top of layout_search.hpp) alone: every layout of the
// space, its step time and its memory computed literally -- device groups
// rank by rank, ZeRO's bytes element by element -- on random small models
// and clusters; then the sanity cases docs/plan.md states.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <tuple>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <shardpoint/runtime/layout_search.hpp>
#include <shardpoint/synthetic.hpp>

using namespace shardpoint::runtime;
using graph = boost::compressed_sparse_row_graph<boost::directedS>;

namespace {

// A graph of `n` vertices and `edges`, and its adjacency matrix (what the
// brute force reads).
struct test_graph {
  graph g;
  std::vector<std::vector<bool>> adj;
  test_graph(std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& edges)
      : g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n),
        adj(n, std::vector<bool>(n, false)) {
    for (const auto& [u, v] : edges) {
      adj[u][v] = true;
    }
  }
};

struct reference_layout {
  layout at;
  bool feasible = false;
  double step_time = 0;
  std::int64_t peak = 0;
};

// Whether every group lies in one node of n: `groups` lists each group's ranks.
bool inside(const std::vector<std::vector<std::int64_t>>& groups, std::int64_t n) {
  for (const auto& g : groups) {
    for (const auto r : g) {
      if (r / n != g.front() / n) {
        return false;
      }
    }
  }
  return true;
}

std::int64_t up(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// One layout, costed from the statement.
// One layout on the split `stage` (a stage per vertex); `in_flight` takes
// the schedule's peak micro-batches in flight on any stage.
reference_layout cost_on(const test_graph& tg, const layout_model& m, const cluster_spec& c,
                         const search_space& sp, const layout& at, const std::vector<int>& stage,
                         int& in_flight) {
  const auto& adj = tg.adj;
  reference_layout out;
  out.at = at;
  const int S = at.pipeline * at.virtual_stages;
  const auto V = m.vertices.size();
  const std::int64_t n = c.devices_per_node;
  const std::int64_t tp = at.tensor;
  const std::int64_t dp = at.data;
  const std::int64_t k = tp * dp;
  // Device groups.
  std::vector<std::vector<std::int64_t>> tp_groups;
  std::vector<std::vector<std::int64_t>> dp_groups;
  for (std::int64_t base = 0; base < c.devices; base += tp) {
    tp_groups.emplace_back();
    for (std::int64_t r = 0; r < tp; ++r) {
      tp_groups.back().push_back(base + r);
    }
  }
  for (std::int64_t group = 0; group < at.pipeline; ++group) {
    for (std::int64_t r = 0; r < tp; ++r) {
      dp_groups.emplace_back();
      for (std::int64_t j = 0; j < dp; ++j) {
        dp_groups.back().push_back(group * k + j * tp + r);
      }
    }
  }
  const auto bw = [&](bool in) { return in ? c.intra_node_bandwidth : c.inter_node_bandwidth; };
  const double tp_bw = bw(inside(tp_groups, n));
  const double dp_bw = bw(inside(dp_groups, n));
  const auto link_bw = [&](int a, int b) { // both device groups in one node
    std::vector<std::int64_t> ranks;
    for (const int s : {a % at.pipeline, b % at.pipeline}) {
      for (std::int64_t r = 0; r < k; ++r) {
        ranks.push_back(s * k + r);
      }
    }
    return bw(inside({ranks}, n));
  };
  const double mixed = sp.training.fp16 || sp.training.bf16;
  const std::int64_t pb = mixed ? 2 : 4;
  const std::int64_t gb = pb;
  const std::int64_t kb = mixed ? 12 : 8; // adam
  const auto b = static_cast<double>(at.micro_batch_size);
  std::vector<stage_times> times(static_cast<std::size_t>(S));
  std::vector<double> held(static_cast<std::size_t>(S), 0);
  std::vector<std::int64_t> states(static_cast<std::size_t>(S), 0);
  double sync = 0;
  for (int s = 0; s < S; ++s) {
    double flops = 0, allreduce = 0, sent = 0, received = 0;
    std::set<std::uint32_t> weights;
    std::vector<std::vector<std::uint32_t>> layers;
    for (std::size_t v = 0; v < V; ++v) {
      const auto& x = m.vertices[v];
      if (stage[v] != s) {
        // Received: v outside s with a consumer in s, once.
        bool feeds = false;
        for (std::size_t u = 0; u < V; ++u) {
          feeds = feeds || (stage[u] == s && adj[v][u]);
        }
        received += feeds ? static_cast<double>(x.output_bytes) : 0;
        continue;
      }
      flops += x.splits ? x.flops / static_cast<double>(tp) : x.flops;
      allreduce += static_cast<double>(x.allreduce_bytes);
      held[static_cast<std::size_t>(s)] +=
          static_cast<double>(x.activation_bytes) +
          static_cast<double>(x.split_activation_bytes) / static_cast<double>(tp);
      bool sends = false;
      for (std::size_t u = 0; u < V; ++u) {
        sends = sends || (stage[u] != s && adj[v][u]);
      }
      sent += sends ? static_cast<double>(x.output_bytes) : 0;
      weights.insert(x.weights.begin(), x.weights.end());
      layers.push_back(x.weights);
    }
    held[static_cast<std::size_t>(s)] += received;
    // ZeRO's bytes, weight by weight.
    const std::int64_t dg = at.zero >= 2 ? dp : 1;
    const std::int64_t dpar = at.zero == 3 ? dp : 1;
    const std::int64_t dopt = at.zero >= 1 ? dp : 1;
    std::int64_t trainable = 0, shardable = 0, bytes = 0;
    const auto slice = [&](std::uint32_t w) {
      return m.weights[w].splits ? up(m.weights[w].elements, tp) : m.weights[w].elements;
    };
    const auto persistent = [&](std::uint32_t w) {
      return m.weights[w].elements < sp.training.param_persistence_threshold;
    };
    for (const auto w : weights) {
      const std::int64_t e = slice(w);
      trainable += e;
      shardable += persistent(w) ? 0 : e;
      bytes += pb * (persistent(w) ? e : up(e, dpar)) + gb * up(e, dg) + kb * up(e, dopt);
    }
    if (dpar > 1) { // ZeRO-3's working set: the largest layer whole, prefetch up to max_live
      std::int64_t largest = 0;
      for (const auto& layer : layers) {
        std::int64_t sum = 0;
        for (const auto w : layer) {
          sum += persistent(w) ? 0 : slice(w);
        }
        largest = std::max(largest, sum);
      }
      bytes += gb * largest +
               pb * std::max(largest, std::min(sp.training.max_live_parameters, shardable));
    }
    states[static_cast<std::size_t>(s)] = bytes;
    const double comp = b * flops / c.device_flops;
    const double tp_time = tp > 1 ? 2.0 * double(tp - 1) / double(tp) * b * allreduce / tp_bw : 0;
    const double z3 =
        at.zero == 3 ? double(dp - 1) / double(dp) * double(pb * shardable) / dp_bw : 0;
    auto& t = times[static_cast<std::size_t>(s)];
    t.forward = comp + tp_time + (s + 1 < S ? b * sent / link_bw(s, s + 1) : 0) + z3;
    t.backward =
        sp.backward_ratio * comp + tp_time + (s > 0 ? b * received / link_bw(s - 1, s) : 0) + z3;
    t.weight_share = t.backward > 0 ? sp.backward_ratio * comp * sp.weight_share / t.backward : 0;
    const double grads = double(gb * trainable);
    const double whole = double(pb * (trainable - shardable)); // persistent parameters
    const double sy = dp <= 1        ? 0
                      : at.zero == 3 ? double(dp - 1) / double(dp) * (grads + whole) / dp_bw
                                     : 2.0 * double(dp - 1) / double(dp) * grads / dp_bw;
    sync = std::max(sync, sy);
  }
  const auto r = run_schedule(times, {at.schedule, at.pipeline, static_cast<int>(at.micro_batches),
                                      at.virtual_stages, false});
  out.step_time = r.makespan + sync;
  std::vector<std::int64_t> device(static_cast<std::size_t>(at.pipeline), 0);
  for (int s = 0; s < S; ++s) {
    device[static_cast<std::size_t>(s % at.pipeline)] +=
        states[static_cast<std::size_t>(s)] +
        static_cast<std::int64_t>(std::ceil(r.in_flight[static_cast<std::size_t>(s)] * b *
                                            held[static_cast<std::size_t>(s)]));
  }
  out.peak = *std::max_element(device.begin(), device.end());
  out.feasible = out.peak <= c.device_memory;
  in_flight = *std::max_element(r.in_flight.begin(), r.in_flight.end());
  return out;
}

// One layout: on the time-balanced split, else on the memory-capped one
// when that fits.
reference_layout cost_of(const test_graph& tg, const layout_model& m, const cluster_spec& c,
                         const search_space& sp, const layout& at) {
  const auto V = m.vertices.size();
  const std::int64_t tp = at.tensor;
  const std::int64_t dp = at.data;
  std::vector<double> compute(V);
  for (std::size_t v = 0; v < V; ++v) {
    compute[v] = m.vertices[v].flops / (m.vertices[v].splits ? static_cast<double>(tp) : 1.0);
  }
  const auto stages_of = [&](const shardpoint::sharding_result& r) {
    std::vector<int> stage(V);
    for (std::size_t v = 0; v < V; ++v) {
      stage[v] = *r.stage(v);
    }
    return stage;
  };
  shardpoint::balance_options o;
  o.stages = at.pipeline * at.virtual_stages;
  int in_flight = 0;
  const auto first =
      cost_on(tg, m, c, sp, at,
              stages_of(shardpoint::balanced_shard(tg.g, compute.data(), o).result), in_flight);
  if (first.feasible) {
    return first;
  }
  // Each weight's states on a device, each vertex's activations its own item.
  const bool mixed = sp.training.fp16 || sp.training.bf16;
  const std::int64_t pb = mixed ? 2 : 4;
  const std::int64_t kb = mixed ? 12 : 8;
  shardpoint::memory_items items;
  for (const auto& w : m.weights) {
    const std::int64_t e = w.splits ? up(w.elements, tp) : w.elements;
    const bool whole = w.elements < sp.training.param_persistence_threshold;
    items.bytes.push_back(double(pb * (whole || at.zero < 3 ? e : up(e, dp)) +
                                 pb * (at.zero >= 2 ? up(e, dp) : e) +
                                 kb * (at.zero >= 1 ? up(e, dp) : e)));
  }
  for (const auto& x : m.vertices) {
    items.used.push_back(x.weights);
    items.used.back().push_back(static_cast<std::uint32_t>(items.bytes.size()));
    items.bytes.push_back(
        double(in_flight) * double(at.micro_batch_size) *
        (double(x.activation_bytes) + double(x.split_activation_bytes) / double(tp)));
  }
  o.memory_capacity = double(c.device_memory) / at.virtual_stages;
  try {
    int ignored = 0;
    const auto again = cost_on(
        tg, m, c, sp, at,
        stages_of(shardpoint::balanced_shard(tg.g, compute.data(), items, o).result), ignored);
    if (again.feasible) {
      return again;
    }
  } catch (const shardpoint::infeasible_partition_error&) {
  }
  return first;
}

// Every layout of the space, literally.
std::vector<reference_layout> brute_force(const test_graph& g, const layout_model& m,
                                          const cluster_spec& c, const search_space& sp) {
  std::vector<reference_layout> out;
  const int N = c.devices;
  for (int pp = 1; pp <= N; ++pp) {
    for (int tp = 1; pp * tp <= N; ++tp) {
      if (N % (pp * tp) != 0) {
        continue;
      }
      const int dp = N / (pp * tp);
      if (sp.global_batch % dp != 0) {
        continue;
      }
      for (int zero = 0; zero <= 3; ++zero) {
        if (dp == 1 && zero > 0) {
          continue;
        }
        for (std::int64_t b = 1; b <= std::min(sp.max_micro_batch_size, sp.global_batch / dp);
             ++b) {
          if ((sp.global_batch / dp) % b != 0) {
            continue;
          }
          const std::int64_t mb = sp.global_batch / dp / b;
          for (const auto kind : sp.schedules) {
            const int v = kind == schedule_kind::interleaved ? sp.interleave : 1;
            if ((kind == schedule_kind::interleaved && (pp < 2 || mb % pp != 0)) ||
                (kind == schedule_kind::zb_h1 && mb < pp) ||
                static_cast<std::size_t>(pp * v) > m.vertices.size()) {
              continue;
            }
            out.push_back(cost_of(g, m, c, sp, {pp, tp, dp, zero, b, mb, kind, v}));
          }
        }
      }
    }
  }
  return out;
}

auto key(const layout& a) {
  return std::make_tuple(a.pipeline, a.tensor, a.data, a.zero, a.micro_batch_size,
                         static_cast<int>(a.schedule));
}

} // namespace

TEST_CASE("plan's search equals a brute force over every layout, on random models and clusters") {
  shardpoint::synthetic::splitmix64 rng(2026);
  int compared = 0;
  int with_infeasible = 0;
  int capped = 0; // layouts that fit only on the memory-capped split
  for (int round = 0; round < 60; ++round) {
    const auto V = static_cast<std::size_t>(3 + rng.below(7));
    std::vector<std::pair<std::size_t, std::size_t>> edges;
    layout_model m;
    for (std::size_t v = 0; v < V; ++v) {
      layout_vertex x;
      x.flops = 1e9 * static_cast<double>(1 + rng.below(50));
      x.splits = rng.below(3) != 0;
      x.activation_bytes = static_cast<std::int64_t>(rng.below(1 << 20));
      x.split_activation_bytes = x.splits ? static_cast<std::int64_t>(rng.below(1 << 20)) : 0;
      x.output_bytes = static_cast<std::int64_t>(1 + rng.below(1 << 20));
      x.allreduce_bytes = x.splits && rng.below(2) == 0 ? x.output_bytes : 0;
      for (std::uint64_t w = rng.below(3); w > 0; --w) {
        x.weights.push_back(static_cast<std::uint32_t>(m.weights.size()));
        m.weights.push_back({static_cast<std::int64_t>(1000 + rng.below(3'000'000)),
                             x.splits && rng.below(4) != 0, true, 4});
      }
      if (v > 0) {
        edges.emplace_back(v - 1, v);
        if (v > 1 && rng.below(3) == 0) {
          edges.emplace_back(rng.below(v - 1), v); // a skip edge
        }
      }
      m.vertices.push_back(std::move(x));
    }
    cluster_spec c;
    c.devices = std::vector<int>{1, 2, 4, 6, 8}[rng.below(5)];
    c.devices_per_node = std::vector<int>{1, 2, 4}[rng.below(3)];
    c.device_memory = static_cast<std::int64_t>(20'000'000 + rng.below(200'000'000));
    c.device_flops = 1e12;
    c.intra_node_bandwidth = 1e11;
    c.inter_node_bandwidth = 1e9 * static_cast<double>(1 + rng.below(20));
    search_space sp;
    sp.global_batch = std::vector<std::int64_t>{1, 4, 6, 8, 12}[rng.below(5)];
    sp.max_micro_batch_size = 1 + static_cast<std::int64_t>(rng.below(8));
    sp.training.fp16 = rng.below(2) == 0;
    CAPTURE(round);
    const test_graph g(V, edges);
    const auto got = search_layouts(g.g, m, c, sp);
    const auto want = brute_force(g, m, c, sp);
    std::map<decltype(key(layout{})), reference_layout> by_key;
    std::size_t feasible = 0;
    for (const auto& r : want) {
      by_key[key(r.at)] = r;
      feasible += r.feasible ? 1 : 0;
    }
    REQUIRE(got.feasible == feasible);
    // Every costed candidate as the brute force costs it; the others refused
    // by a rule the brute force skips.
    std::size_t costed = 0;
    for (const auto& x : got.candidates) {
      const auto it = by_key.find(key(x.at));
      if (it == by_key.end()) {
        CHECK(!x.feasible);
        CHECK(std::string(x.refused_by) != "memory");
        continue;
      }
      ++costed;
      capped += x.memory_capped ? 1 : 0;
      CHECK(x.feasible == it->second.feasible);
      CHECK(x.step_time == doctest::Approx(it->second.step_time).epsilon(1e-9));
      CHECK(x.peak_memory == it->second.peak);
      CHECK(x.throughput == doctest::Approx(static_cast<double>(sp.global_batch) / x.step_time));
    }
    CHECK(costed == want.size());
    if (feasible > 0) {
      // The best is never worse than any feasible layout.
      double best = 1e300;
      for (const auto& r : want) {
        if (r.feasible) {
          best = std::min(best, r.step_time);
        }
      }
      CHECK(got.candidates.front().step_time == doctest::Approx(best).epsilon(1e-9));
      for (std::size_t i = 1; i < got.feasible; ++i) {
        CHECK(got.candidates[i - 1].step_time <= got.candidates[i].step_time * (1 + 1e-9));
      }
      ++compared;
    }
    with_infeasible += feasible < want.size() ? 1 : 0;
  }
  CHECK(compared >= 30);
  CHECK(with_infeasible >= 10);
  MESSAGE("memory-capped splits: ", capped);
  CHECK(capped >= 5);
}

namespace {

// A GPT-like chain: `layers` equal layers of hidden h, sequence s (the
// counts plan uses), fp16.
std::pair<graph, layout_model> transformer(int layers, double h, double s) {
  layout_model m;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (int i = 0; i < layers; ++i) {
    layout_vertex x;
    x.flops = 24 * s * h * h + 4 * s * s * h;
    x.splits = true;
    x.activation_bytes = static_cast<std::int64_t>(10 * s * h);
    x.split_activation_bytes = static_cast<std::int64_t>(24 * s * h + 5 * 16 * s * s);
    x.allreduce_bytes = static_cast<std::int64_t>(4 * s * h);
    x.output_bytes = static_cast<std::int64_t>(2 * s * h);
    x.weights = {static_cast<std::uint32_t>(m.weights.size())};
    m.weights.push_back({static_cast<std::int64_t>(12 * h * h), true, true, 2});
    m.vertices.push_back(std::move(x));
    if (i > 0) {
      edges.emplace_back(static_cast<std::size_t>(i - 1), static_cast<std::size_t>(i));
    }
  }
  return {
      graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), m.vertices.size()),
      std::move(m)};
}

cluster_spec cluster(int devices, int per_node, std::int64_t memory_gib, double flops, double intra,
                     double inter) {
  cluster_spec c;
  c.devices = devices;
  c.devices_per_node = per_node;
  c.device_memory = memory_gib << 30;
  c.device_flops = flops;
  c.intra_node_bandwidth = intra;
  c.inter_node_bandwidth = inter;
  return c;
}

} // namespace

TEST_CASE("sanity: tensor parallelism stays within a node when links between nodes are slow") {
  const auto [g, m] = transformer(16, 4096, 2048);
  auto c = cluster(32, 8, 40, 150e12, 300e9, 5e9);
  search_space sp;
  sp.global_batch = 64;
  const auto r = search_layouts(g, m, c, sp);
  REQUIRE(r.feasible > 0);
  // Of the layouts with tensor parallelism, the best keeps it in a node,
  // and the best across nodes is slower by far.
  const layout_candidate* inside = nullptr;
  const layout_candidate* across = nullptr;
  for (std::size_t i = 0; i < r.feasible; ++i) {
    const auto& x = r.candidates[i];
    if (x.at.tensor > 1 && x.at.tensor <= 8 && inside == nullptr) {
      inside = &x;
    }
    if (x.at.tensor > 8 && across == nullptr) {
      across = &x;
    }
  }
  REQUIRE(inside != nullptr);
  REQUIRE(across != nullptr);
  CHECK(inside < across); // ranked before
  CHECK(across->step_time > 2 * inside->step_time);
  // With links between nodes as fast as inside one, that gap closes.
  c.inter_node_bandwidth = c.intra_node_bandwidth;
  const auto fast = search_layouts(g, m, c, sp);
  for (std::size_t i = 0; i < fast.feasible; ++i) {
    if (fast.candidates[i].at == across->at) {
      CHECK(fast.candidates[i].step_time < across->step_time / 2);
    }
  }
}

TEST_CASE("sanity: with memory to spare and a large batch, pure data parallelism wins") {
  // On one node: the data-parallel all-reduce, which the model does not
  // overlap with the backward, is then cheap (docs/plan.md).
  const auto [g, m] = transformer(8, 1024, 512);
  const auto c = cluster(8, 8, 80, 150e12, 300e9, 25e9);
  search_space sp;
  sp.global_batch = 1024;
  sp.max_micro_batch_size = 8;
  const auto r = search_layouts(g, m, c, sp);
  REQUIRE(r.feasible > 0);
  const auto& best = r.candidates.front().at;
  CHECK(best.pipeline == 1);
  CHECK(best.tensor == 1);
  CHECK(best.data == 8);
}

TEST_CASE("sanity: at a fixed memory cap, a larger model moves to ZeRO-3 or deeper pipelines") {
  const auto c = cluster(8, 8, 16, 100e12, 100e9, 100e9);
  search_space sp;
  sp.global_batch = 64;
  sp.max_micro_batch_size = 4;
  sp.schedules = {schedule_kind::one_f_one_b};
  const auto small = transformer(4, 1024, 512);
  const auto large = transformer(24, 4096, 512);
  const auto a = search_layouts(small.first, small.second, c, sp);
  const auto b = search_layouts(large.first, large.second, c, sp);
  REQUIRE(a.feasible > 0);
  REQUIRE(b.feasible > 0);
  const auto& s = a.candidates.front().at;
  const auto& l = b.candidates.front().at;
  CHECK(s.pipeline == 1);
  CHECK(s.tensor == 1);
  CHECK(s.zero < 3);
  CHECK((l.zero == 3 || l.pipeline > 1 || l.tensor > 1));
  // Its states alone, about 16 bytes a parameter of 4.8e9, fit only sharded.
  CHECK(l.pipeline * l.tensor * (l.zero >= 1 ? l.data : 1) > 1);
}

TEST_CASE("search refuses what it cannot cost") {
  const auto [g, m] = transformer(2, 64, 8);
  cluster_spec c;
  c.devices = 0;
  c.device_memory = 1 << 30;
  CHECK_THROWS_AS(search_layouts(g, m, c, {}), shardpoint::bad_parameter_error);
  c.devices = 2;
  c.device_memory = 0;
  CHECK_THROWS_AS(search_layouts(g, m, c, {}), shardpoint::bad_parameter_error);
  c.device_memory = 1 << 30;
  search_space sp;
  sp.global_batch = 0;
  CHECK_THROWS_AS(search_layouts(g, m, c, sp), shardpoint::bad_parameter_error);
  auto bad = m;
  bad.vertices[0].weights = {7};
  CHECK_THROWS_AS(search_layouts(g, bad, c, {}), shardpoint::bad_parameter_error);
  // Batch 3 on 2 devices: dp = 2 cannot divide it, listed with the reason.
  sp.global_batch = 3;
  const auto r = search_layouts(g, m, c, sp);
  bool found = false;
  for (const auto& x : r.candidates) {
    if (x.at.data == 2) {
      CHECK(!x.feasible);
      CHECK(std::string(x.refused_by) == "batch");
      CHECK(x.reason == "the data-parallel degree 2 does not divide the global batch 3");
      found = true;
    }
  }
  CHECK(found);
}
