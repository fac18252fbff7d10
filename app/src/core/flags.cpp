// The format-neutral parts of requests: points, the pipelining checks, the
// memory planner's options, whole numbers.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <shardpoint/app/flags.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::app {

std::vector<config::entry> points::read() const {
  std::vector<config::entry> out;
  if (!config.empty()) {
    out = config::read_file(config);
  }
  for (const auto& flag : shard_flags) {
    out.push_back(config::parse_shard_flag(flag));
  }
  out.insert(out.end(), entries.begin(), entries.end());
  return out;
}

pipeline_options pipeline_flags::options(const sharding_result& r) const {
  pipeline_options o;
  o.num_devices = num_ipus;
  o.enable_pipelining =
      pipelining || (batches_enable_pipelining && batches_per_step.has_value() && r.has_stages());
  o.batches_per_step = batches_per_step.value_or(1);
  o.spelling = flag_spelling;
  return o;
}

std::int64_t parse_count(const std::string& flag, const std::string& text) {
  // Decimal digits, a sign, a point and an exponent only: the C library
  // would also read " 4" (leading blanks), "0x10" and "inf".
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos) {
    throw bad_parameter_error(flag + " " + io::quote(text) +
                              " is not a whole number (e.g. 8, 1e6)");
  }
  std::size_t used = 0;
  try { // digits exactly, then 1e6 and the like
    const long long whole = std::stoll(text, &used, 10);
    if (used == text.size()) {
      return whole;
    }
  } catch (const std::exception&) {
  }
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == text.size() && !text.empty() && std::isfinite(value) && value == std::floor(value) &&
      !(std::abs(value) < 4.6e18)) {
    throw bad_parameter_error(flag + " " + io::quote(text) + " is too large (at most 4.6e18)");
  }
  if (used != text.size() || text.empty() || !(std::abs(value) < 4.6e18) ||
      value != std::floor(value)) {
    throw bad_parameter_error(flag + " " + io::quote(text) +
                              " is not a whole number (e.g. 8, 1e6)");
  }
  return static_cast<std::int64_t>(value);
}

parallel_config memory_flags::config() const {
  // The command line checks the choices as it parses (CLI11); these checks
  // are for every other caller (the Python bindings).
  for (const auto& o : memory_plan_options) {
    const std::string* value = o.text != nullptr ? &(this->*o.text) : nullptr;
    if (value == nullptr || o.choices.empty() || value->empty()) {
      continue; // free text, or the default
    }
    std::string list;
    bool known = false;
    for (const auto& choice : choices_of(o)) {
      known = known || *value == choice;
      list.append(list.empty() ? "" : ", ").append(choice);
    }
    if (!known) {
      throw bad_parameter_error(std::string(o.flag) + " " + io::quote(*value) + " is not one of " +
                                list);
    }
  }
  parallel_config c;
  c.training = !inference;
  if (inference && (!optimizer.empty() || !precision.empty() || fp16 || bf16)) {
    throw usage_error("--optimizer, --precision, --fp16 and --bf16 describe training; drop them "
                      "or --inference");
  }
  c.optimizer = optimizer == "sgd"    ? optimizer_kind::sgd
                : optimizer == "none" ? optimizer_kind::none
                                      : optimizer_kind::adam;
  // SageMaker's two flags, and --precision on top: asking for both 16-bit
  // types is the planner's fp16-or-bf16 rule.
  c.fp16 = fp16 || precision == "fp16";
  c.bf16 = bf16 || precision == "bf16";
  if (precision == "fp32" && (fp16 || bf16)) {
    throw usage_error(std::string("--precision fp32 contradicts --") + (fp16 ? "fp16" : "bf16"));
  }
  if (precision.empty() && !fp16 && !bf16) {
    c.fp16 = true; // the default: the ZeRO paper's mixed precision
  }
  c.tensor_parallel = parse_count("--tensor-parallel", tensor_parallel);
  c.data_parallel = parse_count("--data-parallel", data_parallel);
  c.sharded_data_parallel =
      automatic() ? 1 : parse_count("--sharded-data-parallel", sharded_data_parallel);
  c.shard_optimizer_states = shard_optimizer_states;
  c.param_persistence_threshold =
      parse_count("--param-persistence-threshold", persistence_threshold);
  c.max_live_parameters = parse_count("--max-live-parameters", max_live_parameters);
  c.micro_batch_size = parse_count("--micro-batch-size", micro_batch_size);
  c.micro_batches = parse_count("--batches-per-step", batches_per_step);
  c.schedule = schedule == "1f1b" ? pipeline_schedule::one_f_one_b : pipeline_schedule::gpipe;
  c.queue_depth = parse_count("--queue-depth", queue_depth);
  return c;
}

} // namespace shardpoint::app
