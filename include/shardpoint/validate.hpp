// shardpoint/validate.hpp -- checks a sharding against what a pipelined
// compile (Graphcore PopART/PopRT) accepts.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_VALIDATE_HPP
#define SHARDPOINT_VALIDATE_HPP

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/describe.hpp"
#include "detail/index_vertices.hpp"
#include "error.hpp"
#include "sharding_result.hpp"

namespace shardpoint {

/// How the sharded graph is to be run.
struct pipeline_options {
  /// Devices available (PopRT's num_ipus); unchecked when empty.
  std::optional<int> num_devices = std::nullopt;
  /// Whether the stages run as a pipeline (PopRT's enable_pipelining).
  bool enable_pipelining = false;
  /// Micro-batches per step; with pipelining a positive multiple of the
  /// number of stages.
  int batches_per_step = 1;
};

enum class severity { warning, error };

enum class rule {
  stage_on_several_devices, ///< (a) vertices of one stage on more than one device
  stage_numbering,          ///< (b) stages not numbered 0..N-1 without gaps
  backward_edge,            ///< (c) a consumer in an earlier stage than its producer
  too_many_devices,         ///< (d) more devices used than num_devices
  batches_per_step,         ///< (e) batches_per_step not a positive multiple of the stages
  input_on_several_devices, ///< (f) a graph input whose consumers are on several devices (warning)
  pipelining_needs_sharding ///< pipelining without stages, or stages without devices
};

[[nodiscard]] constexpr std::string_view to_string(severity s) noexcept {
  return s == severity::error ? "error" : "warning";
}

[[nodiscard]] constexpr std::string_view to_string(rule r) noexcept {
  switch (r) {
  case rule::stage_on_several_devices:
    return "stage-on-several-devices";
  case rule::stage_numbering:
    return "stage-numbering";
  case rule::backward_edge:
    return "backward-edge";
  case rule::too_many_devices:
    return "too-many-devices";
  case rule::batches_per_step:
    return "batches-per-step";
  case rule::input_on_several_devices:
    return "input-on-several-devices";
  case rule::pipelining_needs_sharding:
    return "pipelining-needs-sharding";
  }
  return "unknown";
}

/// One problem found by `validate`.
struct diagnostic {
  shardpoint::severity severity;
  shardpoint::rule rule;
  std::string message;
  /// Indices of the vertices involved (a representative few for rules that
  /// concern many: the message gives the count).
  std::vector<std::size_t> vertices;

  friend bool operator==(const diagnostic&, const diagnostic&) = default;
};

namespace detail {

template <class G, class Index, class Names>
class validator {
  using V = vertex_t<G>;

public:
  validator(const G& g, const sharding_result& r, const pipeline_options& opt, Index index,
            const Names& names)
      : g_(g), r_(r), opt_(opt), index_(index), names_(names), n_(num_vertices(g)) {
    if (r.size() != n_) {
      throw size_mismatch_error("shardpoint: validate() given a sharding of " +
                                std::to_string(r.size()) + " vertices for a graph of " +
                                std::to_string(n_));
    }
    by_index_ = index_vertices(g_, index_);
  }

  std::vector<diagnostic> run() {
    stage_devices();
    stage_numbering();
    edges();
    device_count();
    pipelining();
    std::stable_sort(out_.begin(), out_.end(), [](const diagnostic& a, const diagnostic& b) {
      return a.severity == severity::error && b.severity == severity::warning;
    });
    return std::move(out_);
  }

private:
  std::string name(std::size_t i) const { return describe(i, by_index_[i], names_); }

  void add(severity s, rule r, std::string message, std::vector<std::size_t> vertices) {
    out_.push_back({s, r, std::move(message), std::move(vertices)});
  }

  // (a): per stage, the first vertex seen on each device.
  void stage_devices() {
    if (!r_.has_stages() || !r_.has_devices()) {
      return;
    }
    std::map<int, std::map<int, std::size_t>> first; // stage -> device -> vertex
    for (std::size_t i = 0; i < n_; ++i) {
      const auto s = r_.stage(i);
      const auto d = r_.device(i);
      if (s && d) {
        first[*s].try_emplace(*d, i);
      }
    }
    for (const auto& [stage, devices] : first) {
      if (devices.size() < 2) {
        continue;
      }
      std::string msg = "stage " + std::to_string(stage) + " is split over devices";
      std::vector<std::size_t> involved;
      for (const auto& [device, vertex] : devices) {
        msg += " " + std::to_string(device) + " (" + name(vertex) + ")";
        involved.push_back(vertex);
      }
      msg += "; a pipeline stage must run on one device";
      add(severity::error, rule::stage_on_several_devices, std::move(msg), std::move(involved));
    }
  }

  // (b)
  void stage_numbering() {
    if (!r_.has_stages()) {
      return;
    }
    std::vector<bool> used(static_cast<std::size_t>(r_.num_stages()), false);
    for (int s : r_.stages()) {
      if (s != sharding_result::unset) {
        used[static_cast<std::size_t>(s)] = true;
      }
    }
    std::string missing;
    std::size_t count = 0;
    for (std::size_t s = 0; s < used.size(); ++s) {
      if (!used[s]) {
        if (count < 16) {
          missing += (count ? ", " : "") + std::to_string(s);
        }
        ++count;
      }
    }
    if (count > 0) {
      add(severity::error, rule::stage_numbering,
          "stages must be numbered 0.." + std::to_string(r_.num_stages() - 1) +
              " without gaps, but " + std::to_string(count) + " (" + missing +
              (count > 16 ? ", ..." : "") + ") have no vertex",
          {});
    }
  }

  // (c) and (f): one pass over the edges.
  void edges() {
    struct backward {
      std::size_t count = 0;
      std::size_t producer = 0;
      std::size_t consumer = 0;
    };
    std::map<std::pair<int, int>, backward> back; // (producer stage, consumer stage)
    std::vector<bool> has_pred(n_, false);
    for (std::size_t u = 0; u < n_; ++u) {
      auto [ei, eend] = out_edges(by_index_[u], g_);
      for (; ei != eend; ++ei) {
        const auto v = static_cast<std::size_t>(get(index_, target(*ei, g_)));
        has_pred[v] = true;
        const auto su = r_.stage(u);
        const auto sv = r_.stage(v);
        if (su && sv && *sv < *su) {
          auto [it, fresh] = back.try_emplace({*su, *sv}, backward{0, u, v});
          ++it->second.count;
        }
      }
    }
    for (const auto& [stages, b] : back) {
      add(severity::error, rule::backward_edge,
          std::to_string(b.count) + " edge(s) go from stage " + std::to_string(stages.first) +
              " back to stage " + std::to_string(stages.second) + ", e.g. " + name(b.producer) +
              " -> " + name(b.consumer) + "; forward layers must be in increasing stage order",
          {b.producer, b.consumer});
    }
    if (!r_.has_devices()) {
      return;
    }
    for (std::size_t u = 0; u < n_; ++u) {
      if (has_pred[u]) {
        continue;
      }
      // The devices its consumers run on: where its data has to be sent.
      std::set<int> devices;
      auto [ei, eend] = out_edges(by_index_[u], g_);
      for (; ei != eend; ++ei) {
        if (const auto d = r_.device(static_cast<std::size_t>(get(index_, target(*ei, g_))))) {
          devices.insert(*d);
        }
      }
      if (devices.size() > 1) {
        std::string list;
        for (int d : devices) {
          list += (list.empty() ? "" : ", ") + std::to_string(d);
        }
        add(severity::warning, rule::input_on_several_devices,
            "graph input " + name(u) + " feeds devices " + list +
                "; its data is copied to each of them",
            {u});
      }
    }
  }

  // (d)
  void device_count() {
    if (opt_.num_devices && r_.num_devices() > *opt_.num_devices) {
      add(severity::error, rule::too_many_devices,
          "the sharding uses devices 0.." + std::to_string(r_.num_devices() - 1) + " (" +
              std::to_string(r_.num_devices()) + ") but num_devices is " +
              std::to_string(*opt_.num_devices),
          {});
    }
  }

  // (e) and the prerequisites of pipelining.
  void pipelining() {
    if (!opt_.enable_pipelining) {
      return;
    }
    if (!r_.has_stages()) {
      add(severity::error, rule::pipelining_needs_sharding,
          "pipelining is enabled but no vertex has a pipeline stage", {});
      return;
    }
    std::vector<std::size_t> no_device;
    std::size_t count = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (!r_.device(i)) {
        if (no_device.empty()) {
          no_device.push_back(i);
        }
        ++count;
      }
    }
    if (count > 0) {
      std::string msg = "pipelining needs every vertex on a device, but " + std::to_string(count) +
                        " vertex(es) have none, e.g. " + name(no_device.front());
      add(severity::error, rule::pipelining_needs_sharding, std::move(msg), std::move(no_device));
    }
    const int stages = r_.num_stages();
    if (opt_.batches_per_step <= 0 || opt_.batches_per_step % stages != 0) {
      add(severity::error, rule::batches_per_step,
          "batches_per_step is " + std::to_string(opt_.batches_per_step) +
              " but must be a positive multiple of the number of stages (" +
              std::to_string(stages) + ")",
          {});
    }
  }

  const G& g_;
  const sharding_result& r_;
  const pipeline_options& opt_;
  Index index_;
  const Names& names_;
  std::size_t n_;
  std::vector<V> by_index_;
  std::vector<diagnostic> out_;
};

} // namespace detail

/// Every problem a pipelined compile would have with `result` on `g`, errors
/// first, then warnings; empty when there is none. See `rule` for the list.
/// Complexity O(V + E + S log S) for S stages. Throws `size_mismatch_error`
/// when `result` has not num_vertices(g) vertices.
template <sharding_graph G, vertex_index_map<G> Index, vertex_name_map<G> Names>
std::vector<diagnostic> validate(const G& g, const sharding_result& result,
                                 const pipeline_options& options, Index index, const Names& names) {
  return detail::validator<G, Index, Names>(g, result, options, index, names).run();
}

template <sharding_graph G, vertex_index_map<G> Index>
std::vector<diagnostic> validate(const G& g, const sharding_result& result,
                                 const pipeline_options& options, Index index) {
  const no_names names;
  return detail::validator<G, Index, no_names>(g, result, options, index, names).run();
}

template <indexed_graph G>
requires sharding_graph<G> std::vector<diagnostic>
validate(const G& g, const sharding_result& result, const pipeline_options& options = {}) {
  return validate(g, result, options, get(boost::vertex_index, g));
}

/// Whether any diagnostic is an error (warnings alone pass).
[[nodiscard]] inline bool has_errors(const std::vector<diagnostic>& diagnostics) noexcept {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const diagnostic& d) { return d.severity == severity::error; });
}

} // namespace shardpoint

#endif // SHARDPOINT_VALIDATE_HPP
