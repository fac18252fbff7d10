// What `shardpoint memory` prints.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include <shardpoint/io/memory_report.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

namespace {

std::string describe(const parallel_config& c) {
  if (!c.training) {
    return "inference, weights in their stored types";
  }
  std::string out = "training, ";
  out += c.bf16 ? "mixed bf16" : c.fp16 ? "mixed fp16" : "fp32";
  out += c.optimizer == optimizer_kind::adam  ? ", Adam"
         : c.optimizer == optimizer_kind::sgd ? ", SGD"
                                              : ", no optimizer state";
  return out;
}

std::string range(std::int64_t count) {
  return count == 1 ? "0" : "0-" + std::to_string(count - 1);
}

std::int64_t missing(const memory_plan& p) {
  return p.capacity && p.largest_total_bytes > *p.capacity ? p.largest_total_bytes - *p.capacity
                                                           : 0;
}

} // namespace

std::string to_table(const memory_report& r) {
  const auto& c = r.config;
  std::string out = "memory plan: " + describe(c) + "\n";
  out += "devices: " + std::to_string(r.stages) + " stage(s) x " +
         std::to_string(c.tensor_parallel) + " tensor-parallel rank(s) x " +
         std::to_string(r.data_parallel_ranks) + " shard(s); data parallel " +
         std::to_string(c.data_parallel) + ", sharded data parallel " +
         std::to_string(r.plan.sharded_data_parallel) + (r.automatic ? " (auto)" : "") + "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-6s %-8s %-8s %12s %12s %12s %12s %12s %12s\n", "stage",
                "tp rank", "shard", "parameters", "gradients", "optimizer", "gathered",
                "activations", "total");
  out += line;
  const std::size_t per_stage = static_cast<std::size_t>(c.tensor_parallel * r.data_parallel_ranks);
  for (std::size_t i = 0; per_stage > 0 && i < r.plan.devices.size(); i += per_stage) {
    const auto& d = r.plan.devices[i];
    std::snprintf(line, sizeof line, "%-6d %-8s %-8s %12s %12s %12s %12s %12s %12s\n", d.stage,
                  range(c.tensor_parallel).c_str(), range(r.data_parallel_ranks).c_str(),
                  human_bytes(static_cast<double>(d.parameter_bytes)).c_str(),
                  human_bytes(static_cast<double>(d.gradient_bytes)).c_str(),
                  human_bytes(static_cast<double>(d.optimizer_state_bytes)).c_str(),
                  human_bytes(static_cast<double>(d.gathered_bytes)).c_str(),
                  human_bytes(static_cast<double>(d.activation_bytes)).c_str(),
                  human_bytes(static_cast<double>(d.total_bytes)).c_str());
    out += line;
  }
  out += "\nlargest device: " + human_bytes(static_cast<double>(r.plan.largest_total_bytes)) +
         " (" + std::to_string(r.plan.largest_total_bytes) + " bytes)";
  if (r.plan.capacity) {
    out += r.plan.fits ? "; fits in " : "; does not fit in ";
    out += human_bytes(static_cast<double>(*r.plan.capacity));
    if (!r.plan.fits) {
      out += " (" + human_bytes(static_cast<double>(missing(r.plan))) + " over)";
    }
  }
  out += r.estimates.empty() ? "\n" : " -- estimated\n";
  out += detail::estimates_table(r.estimates);
  if (r.zero_stages) {
    const auto& z = *r.zero_stages;
    out += "ZeRO stages (model states of the largest device): plain " +
           human_bytes(static_cast<double>(z.plain)) + ", optimizer states sharded " +
           human_bytes(static_cast<double>(z.optimizer_states)) + ", gradients too " +
           human_bytes(static_cast<double>(z.gradients)) + ", parameters too " +
           human_bytes(static_cast<double>(z.parameters)) + "\n";
  }
  for (const auto& n : r.notes) {
    out += "note: " + n + "\n";
  }
  return out;
}

std::string to_json(const memory_report& r) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : r.plan.devices) {
    devices.push_back({{"stage", d.stage},
                       {"tensor_parallel_rank", d.tensor_parallel_rank},
                       {"data_parallel_rank", d.data_parallel_rank},
                       {"parameter_bytes", d.parameter_bytes},
                       {"gradient_bytes", d.gradient_bytes},
                       {"optimizer_state_bytes", d.optimizer_state_bytes},
                       {"gathered_bytes", d.gathered_bytes},
                       {"activation_bytes", d.activation_bytes},
                       {"total_bytes", d.total_bytes}});
  }
  nlohmann::json j = {{"devices", std::move(devices)},
                      {"largest_total_bytes", r.plan.largest_total_bytes},
                      {"fits", nullptr},
                      {"capacity_bytes", nullptr},
                      {"missing_bytes", missing(r.plan)},
                      {"sharded_data_parallel", r.plan.sharded_data_parallel},
                      {"mode", r.config.training ? "training" : "inference"},
                      {"notes", r.notes}};
  detail::add_estimates(j, r.estimates);
  if (r.plan.capacity) {
    j["fits"] = r.plan.fits;
    j["capacity_bytes"] = *r.plan.capacity;
  }
  if (r.zero_stages) {
    j["zero_stages"] = {{"plain", r.zero_stages->plain},
                        {"optimizer_states", r.zero_stages->optimizer_states},
                        {"gradients", r.zero_stages->gradients},
                        {"parameters", r.zero_stages->parameters}};
  }
  return detail::document(std::move(j));
}

} // namespace shardpoint::io
