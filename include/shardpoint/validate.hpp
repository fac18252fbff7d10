// shardpoint/validate.hpp -- checks a sharding against what a pipelined
// compile (Graphcore PopART/PopRT) accepts.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// The rules on devices and stages alone are in pipeline_rules.hpp (shared
// with the runtime's make_plan); the two that need the edges are here:
//   (c) an edge into an earlier stage, grouped by stage pair with an example;
//   (f) a warning for a graph input whose consumers run on several devices
//       (its data is copied to each). Which vertices are inputs is the
//       caller's to say (`graph_inputs(map)`): on a plain graph a vertex
//       without predecessors is an operation like any other, and an ordinary
//       cut after it is no copy.
#ifndef SHARDPOINT_VALIDATE_HPP
#define SHARDPOINT_VALIDATE_HPP

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "error.hpp"
#include "graph_access.hpp"
#include "pipeline_rules.hpp"
#include "sharding_result.hpp"
#include "topological_order.hpp"

namespace shardpoint {

/// Marks which vertices are the graph's inputs, for rule (f): wraps a
/// readable property map from vertex to bool.
template <class M>
struct graph_inputs_t {
  M map;
};

/// `validate(g, r, options, graph_inputs(is_input))`: rule (f) then warns
/// when a vertex with `get(is_input, v)` true feeds several devices.
template <class M>
graph_inputs_t<M> graph_inputs(M map) {
  return {std::move(map)};
}

namespace detail {

struct no_inputs {};

template <class Ref, class Inputs>
class validator {
public:
  validator(const Ref& g, const sharding_result& r, const pipeline_options& opt,
            const Inputs& inputs)
      : g_(g), r_(r), opt_(opt), inputs_(inputs) {
    if (r.size() != g.size()) {
      std::string msg = "shardpoint: validate() given a sharding of ";
      msg.append(std::to_string(r.size())).append(" vertices for a graph of ");
      msg.append(std::to_string(g.size()));
      throw size_mismatch_error(msg);
    }
  }

  std::vector<diagnostic> run() {
    // No sharding of a graph with a cycle is valid (nor is the graph a
    // model): refused as manual_shard and balanced_shard refuse it.
    if (!is_index_order_topological(g_)) {
      (void)kahn_order(
          g_, indegrees(g_), [](std::size_t) { return false; }, [](std::size_t) {});
    }
    const auto describe = [&](std::size_t i) { return g_.describe(i); };
    rules::stage_devices(r_, describe, out_);
    rules::stage_numbering(r_, out_);
    backward_edges();
    inputs_on_several_devices();
    rules::device_count(r_, opt_, out_);
    rules::pipelining_prerequisites(r_, opt_, describe, out_);
    rules::batches_per_step(r_, opt_, out_);
    std::stable_sort(out_.begin(), out_.end(), [](const diagnostic& a, const diagnostic& b) {
      return a.severity == severity::error && b.severity == severity::warning;
    });
    return std::move(out_);
  }

private:
  // (c): one pass over the edges.
  void backward_edges() {
    if (!r_.has_stages()) {
      return;
    }
    struct backward {
      std::size_t count = 0;
      std::size_t producer = 0;
      std::size_t consumer = 0;
    };
    std::map<std::pair<int, int>, backward> back; // (producer stage, consumer stage)
    for (std::size_t u = 0; u < g_.size(); ++u) {
      const auto su = r_.stage(u);
      if (!su) {
        continue;
      }
      g_.for_each_successor(u, [&](std::size_t v) {
        const auto sv = r_.stage(v);
        if (sv && *sv < *su) {
          auto [it, fresh] = back.try_emplace({*su, *sv}, backward{0, u, v});
          ++it->second.count;
        }
      });
    }
    for (const auto& [stages, b] : back) {
      std::string msg = std::to_string(b.count);
      msg.append(" edge(s) go from stage ").append(std::to_string(stages.first));
      msg.append(" back to stage ").append(std::to_string(stages.second)).append(", e.g. ");
      msg.append(g_.describe(b.producer)).append(" -> ").append(g_.describe(b.consumer));
      msg.append("; forward layers must be in increasing stage order");
      out_.push_back(
          {severity::error, rule::backward_edge, std::move(msg), {b.producer, b.consumer}});
    }
  }

  // (f): the marked inputs whose consumers run on several devices.
  void inputs_on_several_devices() {
    if constexpr (!std::is_same_v<Inputs, no_inputs>) {
      if (!r_.has_devices()) {
        return;
      }
      for (std::size_t u = 0; u < g_.size(); ++u) {
        if (!static_cast<bool>(g_.read(inputs_.map, u))) {
          continue;
        }
        std::set<int> devices; // where its data has to be sent
        g_.for_each_successor(u, [&](std::size_t v) {
          if (const auto d = r_.device(v)) {
            devices.insert(*d);
          }
        });
        if (devices.size() > 1) {
          out_.push_back(
              rules::input_on_several_devices("graph input " + g_.describe(u), devices, {u}));
        }
      }
    }
  }

  const Ref& g_;
  const sharding_result& r_;
  const pipeline_options& opt_;
  const Inputs& inputs_;
  std::vector<diagnostic> out_;
};

template <class G, class Inputs>
std::vector<diagnostic> validate_impl(const G& g, const sharding_result& result,
                                      const pipeline_options& options, const Inputs& inputs) {
  if constexpr (!accessible<G>) {
    require_graph<G>();
    return {};
  } else {
    const auto ref = access(g);
    return validator<decltype(ref), Inputs>(ref, result, options, inputs).run();
  }
}

} // namespace detail

/// Every problem a pipelined compile would have with `result` on `g`, errors
/// first, then warnings; empty when there is none. See `rule` for the list.
/// `g` is a graph with an internal vertex index or `indexed(g, index_map[,
/// name_map])` (then messages name vertices). Rule (f) needs the inputs
/// marked: see the overload below. Complexity O(V + E + S log S) for S
/// stages. Throws `size_mismatch_error` when `result` has not
/// num_vertices(g) vertices, and `cycle_error` (naming a vertex on it) when
/// g has a cycle.
template <vertex_list_graph G>
std::vector<diagnostic> validate(const G& g, const sharding_result& result,
                                 const pipeline_options& options = {}) {
  return detail::validate_impl(g, result, options, detail::no_inputs{});
}

/// As above, with rule (f) on the vertices `inputs` marks.
template <vertex_list_graph G, class M>
std::vector<diagnostic> validate(const G& g, const sharding_result& result,
                                 const pipeline_options& options, const graph_inputs_t<M>& inputs) {
  static_assert(vertex_predicate_map<M, G>,
                "shardpoint: graph_inputs() takes a readable property map from vertex to bool");
  return detail::validate_impl(g, result, options, inputs);
}

/// The positional form: `validate(indexed(g, index), result, options)`.
template <sharding_graph G, vertex_index_map<G> Index>
std::vector<diagnostic> validate(const G& g, const sharding_result& result,
                                 const pipeline_options& options, Index index) {
  return validate(indexed(g, std::move(index)), result, options);
}

/// The positional form: `validate(indexed(g, index, names), result, options)`.
template <sharding_graph G, vertex_index_map<G> Index, vertex_name_map<G> Names>
std::vector<diagnostic> validate(const G& g, const sharding_result& result,
                                 const pipeline_options& options, Index index, const Names& names) {
  return validate(indexed(g, std::move(index), names), result, options);
}

/// Whether any diagnostic is an error (warnings alone pass).
[[nodiscard]] inline bool has_errors(const std::vector<diagnostic>& diagnostics) noexcept {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const diagnostic& d) { return d.severity == severity::error; });
}

/// The first error among `diagnostics`, or nullptr when there is none.
[[nodiscard]] inline const diagnostic*
first_error(const std::vector<diagnostic>& diagnostics) noexcept {
  const auto at = std::find_if(diagnostics.begin(), diagnostics.end(),
                               [](const diagnostic& d) { return d.severity == severity::error; });
  return at == diagnostics.end() ? nullptr : &*at;
}

} // namespace shardpoint

#endif // SHARDPOINT_VALIDATE_HPP
