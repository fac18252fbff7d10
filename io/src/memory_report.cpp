// What `shardpoint memory` prints.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/memory_report.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::io {

namespace {

const char* schedule_name(pipeline_schedule s) {
  return s == pipeline_schedule::one_f_one_b ? "1f1b"
         : s == pipeline_schedule::zb_h1     ? "zb-h1"
                                             : "gpipe";
}

// The mode, and for training what the activations were counted under: the
// schedule and its micro-batches (the column's figures depend on both).
std::string describe(const parallel_config& c) {
  if (!c.training) {
    return "inference, weights in their stored types";
  }
  std::string out = "training, ";
  out += c.bf16 ? "mixed bf16" : c.fp16 ? "mixed fp16" : "fp32";
  out += c.optimizer == optimizer_kind::adam  ? ", Adam"
         : c.optimizer == optimizer_kind::sgd ? ", SGD"
                                              : ", no optimizer state";
  out += std::string(", ") + schedule_name(c.schedule) + " schedule, " +
         shardpoint::detail::counted(
             static_cast<std::size_t>(std::max<std::int64_t>(c.micro_batches, 0)), "micro-batch",
             "micro-batches");
  return out;
}

std::string range(std::int64_t count) {
  return count == 1 ? "0" : "0-" + std::to_string(count - 1);
}

std::string bytes(std::int64_t b) {
  return human_bytes(static_cast<double>(b));
}

std::int64_t sum(const std::vector<deepspeed_term>& terms, bool deepspeed) {
  std::int64_t out = 0;
  for (const auto& t : terms) {
    out += deepspeed ? t.deepspeed_bytes : t.shardpoint_bytes;
  }
  return out;
}

std::string offload_of(const deepspeed_row& row) {
  return row.offload_parameters  ? "optimizer+parameters"
         : row.offload_optimizer ? "optimizer"
                                 : "none";
}

std::string deepspeed_table(const deepspeed_comparison& d) {
  const auto& in = d.inputs;
  std::string out = "\nDeepSpeed's estimator (estimate_zero2/zero3_model_states_mem_needs): " +
                    std::to_string(in.total_params) + " parameters, largest layer " +
                    std::to_string(in.largest_layer_params) +
                    (d.largest_layer_assumed ? " (assumed: the whole model)" : "") + ", " +
                    std::to_string(in.num_gpus_per_node) + " GPU(s) a node on " +
                    std::to_string(in.num_nodes) + " node(s)\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-5s %-21s %-9s %14s %16s\n", "ZeRO", "offload", "zero_init",
                "per GPU", "per node (CPU)");
  out += line;
  for (const auto& row : d.rows) {
    std::snprintf(line, sizeof line, "  %-5d %-21s %-9s %14s %16s\n", row.zero_stage,
                  offload_of(row).c_str(),
                  row.zero_stage == 2 ? "-"
                  : row.zero_init     ? "yes"
                                      : "no",
                  bytes(row.estimate.gpu_bytes).c_str(), bytes(row.estimate.cpu_bytes).c_str());
    out += line;
  }
  out += "shardpoint against it, per GPU without offload:\n";
  for (const auto& [stage, terms] : {std::pair{2, &d.zero2}, std::pair{3, &d.zero3}}) {
    out += "  ZeRO-" + std::to_string(stage) + ": shardpoint " + bytes(sum(*terms, false)) +
           ", DeepSpeed " + bytes(sum(*terms, true)) + "\n";
    for (const auto& t : *terms) {
      out += "    " + std::string(t.term) + ": shardpoint " + bytes(t.shardpoint_bytes) +
             ", DeepSpeed " + bytes(t.deepspeed_bytes) + " -- " + t.why + "\n";
    }
  }
  return out;
}

nlohmann::json deepspeed_json(const deepspeed_comparison& d) {
  const auto& in = d.inputs;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : d.rows) {
    rows.push_back(
        {{"zero_stage", row.zero_stage},
         {"offload_optimizer", row.offload_optimizer},
         {"offload_parameters", row.offload_parameters},
         {"zero_init", row.zero_stage == 2 ? nlohmann::json() : nlohmann::json(row.zero_init)},
         {"gpu_bytes", row.estimate.gpu_bytes},
         {"cpu_bytes", row.estimate.cpu_bytes}});
  }
  const auto side = [](const std::vector<deepspeed_term>& terms) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& t : terms) {
      list.push_back({{"term", t.term},
                      {"shardpoint_bytes", t.shardpoint_bytes},
                      {"deepspeed_bytes", t.deepspeed_bytes},
                      {"why", t.why}});
    }
    return nlohmann::json{{"shardpoint_bytes", sum(terms, false)},
                          {"deepspeed_bytes", sum(terms, true)},
                          {"terms", std::move(list)}};
  };
  return {{"inputs",
           {{"total_params", in.total_params},
            {"largest_layer_params", in.largest_layer_params},
            {"largest_layer_assumed", d.largest_layer_assumed},
            {"num_gpus_per_node", in.num_gpus_per_node},
            {"num_nodes", in.num_nodes},
            {"additional_buffer_factor", in.additional_buffer_factor}}},
          {"rows", std::move(rows)},
          {"zero2", side(d.zero2)},
          {"zero3", side(d.zero3)}};
}

std::int64_t missing(const memory_plan& p) {
  return p.capacity && p.largest_total_bytes > *p.capacity ? p.largest_total_bytes - *p.capacity
                                                           : 0;
}

} // namespace

std::string to_table(const memory_report& r) {
  const auto& c = r.config;
  std::string out = "memory plan: " + describe(c) + "\n";
  out += "devices: " + std::to_string(r.stages) + " stage(s)" +
         (r.stage_devices > 0 ? " on " + std::to_string(r.stage_devices) + " device(s)" : "") +
         " x " + std::to_string(c.tensor_parallel) + " tensor-parallel rank(s) x " +
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
  if (r.deepspeed) {
    out += deepspeed_table(*r.deepspeed);
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
                       {"device", d.device >= 0 ? nlohmann::json(d.device) : nlohmann::json()},
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
                      {"missing_bytes", nullptr},
                      {"sharded_data_parallel", r.plan.sharded_data_parallel},
                      {"mode", r.config.training ? "training" : "inference"},
                      {"schedule", nullptr},
                      {"micro_batches", nullptr},
                      {"notes", r.notes}};
  detail::add_estimates(j, r.estimates);
  if (r.config.training) {
    j["schedule"] = schedule_name(r.config.schedule);
    j["micro_batches"] = r.config.micro_batches;
  }
  if (r.plan.capacity) { // (without one, nothing is missing or not: null, as fits)
    j["fits"] = r.plan.fits;
    j["capacity_bytes"] = *r.plan.capacity;
    j["missing_bytes"] = missing(r.plan);
  }
  if (r.zero_stages) {
    j["zero_stages"] = {{"plain", r.zero_stages->plain},
                        {"optimizer_states", r.zero_stages->optimizer_states},
                        {"gradients", r.zero_stages->gradients},
                        {"parameters", r.zero_stages->parameters}};
  }
  if (r.deepspeed) {
    j["deepspeed"] = deepspeed_json(*r.deepspeed);
  }
  return detail::document(std::move(j));
}

} // namespace shardpoint::io
