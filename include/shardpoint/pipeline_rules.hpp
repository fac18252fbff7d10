// shardpoint/pipeline_rules.hpp -- the rules a pipelined compile (Graphcore
// PopART/PopRT) sets for a sharding, written once. `validate` reports every
// rule broken; the runtime's `make_plan` throws the first.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// The rules that look only at each vertex's device and stage live here; the
// two that look at edges -- (c) backward edges and (f) inputs copied to
// several devices -- are in validate.hpp. Every check appends diagnostics to a
// vector in rule order and names vertices through a `describe(i)` callable.
#ifndef SHARDPOINT_PIPELINE_RULES_HPP
#define SHARDPOINT_PIPELINE_RULES_HPP

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sharding_result.hpp"

namespace shardpoint {

/// What messages call the options, so that a command line can say
/// "--num-ipus is 2" where the library says "num_devices is 2".
struct option_spelling {
  std::string_view num_devices = "num_devices";
  std::string_view batches_per_step = "batches_per_step";
};

/// How the sharded graph is to be run.
struct pipeline_options {
  /// Devices available (PopRT's num_ipus); unchecked when empty.
  std::optional<int> num_devices = std::nullopt;
  /// Whether the stages run as a pipeline (PopRT's enable_pipelining).
  bool enable_pipelining = false;
  /// Micro-batches per step; with pipelining a positive multiple of the
  /// number of stages.
  int batches_per_step = 1;
  /// Whether batches_per_step is only the default, not given: rule (e)'s
  /// message then says so ("is not given (1)") rather than that it "is 1".
  bool batches_per_step_defaulted = false;
  /// The names messages give the two options above.
  option_spelling spelling = {};
};

enum class severity { warning, error };

enum class rule {
  stage_on_several_devices, ///< (a) vertices of one stage on more than one device
  stage_numbering,          ///< (b) stages not numbered 0..N-1 without gaps
  backward_edge,            ///< (c) a consumer in an earlier stage than its producer
  too_many_devices,         ///< (d) more devices used than num_devices
  batches_per_step,         ///< (e) batches_per_step not a positive multiple of the stages
  input_on_several_devices, ///< (f) a graph input whose consumers are on several devices (warning)
  pipelining_needs_sharding ///< pipelining without stages, or vertices without device or stage
};

[[nodiscard]] constexpr std::string_view to_string(severity s) noexcept {
  return s == severity::error ? "error" : "warning";
}

/// The rules' names, as reports and messages give them.
inline constexpr detail::enum_names<rule, 7> rule_names{
    {"stage-on-several-devices", "stage-numbering", "backward-edge", "too-many-devices",
     "batches-per-step", "input-on-several-devices", "pipelining-needs-sharding"}};

[[nodiscard]] constexpr std::string_view to_string(rule r) noexcept {
  return rule_names(r);
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

namespace rules {

// (Messages are built with append, never `"literal" + std::to_string(...)`:
// g++ 12 at -O3 warns falsely (-Wrestrict, GCC bug 105329) on that pattern
// in users' Release builds.)

/// (a) every stage on one device: per stage, the first vertex on each device.
template <class Describe>
void stage_devices(const sharding_result& r, const Describe& describe,
                   std::vector<diagnostic>& out) {
  if (!r.has_stages() || !r.has_devices()) {
    return;
  }
  std::map<int, std::map<int, std::size_t>> first; // stage -> device -> vertex
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto s = r.stage(i);
    const auto d = r.device(i);
    if (s && d) {
      first[*s].try_emplace(*d, i);
    }
  }
  for (const auto& [stage, devices] : first) {
    if (devices.size() < 2) {
      continue;
    }
    std::string msg = "stage ";
    msg.append(std::to_string(stage)).append(" is split over devices");
    std::vector<std::size_t> involved;
    for (const auto& [device, vertex] : devices) {
      msg.append(involved.empty() ? " " : ", ").append(std::to_string(device)).append(" (");
      msg.append(describe(vertex));
      msg.append(")");
      involved.push_back(vertex);
    }
    msg.append("; a pipeline stage must run on one device");
    out.push_back(
        {severity::error, rule::stage_on_several_devices, std::move(msg), std::move(involved)});
  }
}

/// (b) stages numbered 0..N-1 without gaps.
inline void stage_numbering(const sharding_result& r, std::vector<diagnostic>& out) {
  if (!r.has_stages()) {
    return;
  }
  std::vector<bool> used(static_cast<std::size_t>(r.num_stages()), false);
  for (int s : r.stages()) {
    if (s != sharding_result::unset) {
      used[static_cast<std::size_t>(s)] = true;
    }
  }
  std::string missing;
  std::size_t count = 0;
  for (std::size_t s = 0; s < used.size(); ++s) {
    if (!used[s]) {
      if (count < 16) {
        missing.append(count ? ", " : "").append(std::to_string(s));
      }
      ++count;
    }
  }
  if (count > 0) {
    std::string msg = "stages must be numbered 0..";
    msg.append(std::to_string(r.num_stages() - 1)).append(" without gaps, but ");
    msg.append(std::to_string(count)).append(" (").append(missing);
    msg.append(count > 16 ? ", ..." : "").append(") have no vertex");
    out.push_back({severity::error, rule::stage_numbering, std::move(msg), {}});
  }
}

/// (d) no more devices than available.
inline void device_count(const sharding_result& r, const pipeline_options& opt,
                         std::vector<diagnostic>& out) {
  if (opt.num_devices && r.num_devices() > *opt.num_devices) {
    std::string msg = "the sharding uses devices 0..";
    msg.append(std::to_string(r.num_devices() - 1)).append(" (");
    msg.append(std::to_string(r.num_devices())).append(") but ");
    msg.append(opt.spelling.num_devices).append(" is ").append(std::to_string(*opt.num_devices));
    out.push_back({severity::error, rule::too_many_devices, std::move(msg), {}});
  }
}

/// What pipelining needs besides (e): stages, and every vertex on a device
/// and in a stage. Nothing when pipelining is off.
template <class Describe>
void pipelining_prerequisites(const sharding_result& r, const pipeline_options& opt,
                              const Describe& describe, std::vector<diagnostic>& out) {
  if (!opt.enable_pipelining) {
    return;
  }
  if (!r.has_stages()) {
    out.push_back({severity::error,
                   rule::pipelining_needs_sharding,
                   "pipelining is enabled but no vertex has a pipeline stage",
                   {}});
    return;
  }
  const auto lacking = [&](auto has, const char* what) {
    std::size_t count = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (!has(i)) {
        first = count == 0 ? i : first;
        ++count;
      }
    }
    if (count > 0) {
      std::string msg = "pipelining needs every vertex ";
      msg.append(what).append(", but ").append(std::to_string(count));
      msg.append(" vertex(es) have none, e.g. ").append(describe(first));
      out.push_back({severity::error, rule::pipelining_needs_sharding, std::move(msg), {first}});
    }
  };
  lacking([&](std::size_t i) { return r.device(i).has_value(); }, "on a device");
  lacking([&](std::size_t i) { return r.stage(i).has_value(); }, "in a stage");
}

/// (e) with pipelining, batches_per_step a positive multiple of the number
/// of stages. Nothing when pipelining is off or no vertex has a stage.
inline void batches_per_step(const sharding_result& r, const pipeline_options& opt,
                             std::vector<diagnostic>& out) {
  if (!opt.enable_pipelining || !r.has_stages()) {
    return;
  }
  const int stages = r.num_stages();
  if (opt.batches_per_step <= 0 || opt.batches_per_step % stages != 0) {
    std::string msg(opt.spelling.batches_per_step);
    msg.append(opt.batches_per_step_defaulted ? " is not given (its default is " : " is ")
        .append(std::to_string(opt.batches_per_step))
        .append(opt.batches_per_step_defaulted ? ")" : "");
    msg.append(" but must be a positive multiple of the number of stages (");
    msg.append(std::to_string(stages)).append(")");
    out.push_back({severity::error, rule::batches_per_step, std::move(msg), {}});
  }
}

/// (f) the warning for an input (`what`: "graph input vertex 3", "initializer
/// 'w'", ...) whose consumers run on `devices` (two or more).
inline diagnostic input_on_several_devices(std::string_view what, const std::set<int>& devices,
                                           std::vector<std::size_t> vertices) {
  std::string msg(what);
  msg.append(" feeds devices ");
  bool first = true;
  for (int d : devices) {
    msg.append(first ? "" : ", ").append(std::to_string(d));
    first = false;
  }
  msg.append("; its data is copied to each of them");
  return {severity::warning, rule::input_on_several_devices, std::move(msg), std::move(vertices)};
}

/// Every rule above that a pipelined run needs, in the order a run meets
/// them: the prerequisites of pipelining first (nothing else can be checked
/// without them), then (a), (b), (e), (d). `enable_pipelining` is taken as
/// set.
template <class Describe>
std::vector<diagnostic> for_pipelined_run(const sharding_result& r, pipeline_options opt,
                                          const Describe& describe) {
  opt.enable_pipelining = true;
  std::vector<diagnostic> out;
  pipelining_prerequisites(r, opt, describe, out);
  if (!out.empty()) {
    return out;
  }
  stage_devices(r, describe, out);
  stage_numbering(r, out);
  batches_per_step(r, opt, out);
  device_count(r, opt, out);
  return out;
}

} // namespace rules
} // namespace shardpoint

#endif // SHARDPOINT_PIPELINE_RULES_HPP
