// `shardpoint plan`'s report.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"
#include <shardpoint/io/detail/table.hpp>

#include <shardpoint/io/plan_report.hpp>
#include <shardpoint/io/units.hpp>

// A costed stage in JSON: each field under its own name (nlohmann's
// declaration, in runtime's namespace for argument-dependent lookup); the
// weight-gradient share is the request's, not a result.
namespace shardpoint::runtime {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(stage_cost, forward, backward, in_flight, parameter_bytes,
                                   gradient_bytes, optimizer_bytes, gathered_bytes,
                                   model_state_bytes, activation_bytes, total_bytes)
// A schedule by its name; a layout, a cluster and a candidate's figures
// likewise (the candidate's layout is merged in where it is written).
inline void to_json(nlohmann::json& j, schedule_kind k) {
  j = schedule_name(k);
}
inline void from_json(const nlohmann::json& j, schedule_kind& k) {
  k = schedule_named(j.get<std::string>());
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(layout, pipeline, tensor, data, zero, micro_batch_size,
                                   micro_batches, schedule, virtual_stages)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(cluster_spec, devices, devices_per_node, device_memory,
                                   device_flops, intra_node_bandwidth, inter_node_bandwidth)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(layout_candidate, step_time, makespan, sync_time, throughput,
                                   bubble, peak_memory, headroom, memory_capped, stages)
} // namespace shardpoint::runtime

namespace shardpoint::io {

namespace {

std::size_t listed(const plan_report& r) {
  return r.top_k ? std::min(*r.top_k, r.result.feasible) : r.result.feasible;
}

std::string layout_name(const runtime::layout& at) {
  return "pp" + std::to_string(at.pipeline) + " tp" + std::to_string(at.tensor) + " dp" +
         std::to_string(at.data) + (at.zero > 0 ? " zero" + std::to_string(at.zero) : "");
}

// Samples a second: whole from 100 up, four digits below (no exponent: a
// trial's read "2.299e-08").
std::string rate_text(double r) {
  return r < 100 ? human_number(r) : detail::whole_number(r);
}

} // namespace

std::string to_table(const plan_report& r) {
  std::ostringstream os;
  const auto& c = r.cluster;
  // Devices that are no whole number of nodes fill the last one in part
  // (a trial's 12 devices, 8 a node, were planned so unsaid).
  // and fewer than a node use part of one (said, not silently planned as a
  // node's worth).
  os << "plan for " << r.model << "\n  on " << c.devices
     << (c.devices == 1 ? " device (" : " devices (") << c.devices_per_node << " a node";
  if (c.devices > c.devices_per_node && c.devices % c.devices_per_node != 0) {
    os << ": " << c.devices / c.devices_per_node + 1 << " nodes, the last of "
       << c.devices % c.devices_per_node;
  } else if (c.devices < c.devices_per_node) {
    os << ": one node, " << c.devices << " of its " << c.devices_per_node;
  }
  os << "), " << human_bytes(static_cast<double>(c.device_memory)) << " and "
     << human_flops(c.device_flops) << " each; global batch " << r.space.global_batch << ", "
     << r.dtype << ", " << r.optimizer << "\n";
  const auto& all = r.result.candidates;
  os << all.size() << " layouts costed, " << r.result.feasible << " fit";
  if (r.result.feasible == 0) {
    os << ": none\n";
  } else {
    os << "; the best " << listed(r) << ":\n";
    // The columns widen to their widest figure (a trial's rate of 10^18
    // samples/s pushed its row out of line; detail::text_table).
    constexpr auto left = detail::text_table::side::left;
    detail::text_table layouts(
        {{4}, {22, left, "  "}, {14, left}, {5}, {6}, {12}, {12}, {7}, {12}, {12}});
    layouts.row({"rank", "layout", "schedule", "mb", "m", "step", "samples/s", "bubble", "peak",
                 "headroom"});
    char percent[32];
    for (std::size_t i = 0; i < listed(r); ++i) {
      const auto& x = all[i];
      std::snprintf(percent, sizeof percent, "%.1f%%", 100 * x.bubble);
      layouts.row({std::to_string(i + 1), layout_name(x.at),
                   std::string(runtime::schedule_name(x.at.schedule)) +
                       (x.at.virtual_stages > 1 ? " v" + std::to_string(x.at.virtual_stages) : ""),
                   std::to_string(x.at.micro_batch_size), std::to_string(x.at.micro_batches),
                   human_seconds(x.step_time), rate_text(x.throughput), percent,
                   human_bytes(static_cast<double>(x.peak_memory)),
                   human_bytes(static_cast<double>(x.headroom))});
    }
    os << layouts.text();
    const auto& best = all.front();
    os << "\nbest: " << layout_name(best.at) << ", " << runtime::schedule_name(best.at.schedule)
       << ", micro-batch " << best.at.micro_batch_size << " x " << best.at.micro_batches
       << ": step " << human_seconds(best.step_time) << " = pipeline "
       << human_seconds(best.makespan) << " + data-parallel sync " << human_seconds(best.sync_time)
       << "\n";
    // The time columns widen to their widest time, as the layouts' do.
    detail::text_table stages({{6}, {12}, {12}, {9}, {12}, {12}, {12}});
    stages.row({"stage", "forward", "backward", "in_flight", "states", "activations", "total"});
    for (std::size_t s = 0; s < best.stages.size(); ++s) {
      const auto& st = best.stages[s];
      stages.row({std::to_string(s), human_seconds(st.forward), human_seconds(st.backward),
                  std::to_string(st.in_flight),
                  human_bytes(static_cast<double>(st.model_state_bytes)),
                  human_bytes(static_cast<double>(st.activation_bytes)),
                  human_bytes(static_cast<double>(st.total_bytes))});
    }
    os << stages.text();
  }
  // Why the others were refused: a count and an example per rule -- for
  // memory the nearest miss, the layout needing the least.
  std::map<std::string, std::pair<std::size_t, const runtime::layout_candidate*>> reasons;
  for (std::size_t i = r.result.feasible; i < all.size(); ++i) {
    auto& [n, example] = reasons[all[i].refused_by];
    if (n++ == 0 ||
        (std::string(all[i].refused_by) == "memory" && all[i].peak_memory < example->peak_memory)) {
      example = &all[i];
    }
  }
  if (!reasons.empty()) {
    os << "\nrefused " << all.size() - r.result.feasible << " (--report json lists each):\n";
    for (const auto& [rule, seen] : reasons) {
      // The example in full (a trial read "pp2 tp1 dp4" refused beside a
      // ranked pp2 tp1 dp4 of another schedule), and bytes in units.
      const auto& x = *seen.second;
      // (A layout refused before its micro-batches were chosen has none.)
      os << "  " << seen.first << " by " << rule
         << (rule == "memory" ? ", the nearest " : ", e.g. ") << layout_name(x.at);
      if (x.at.micro_batch_size > 0) {
        os << " (" << runtime::schedule_name(x.at.schedule) << ", micro-batch "
           << x.at.micro_batch_size << " x " << x.at.micro_batches << ")";
      }
      os << ": ";
      if (rule == "memory") {
        os << "its fullest device holds " << human_bytes(static_cast<double>(x.peak_memory)) << " ("
           << x.peak_memory << " bytes), more than the "
           << human_bytes(static_cast<double>(r.cluster.device_memory)) << " it has\n";
      } else {
        os << x.reason << "\n";
      }
    }
  }
  os << detail::estimates_table(r.estimates);
  return os.str();
}

std::string to_json(const plan_report& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["cluster"] = r.cluster;
  j["global_batch"] = r.space.global_batch;
  j["dtype"] = r.dtype;
  j["optimizer"] = r.optimizer;
  j["costed"] = r.result.candidates.size();
  j["feasible"] = r.result.feasible;
  j["candidates"] = nlohmann::json::array();
  for (std::size_t i = 0; i < listed(r); ++i) {
    const auto& x = r.result.candidates[i];
    nlohmann::json e = x.at;
    e.update(nlohmann::json(x));
    j["candidates"].push_back(std::move(e));
  }
  j["infeasible"] = nlohmann::json::array();
  for (std::size_t i = r.result.feasible; i < r.result.candidates.size(); ++i) {
    const auto& x = r.result.candidates[i];
    nlohmann::json e = x.at;
    e["refused_by"] = x.refused_by;
    e["reason"] = x.reason;
    if (x.peak_memory > 0) {
      e["peak_memory"] = x.peak_memory;
    }
    j["infeasible"].push_back(std::move(e));
  }
  detail::add_estimates(j, r.estimates);
  return detail::document(std::move(j));
}

std::string memory_json(const plan_report& r) {
  if (r.result.feasible == 0) {
    return {};
  }
  const auto& best = r.result.candidates.front();
  nlohmann::json j;
  j["layout"] = best.at;
  j["device_memory"] = r.cluster.device_memory;
  j["devices"] = nlohmann::json::array();
  for (int g = 0; g < best.at.pipeline; ++g) {
    nlohmann::json d;
    d["pipeline_rank"] = g;
    d["stages"] = nlohmann::json::array();
    std::int64_t sums[6] = {0, 0, 0, 0, 0, 0};
    for (std::size_t s = static_cast<std::size_t>(g); s < best.stages.size();
         s += static_cast<std::size_t>(best.at.pipeline)) {
      const auto& st = best.stages[s];
      d["stages"].push_back(s);
      const std::int64_t parts[6] = {st.parameter_bytes, st.gradient_bytes,   st.optimizer_bytes,
                                     st.gathered_bytes,  st.activation_bytes, st.total_bytes};
      for (int k = 0; k < 6; ++k) {
        sums[k] += parts[k];
      }
    }
    d["parameter_bytes"] = sums[0];
    d["gradient_bytes"] = sums[1];
    d["optimizer_bytes"] = sums[2];
    d["gathered_bytes"] = sums[3];
    d["activation_bytes"] = sums[4];
    d["total_bytes"] = sums[5];
    d["headroom"] = r.cluster.device_memory - sums[5];
    j["devices"].push_back(std::move(d));
  }
  return detail::document(std::move(j));
}

} // namespace shardpoint::io
